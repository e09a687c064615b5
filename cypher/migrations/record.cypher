CREATE (m:KagMigration {version: $version, name: $name, checksum: $checksum, applied_at: datetime(),
                        statements: $statements, ms: $ms})
