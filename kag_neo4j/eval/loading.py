"""Load an evaluation corpus into its knowledge base once, and reuse it afterwards.

A knowledge base is one Neo4j database (the configured one, or ``--database``; with the local
server, ``KAG_SERVER_NAME`` gives each corpus its own server instance). An evaluation needs the
corpus *alone* in it, or rankings would mix passages of several corpora, so:

* every corpus document present, completely written, and no other document: **reused**
  (nothing is embedded or written again);
* some corpus documents missing or incomplete (an interrupted or partly failed load) and no
  other document: the builder loads (it skips what is already complete, so a full build of
  hours resumes where it stopped, with or without ``--replace``);
* documents of another corpus present, or the corpus loaded with another embedder or build
  mode: an :class:`~kag_neo4j.errors.EvalError` names the fix - ``--replace`` empties the
  database first, or point the evaluation at another database / server instance.

The load itself is the builder's (``kag_neo4j.builder.pipeline``; light mode without an LLM, or
full mode with one); a marker
``(:KagMeta {key: 'eval:corpus'})`` records the corpus fingerprint, embedder and mode.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, Field

from kag_neo4j.config import Settings
from kag_neo4j.errors import EvalError
from kag_neo4j.eval.datasets import Corpus
from kag_neo4j.models.base import LLM, Embedder
from kag_neo4j.store import cypher
from kag_neo4j.store.database import Database
from kag_neo4j.store.kb_admin import empty_kb

__all__ = ["MARKER_KEY", "BuildMode", "CorpusInventory", "LoadStatus", "clear_knowledge_base", "ensure_corpus_loaded",
           "inventory"]

MARKER_KEY = "eval:corpus"
BuildMode = Literal["light", "full"]
Log = Callable[[str], None]


class CorpusInventory(BaseModel):
    documents: int
    #: corpus documents in the database, complete or not; ``present``: the complete ones
    known: int
    present: int
    chunks: int
    embedded: int
    marker: dict[str, Any] | None = None


class LoadStatus(BaseModel):
    corpus: str
    fingerprint: str
    documents: int
    chunks: int
    reused: bool
    seconds: float
    mode: BuildMode
    loaded_at: str = Field(description="when this corpus was loaded; identifies the graph in result caches")


def fingerprint(corpus: Corpus) -> str:
    return corpus.sha256[:16]


def inventory(db: Database, corpus: Corpus) -> CorpusInventory:
    row = db.read(cypher.query("eval/corpus_inventory"), document_ids=corpus.document_ids, marker_key=MARKER_KEY)[0]
    return CorpusInventory(**row)


def clear_knowledge_base(db: Database) -> None:
    """Delete every node of the knowledge base but its migration records, and its GDS projections
    (``--replace``); constraints and indexes stay."""
    empty_kb(db, schema=False, keep=("KagMigration", "KagMigrationLock"))


def _mismatch(marker: dict[str, Any] | None, corpus: Corpus, embedder: Embedder, mode: BuildMode) -> str | None:
    if not marker:
        return None
    if marker.get("fingerprint") not in (None, fingerprint(corpus)):
        return f"another version of the corpus (fingerprint {marker.get('fingerprint')}, file {marker.get('corpus')})"
    if marker.get("embedder") not in (None, embedder.model_id):
        return f"embeddings of {marker.get('embedder')} (this run embeds with {embedder.model_id})"
    if mode == "full" and marker.get("mode") == "light":
        return "a light (no LLM) build, and this run asks for --build full"
    return None


def _builder_load(
    db: Database, corpus: Corpus, *, settings: Settings, embedder: Embedder, llm: LLM | None, mode: BuildMode,
    log: Log,
) -> None:
    """Load ``corpus`` with the builder (the one place the evaluation calls it)."""
    import sys

    from kag_neo4j.builder.pipeline import LoadOptions, LoadSummary, load

    terminal = sys.stderr.isatty()
    began = time.monotonic()

    def written(so_far: LoadSummary) -> None:  # off a terminal (a log file), a line per write transaction
        log(f"loading: {so_far.chunks} chunks written in {time.monotonic() - began:.0f} s")

    summary = load([corpus.path], db, settings, LoadOptions(mode=mode, progress=terminal),
                   embedder=embedder, llm=llm, after_write=None if terminal else written)
    log(f"loaded {summary.documents_loaded} documents, {summary.chunks} chunks, {summary.entities_new} entities, "
        f"{summary.relations} relations in {summary.seconds:.0f} s ({summary.chunks_per_second:.1f} chunks/s)")
    if summary.read_failures:
        log("could not read: " + "; ".join(summary.read_failures))


def ensure_corpus_loaded(
    db: Database,
    corpus: Corpus,
    *,
    settings: Settings,
    embedder: Embedder,
    llm: LLM | None = None,
    mode: BuildMode = "light",
    replace: bool = False,
    log: Log | None = None,
    loader: Callable[..., None] | None = None,
) -> LoadStatus:
    """Make ``db`` hold exactly ``corpus`` (loading it when needed); reuse a complete earlier load.

    ``loader`` replaces the builder call (tests); it gets the same arguments as the builder.
    """
    say = log or (lambda _message: None)
    started = time.monotonic()
    size = len(corpus.passages)
    state = inventory(db, corpus)
    problem = _mismatch(state.marker, corpus, embedder, mode)
    foreign = state.documents - state.known
    if not replace and problem is None and foreign > 0:
        problem = f"{foreign} document(s) that are not passages of {corpus.path.name}"
    if problem is not None and not replace:
        raise EvalError(
            f"database {db.database!r} at {db.connection.uri} holds {problem}. An evaluation needs its corpus "
            "alone in the knowledge base: re-run with --replace to empty it and load this corpus, or use "
            "another database (--database) or local server instance (KAG_SERVER_NAME=eval-<name>)"
        )
    if replace and (problem is not None or foreign > 0):
        if state.documents:
            say(f"emptying database {db.database!r} ({state.documents} documents) for {corpus.path.name}")
        clear_knowledge_base(db)
        state = inventory(db, corpus)
    complete = state.present == size and state.documents == size and state.embedded == state.chunks > 0
    if not complete:
        say(f"loading {size - state.present} of {size} passages of {corpus.path.name} ({mode} build)")
        (loader or _builder_load)(db, corpus, settings=settings, embedder=embedder, llm=llm, mode=mode, log=say)
        state = inventory(db, corpus)
        if state.present < size:
            raise EvalError(
                f"the load of {corpus.path} left {size - state.present} of {size} passages unwritten; "
                "see the builder's report above and re-run (completed documents are kept)"
            )
    written = db.write(
        cypher.query("eval/write_marker"),
        marker_key=MARKER_KEY,
        loaded=not complete,
        props={"fingerprint": fingerprint(corpus), "corpus": str(corpus.path.name), "documents": size,
               "embedder": embedder.model_id, "mode": (state.marker or {}).get("mode", mode) if complete else mode},
    )
    return LoadStatus(
        corpus=str(corpus.path), fingerprint=fingerprint(corpus), documents=size, chunks=state.chunks,
        reused=complete, seconds=time.monotonic() - started, mode=mode, loaded_at=str(written[0]["loaded_at"]),
    )
