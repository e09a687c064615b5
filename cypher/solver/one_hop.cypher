// One exact hop from anchor entities: schema relations (matched by type) and open facts
// (RELATED, matched by their predicate), in either direction, with constraints on the subject,
// predicate (edge) and object properties. Every name is a value: relation types are compared
// with type(r), labels with labels(n), properties read with n[key] — nothing is interpolated.
// $anchor_role: 's' when the anchors are subjects, 'o' when they are objects.
// A concept membership (BELONGS_TO, stored or derived by a rule) is the predicate `belongTo` (KAG's
// name for it) and reaches the :Concept, also when every fact around the anchors is read
// ($predicates null): a plan that names the class by another word (`isRiskUser`) still finds it.
// `class_types` are the concept's own type labels (`TaxOfRiskUser`), empty for other facts. When every
// fact is read, the memberships come first: an entity with hundreds of facts keeps its classes.
// $predicates: relation types / open predicates to accept (kag_neo4j.store.keys.predicate_key), or null for any.
// $constraints: [{target: 's'|'p'|'o', prop, op: '='|'!='|'<'|'<='|'>'|'>=', value}]
// $expected_type: the type the step asks of the other end, or null. It filters nothing: `type_fits`
// says whether the other end has it (a fact whose predicate is another word, `治疗` for
// `applicableMedicine`, may still say what the step asks when it reaches a `Medicine`).
// Events (loaded, or created by a rule's Action: KAG's event chains) are reached, and hopped
// from, when a predicate is asked for.
UNWIND $anchor_ids AS anchor_id
CALL (anchor_id) {
  MATCH (anchor:Entity {id: anchor_id}) RETURN anchor
  UNION
  MATCH (anchor:Event {id: anchor_id}) WHERE $predicates IS NOT NULL RETURN anchor
}
MATCH (anchor)-[r]-(other)
WHERE other:Entity
   OR (other:Concept AND type(r) = 'BELONGS_TO')
   OR ($predicates IS NOT NULL AND other:Event)
WITH anchor, r, other,
     CASE type(r) WHEN 'RELATED' THEN r.predicate WHEN 'BELONGS_TO' THEN 'belongTo' ELSE type(r) END AS predicate
WHERE ($predicates IS NULL
       OR toLower(reduce(s = normalize(predicate, NFKC), c IN [' ', '\t', '\n', '\r', '_', '-'] | replace(s, c, ''))) IN $predicates)
  AND ($other_ids IS NULL OR other.id IN $other_ids)
  AND ($other_type IS NULL OR $other_type IN labels(other))
WITH CASE WHEN $anchor_role = 's' THEN anchor ELSE other END AS s,
     CASE WHEN $anchor_role = 's' THEN other ELSE anchor END AS o,
     r, predicate, other,
     (startNode(r) = anchor) = ($anchor_role = 's') AS stored_forward
WHERE all(c IN $constraints WHERE
  CASE c.target WHEN 's' THEN s[c.prop] WHEN 'o' THEN o[c.prop] ELSE r[c.prop] END IS NOT NULL AND
  CASE c.op
    WHEN '=' THEN toString(CASE c.target WHEN 's' THEN s[c.prop] WHEN 'o' THEN o[c.prop] ELSE r[c.prop] END) = toString(c.value)
    WHEN '!=' THEN toString(CASE c.target WHEN 's' THEN s[c.prop] WHEN 'o' THEN o[c.prop] ELSE r[c.prop] END) <> toString(c.value)
    WHEN '<' THEN CASE c.target WHEN 's' THEN s[c.prop] WHEN 'o' THEN o[c.prop] ELSE r[c.prop] END < c.value
    WHEN '<=' THEN CASE c.target WHEN 's' THEN s[c.prop] WHEN 'o' THEN o[c.prop] ELSE r[c.prop] END <= c.value
    WHEN '>' THEN CASE c.target WHEN 's' THEN s[c.prop] WHEN 'o' THEN o[c.prop] ELSE r[c.prop] END > c.value
    WHEN '>=' THEN CASE c.target WHEN 's' THEN s[c.prop] WHEN 'o' THEN o[c.prop] ELSE r[c.prop] END >= c.value
    ELSE false
  END)
RETURN s.id AS subject_id, s.name AS subject, predicate, o.id AS object_id, o.name AS object,
       properties(r) AS edge, stored_forward, type(r) = 'RELATED' AS open_fact,
       coalesce(r.chunk_ids, []) AS chunk_ids, coalesce(r.confidence, 1.0) AS confidence,
       CASE WHEN type(r) = 'BELONGS_TO' AND other:Concept
            THEN [l IN labels(other) WHERE NOT l IN ['Concept', 'Entity']] ELSE [] END AS class_types,
       coalesce($expected_type IN labels(other), false) AS type_fits
ORDER BY type(r) = 'BELONGS_TO' AND $predicates IS NULL DESC, stored_forward DESC, open_fact ASC, confidence DESC,
         subject_id, object_id
LIMIT $limit
