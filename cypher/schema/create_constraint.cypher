// Uniqueness of one property on one label (schema type `id`s and meta-graph keys). Template:
// `constraint`, `label` and `property` are validated identifiers (kag_neo4j.store.cypher.render).
CREATE CONSTRAINT `{{ constraint }}` IF NOT EXISTS FOR (n:`{{ label }}`) REQUIRE n.`{{ property }}` IS UNIQUE
