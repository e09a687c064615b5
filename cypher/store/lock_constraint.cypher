CREATE CONSTRAINT kag_migration_lock_id IF NOT EXISTS FOR (n:KagMigrationLock) REQUIRE n.id IS UNIQUE
