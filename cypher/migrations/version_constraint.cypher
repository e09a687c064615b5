CREATE CONSTRAINT kag_migration_version IF NOT EXISTS FOR (n:KagMigration) REQUIRE n.version IS UNIQUE
