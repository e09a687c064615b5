// An Action block: per distinct binding of the variables it uses, create the nodes (merged on an
// id made of the rule and the ids of those variables) and the edges it names.
{{ body }}
WITH DISTINCT {{ carried | join(', ') }}
{% for node in nodes %}
MERGE ({{ node.var }}:{{ node.base }} {id: {{ node.id }}})
SET {{ node.var }}:{{ node.label }}, {{ node.var }}.derived_by = $rule_id, {{ node.var }}.rule_version = $rule_version,
    {{ node.var }}.as_of = $as_of{% for key, value in node.props %}, {{ node.var }}.{{ key }} = {{ value }}{% endfor %}

{% for edge in node.edges %}
MERGE ({{ node.var }})-[{{ edge.var }}:{{ edge.type }} {derived_by: $rule_id}]->({{ edge.target }})
SET {{ edge.var }}.rule_version = $rule_version, {{ edge.var }}.as_of = $as_of
{% endfor %}
{% endfor %}
{% for edge in edges %}
MERGE ({{ edge.src }})-[{{ edge.var }}:{{ edge.type }} {derived_by: $rule_id}]->({{ edge.dst }})
SET {{ edge.var }}.rule_version = $rule_version, {{ edge.var }}.as_of = $as_of{% for key, value in edge.props %}, {{ edge.var }}.{{ key }} = {{ value }}{% endfor %}

{% endfor %}
RETURN count(*) AS derived
