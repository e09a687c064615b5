// Wait until newly created indexes are online (seconds).
CALL db.awaitIndexes($timeout)
