// Checkpoint: runs in the same transaction as a document's last write batch.
UNWIND $ids AS id
MATCH (d:Document {id: id})
SET d.status = 'complete', d.loaded_at = datetime()
