// write_marker v1 — record which corpus an evaluation loaded ($marker_key, $props: fingerprint,
// corpus name, documents, embedder, build mode), so the next run can reuse it. loaded_at changes
// only when the corpus was (re)loaded ($loaded), so it identifies one load of the graph.
MERGE (marker:KagMeta {key: $marker_key})
SET marker += $props,
    marker.loaded_at = CASE WHEN $loaded OR marker.loaded_at IS NULL THEN toString(datetime()) ELSE marker.loaded_at END
RETURN marker.loaded_at AS loaded_at
