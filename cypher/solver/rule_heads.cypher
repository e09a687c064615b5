// The ids of the registered rules (`Namespace:Subject-predicate->Object`): what they derive is
// offered to the planner like stored relations and properties.
OPTIONAL MATCH (s:KagRuleSet)
UNWIND coalesce(s.rule_ids, []) AS id
RETURN collect(DISTINCT id) AS ids
