// Events (loaded, or created by a rule's Action) a mention names exactly: by the builder's
// resolution key ($key, kag_neo4j.builder.names.name_key) or, for an event without one, by its
// name ignoring case. Events are not in the entity indexes, so a plan naming one
// (`s=e1:ProductChainEvent[`顺丁橡胶成本上涨`]`) anchors its hop here. $type (a value) keeps events
// of that label; null keeps any.
MATCH (e:Event)
WHERE (e.name_key = $key OR toLower(e.name) = toLower($mention))
  AND ($type IS NULL OR $type IN labels(e))
RETURN e.id AS id, e.name AS name
ORDER BY id
LIMIT $k
