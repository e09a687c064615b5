// Which of these entity ids are already in the graph.
UNWIND $ids AS id
MATCH (e:Entity {id: id})
RETURN e.id AS id
