// What deleting a concept table touches (for re-applying rules): the labels of its concepts and
// of the nodes linked to them, and the types of those links (IS_A, belongToIndustry, BELONGS_TO...).
MATCH (c:Concept {taxonomy: $taxonomy})
OPTIONAL MATCH (c)-[r]-(n)
WITH collect(DISTINCT labels(c)) + collect(DISTINCT labels(n)) AS labels, collect(DISTINCT type(r)) AS types
RETURN labels, types
