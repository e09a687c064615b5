// The constraints of this knowledge base, without its prefix ($kb_prefix).
SHOW CONSTRAINTS YIELD name
WHERE name STARTS WITH $kb_prefix AND NOT substring(name, size($kb_prefix)) CONTAINS '__'
RETURN substring(name, size($kb_prefix)) AS name
