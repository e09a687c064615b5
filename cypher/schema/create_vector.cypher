// Vector index on the embedding property of one vector-indexed schema property. Template:
// `index`, `label` and `property` are validated identifiers; the dimension is a parameter.
CREATE VECTOR INDEX `{{ index }}` IF NOT EXISTS
FOR (n:`{{ label }}`) ON (n.`{{ property }}`)
OPTIONS {indexConfig: {`vector.dimensions`: toInteger($dimensions), `vector.similarity_function`: 'cosine'}}
