// Take the migration lock unless another live run holds it. MERGE on a uniquely constrained
// id makes concurrent runs serialise on the same node.
MERGE (lock:KagMigrationLock {id: 'migrations'})
WITH lock
WHERE lock.holder IS NULL OR lock.holder = $token OR lock.expires_at < datetime()
SET lock.holder = $token, lock.expires_at = datetime() + duration({seconds: $lease_seconds})
RETURN lock.holder AS holder
