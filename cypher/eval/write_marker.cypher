// write_marker v1 — record which corpus an evaluation loaded ($marker_key, $props: fingerprint,
// corpus name, documents, embedder, build mode), so the next run can reuse it.
MERGE (marker:KagMeta {key: $marker_key})
SET marker += $props, marker.loaded_at = datetime()
RETURN marker.key AS key
