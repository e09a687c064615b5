"""kag-neo4j inside neo4j-graphrag pipelines: retrievers for ``neo4j_graphrag.generation.GraphRAG``.

    from neo4j_graphrag.generation import GraphRAG
    from kag_neo4j.graphrag import KagHybridRetriever

    retriever = KagHybridRetriever(driver, embedder, neo4j_database="neo4j")
    GraphRAG(retriever=retriever, llm=llm).search("Where was Ada Pembroke born?", retriever_config={"top_k": 5})

See ``docs/graphrag.md``.
"""

from kag_neo4j.graphrag.retriever import KagHybridRetriever, KagSolverRetriever

__all__ = ["KagHybridRetriever", "KagSolverRetriever"]
