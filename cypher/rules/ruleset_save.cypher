// Register a namespace's rule set (what `kag-neo4j rules apply` applied), so that loads and
// deletes re-apply it: the files' texts, each rule's id and version, the "as of" instant, the
// resolved schema its types came from (JSON), and graph_version, the version its derived facts
// are consistent with.
MERGE (s:KagRuleSet {namespace: $namespace})
SET s.sources = $sources, s.texts = $texts, s.checksum = $checksum, s.as_of = $as_of,
    s.rule_ids = $rule_ids, s.rule_versions = $rule_versions, s.resolved_schema = $resolved_schema,
    s.graph_version = $graph_version, s.applied_at = datetime()
