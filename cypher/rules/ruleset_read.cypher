// The registered rule sets (one per namespace).
MATCH (s:KagRuleSet)
RETURN s.namespace AS namespace, s.sources AS sources, s.texts AS texts, s.checksum AS checksum,
       s.as_of AS as_of, s.rule_ids AS rule_ids, s.rule_versions AS rule_versions,
       s.graph_version AS graph_version, s.resolved_schema AS resolved_schema
ORDER BY namespace
