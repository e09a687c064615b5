"""The one chunk type: what retrieval returns, the solver's memory keeps, prompts quote and eval scores."""

from __future__ import annotations

from pydantic import BaseModel, Field

from kag_neo4j.prompts.context import Passage

__all__ = ["RankedChunk"]


class RankedChunk(BaseModel):
    """A chunk found for a question (by hybrid retrieval, a graph fact citing it, or another retriever)."""

    chunk_id: str
    document_id: str = Field(default="", description="'' when a retriever did not say (eval looks it up)")
    title: str | None = None
    text: str = ""
    score: float = Field(default=0.0, description="the fused score (0.0 for a chunk fetched by id)")
    ranks: dict[str, int] = Field(default_factory=dict, description="rank of the chunk in each list it appeared in")

    def passage(self) -> Passage:
        return Passage(chunk_id=self.chunk_id, title=self.title, text=self.text)
