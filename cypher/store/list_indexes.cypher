// The indexes of this knowledge base that no constraint owns, without its prefix ($kb_prefix).
SHOW INDEXES YIELD name, type, owningConstraint
WHERE type <> 'LOOKUP' AND owningConstraint IS NULL
  AND name STARTS WITH $kb_prefix AND NOT substring(name, size($kb_prefix)) CONTAINS '__'
RETURN substring(name, size($kb_prefix)) AS name
