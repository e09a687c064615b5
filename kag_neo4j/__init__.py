"""kag-neo4j: Knowledge Augmented Generation that reasons inside Neo4j."""

__version__ = "0.1.0"
