// Documents of a write batch; status stays 'loading' until their last chunk is written. title_key is the
// title's resolution key (name_key): PageRank's projection links an entity of that key to the document.
UNWIND $rows AS row
MERGE (d:Document {id: row.id})
ON CREATE SET d.load_seq = row.load_seq
SET d.title = row.title, d.title_key = row.title_key, d.source = row.source, d.sha256 = row.sha256, d.media_type = row.media_type,
    d.metadata_json = row.metadata_json, d.chunk_count = row.chunk_count, d.status = 'loading'
