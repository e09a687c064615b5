SHOW INDEXES YIELD name, type, owningConstraint
WHERE type <> 'LOOKUP' AND owningConstraint IS NULL
RETURN name
