"""Shared test data for the models layer's unit tests."""

from __future__ import annotations

from pydantic import BaseModel, Field

from kag_neo4j.models.base import ChatMessage


class Triple(BaseModel):
    subject: str
    predicate: str
    object: str


class Extraction(BaseModel):
    entities: list[str] = Field(min_length=1)
    triples: list[Triple]


GOOD = {"entities": ["Ronaldo", "Real Madrid"], "triples": [{"subject": "Ronaldo", "predicate": "played for", "object": "Real Madrid"}]}

PROMPT = [
    ChatMessage(role="system", content="Extract entities and triples."),
    ChatMessage(role="user", content="Ronaldo played for Real Madrid. Real Madrid was founded in 1902."),
]
