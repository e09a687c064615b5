// Remember which taxonomy was loaded (same transaction as its concepts).
MERGE (m:KagMeta {key: $key})
SET m.checksum = $checksum, m.concepts = $concepts, m.edges = $edges, m.loaded_at = datetime()
