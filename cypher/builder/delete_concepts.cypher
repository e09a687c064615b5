// Concepts made by alignment that nothing links to any more (taxonomy concepts always stay).
UNWIND $ids AS id
MATCH (k:Concept {id: id})
WHERE k.source = 'extraction' AND NOT (k)--()
DELETE k
RETURN count(*) AS deleted
