// Entity-resolution candidates: stored entities whose aliases contain a name (fulltext phrase
// query on alias_text; the caller checks the exact alias key and the type family).
UNWIND $rows AS row
CALL db.index.fulltext.queryNodes('entity_fulltext', row.query, {limit: 5}) YIELD node
WITH row, node
WHERE node.family = row.family AND size(coalesce(node.aliases, [])) > 0
RETURN row.id AS id, node.id AS match, node.name_key AS key, node.family AS family, node.aliases AS aliases
