// 0001_core: the graph model's uniqueness constraints and search indexes.
// Statements are separated by ';' at the end of a line and run one by one (schema commands
// cannot share a transaction). $embedding_dimension comes from the configured embedder.

CREATE CONSTRAINT document_id IF NOT EXISTS FOR (n:Document) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT chunk_id IF NOT EXISTS FOR (n:Chunk) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT entity_id IF NOT EXISTS FOR (n:Entity) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT concept_id IF NOT EXISTS FOR (n:Concept) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT event_id IF NOT EXISTS FOR (n:Event) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT kag_run_id IF NOT EXISTS FOR (n:KagRun) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT kag_step_id IF NOT EXISTS FOR (n:KagStep) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT kag_meta_key IF NOT EXISTS FOR (n:KagMeta) REQUIRE n.key IS UNIQUE;

CREATE FULLTEXT INDEX chunk_fulltext IF NOT EXISTS FOR (n:Chunk) ON EACH [n.text, n.title];
CREATE FULLTEXT INDEX entity_fulltext IF NOT EXISTS FOR (n:Entity) ON EACH [n.name, n.alias_text, n.description];
CREATE FULLTEXT INDEX concept_fulltext IF NOT EXISTS FOR (n:Concept) ON EACH [n.name, n.description];

CREATE VECTOR INDEX chunk_embedding IF NOT EXISTS FOR (n:Chunk) ON n.embedding
OPTIONS {indexConfig: {`vector.dimensions`: toInteger($embedding_dimension), `vector.similarity_function`: 'cosine'}};
CREATE VECTOR INDEX entity_embedding IF NOT EXISTS FOR (n:Entity) ON n.embedding
OPTIONS {indexConfig: {`vector.dimensions`: toInteger($embedding_dimension), `vector.similarity_function`: 'cosine'}};
CREATE VECTOR INDEX concept_embedding IF NOT EXISTS FOR (n:Concept) ON n.embedding
OPTIONS {indexConfig: {`vector.dimensions`: toInteger($embedding_dimension), `vector.similarity_function`: 'cosine'}};
