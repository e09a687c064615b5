// The ids among $ids that no node with the label (template variable label) has: the writer checks
// the endpoints of the edges it is about to MATCH, so a missing one fails the transaction instead
// of dropping the row silently.
UNWIND $ids AS id
OPTIONAL MATCH (n:{{ label }} {id: id})
WITH id, n
WHERE n IS NULL
RETURN collect(id) AS missing
