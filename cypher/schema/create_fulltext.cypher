// Fulltext index over the text-indexed properties of one schema type. Template: `index`, `label`
// and `properties` are validated identifiers.
CREATE FULLTEXT INDEX `{{ index }}` IF NOT EXISTS
FOR (n:`{{ label }}`) ON EACH [{% for property in properties %}n.`{{ property }}`{% if not loop.last %}, {% endif %}{% endfor %}]
