// The checksum of the taxonomy last loaded from a source (unchanged: nothing to write).
OPTIONAL MATCH (m:KagMeta {key: $key})
RETURN m.checksum AS checksum
