// The registered rule sets' derived facts are consistent with graph version $graph_version.
MATCH (s:KagRuleSet)
SET s.graph_version = $graph_version, s.refreshed_at = datetime()
