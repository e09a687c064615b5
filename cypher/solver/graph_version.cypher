OPTIONAL MATCH (meta:KagMeta {key: 'graph'})
RETURN coalesce(meta.version, 0) AS version
