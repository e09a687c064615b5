// Take the lock $lock ('migrations', 'builder') unless another live holder has it (its lease has
// not expired). MERGE on the uniquely constrained id makes concurrent callers serialise on one node.
MERGE (lock:KagMigrationLock {id: $lock})
WITH lock
WHERE lock.holder IS NULL OR lock.holder = $token OR lock.expires_at < datetime()
SET lock.holder = $token, lock.owner = $owner, lock.expires_at = datetime() + duration({seconds: $lease_seconds})
RETURN lock.holder AS holder
