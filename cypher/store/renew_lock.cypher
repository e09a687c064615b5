// Extend the lease of the lock $lock while $token holds it (no row: the lease was lost - it
// expired and another caller took the lock). Also run inside write transactions as a fence.
MATCH (lock:KagMigrationLock {id: $lock})
WHERE lock.holder = $token
SET lock.expires_at = datetime() + duration({seconds: $lease_seconds})
RETURN lock.holder AS holder
