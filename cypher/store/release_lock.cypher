MATCH (lock:KagMigrationLock {id: $lock})
WHERE lock.holder = $token
SET lock.holder = null, lock.owner = null, lock.expires_at = null
