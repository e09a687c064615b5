// Who holds the lock $lock and until when (for the message a waiting caller gets).
OPTIONAL MATCH (lock:KagMigrationLock {id: $lock})
WHERE lock.holder IS NOT NULL AND lock.expires_at >= datetime()
RETURN lock.owner AS owner, toString(lock.expires_at) AS expires_at
