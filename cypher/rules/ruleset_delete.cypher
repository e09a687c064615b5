// Forget a namespace's registered rule set.
MATCH (s:KagRuleSet {namespace: $namespace})
DELETE s
RETURN count(s) AS deleted
