MATCH (m:KagMigration)
RETURN m.version AS version, m.name AS name, m.checksum AS checksum, toString(m.applied_at) AS applied_at,
       m.statements AS statements, m.ms AS ms
ORDER BY m.version
