MATCH (lock:KagMigrationLock {id: 'migrations'})
WHERE lock.holder = $token
SET lock.holder = null, lock.expires_at = null
