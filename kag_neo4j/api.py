"""The Python API: ``KAG(...).ask(question) -> Answer``.

    from kag_neo4j.api import KAG

    with KAG.from_settings() as kag:                 # NEO4J_* / KAG_* settings, offline models by default
        answer = kag.ask("How many years after X was founded did Y open?")
        print(answer.answer, answer.citations, answer.kg_path, answer.run_id)

    kag = KAG(db=db, llm=llm, embedder=embedder)     # bring your own Database, LLM and Embedder

Every question-time query runs in a read transaction; the run is written afterwards, in one
write transaction, as a ``(:KagRun)`` trace (``trace=False`` skips it). An answer is never lost
to its trace: when the trace cannot be written (a read-only database or user, a full disk, a
constraint, a lost connection) ``ask`` still returns the answer, with ``run_id=None`` and the
reason in ``answer.warnings``.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING

from neo4j.exceptions import DriverError, Neo4jError

from kag_neo4j.errors import MigrationError
from kag_neo4j.models.base import LLM, Embedder
from kag_neo4j.solver.question_search import SearchResult, search
from kag_neo4j.solver.results import Answer
from kag_neo4j.solver.retrieval import RankedList
from kag_neo4j.solver.runtime import SolverConfig
from kag_neo4j.solver.solve import Mode, Solver
from kag_neo4j.solver.trace import TraceView, read_trace, write_trace
from kag_neo4j.store import migrations
from kag_neo4j.store.database import Database

if TYPE_CHECKING:
    from kag_neo4j.config import Settings

__all__ = ["KAG", "Answer", "SearchResult", "SolverConfig"]

_log = logging.getLogger(__name__)


class KAG:
    """Knowledge Augmented Generation over one Neo4j database."""

    def __init__(
        self,
        db: Database,
        llm: LLM,
        embedder: Embedder,
        *,
        config: SolverConfig | None = None,
        ranked_lists: Sequence[RankedList] = (),
        owns_db: bool = False,
    ) -> None:
        for name, value, kind in (("llm", llm, LLM), ("embedder", embedder, Embedder)):
            if not isinstance(value, kind):
                raise TypeError(
                    f"KAG({name}=...) needs an object implementing kag_neo4j.models.{kind.__name__}, "
                    f"got {type(value).__name__}; build one with kag_neo4j.models.build_{name}(settings)"
                )
        if not isinstance(db, Database):
            raise TypeError(f"KAG(db=...) needs a kag_neo4j.store.database.Database, got {type(db).__name__}")
        self.db = db
        self.llm = llm
        self.embedder = embedder
        self.solver = Solver(db, llm, embedder, config, ranked_lists=ranked_lists)
        self._owns_db = owns_db
        self._graph_warnings: list[str] | None = None

    @classmethod
    def from_settings(
        cls, settings: Settings | None = None, *, kb: str | None = None, config: SolverConfig | None = None,
        ranked_lists: Sequence[RankedList] = (),
    ) -> KAG:
        """Connect with ``settings`` (default: environment and kag.toml) and build its models;
        ``kb`` names the knowledge base to work in (default: the settings', ``KAG_KB``).

        The models load on first use. Raises :class:`~kag_neo4j.errors.IndexDimensionError`
        when the graph's vectors do not match the configured embedder.
        """
        from kag_neo4j.config import load_settings
        from kag_neo4j.models import build_embedder, build_llm, embedder_dimension
        from kag_neo4j.store.knowledge_base import check_kb_name
        from kag_neo4j.store.migrations import check_vector_dimensions

        settings = settings or load_settings()
        if kb is not None:
            settings = settings.model_copy(update={"kb": check_kb_name(kb)})
        db = Database.connect(settings)
        try:
            check_vector_dimensions(db, embedder_dimension(settings))
            llm = build_llm(settings)
            embedder = build_embedder(settings)
        except BaseException:
            db.close()
            raise
        return cls(db, llm, embedder, config=config, ranked_lists=ranked_lists, owns_db=True)

    @property
    def config(self) -> SolverConfig:
        return self.solver.config

    def ask(self, question: str, *, trace: bool = True, mode: Mode = "static", language: str = "auto") -> Answer:
        """Answer ``question`` with citations and the KG path; store the run unless ``trace=False``.

        ``mode="static"`` plans the whole DAG in one call and runs independent steps concurrently;
        ``mode="iterative"`` plans one step at a time from the results known so far.
        """
        answer = self.solver.solve(question, mode=mode, language=language)
        answer.warnings.extend(self.graph_warnings())
        if trace:
            self._store_trace(answer)
        return answer

    def search(self, question: str, *, k: int = 5, recipe: str = "hybrid") -> SearchResult:
        """The top ``k`` chunks for ``question`` by hybrid retrieval alone (no LLM, read transactions).

        ``recipe`` names one of ``kag_neo4j.solver.retrieval.RECIPES`` (``hybrid``, ``dense``,
        ``fulltext``, ``dense+ppr``; ``hybrid-gds`` / ``hybrid-cypher`` pin the PageRank backend).
        The result says which backend ranked (``ppr_backend``) and carries the server's warnings
        (e.g. no GDS). The question's entity mentions seed PageRank. The custom
        ``ranked_lists`` given to :class:`KAG` are fused in (as in every retrieval of ``ask``).
        """
        found = search(self.db, self.embedder, question, k=k, recipe_name=recipe, extra_lists=self.solver.ranked_lists)
        found.warnings.extend(self.graph_warnings())
        return found

    def graph_warnings(self) -> list[str]:
        """What answers lose on this graph because it was written by an older kag-neo4j: the migrations
        it has not had (read once per KAG; ``kag-neo4j migrate`` applies them, ``load`` does too)."""
        if self._graph_warnings is None:
            try:
                pending = migrations.plan(self.db).pending
            except MigrationError as exc:  # a migration file changed after it was applied: say so
                self._graph_warnings = [str(exc)]
            else:
                names = ", ".join(migration.filename for migration in pending)
                self._graph_warnings = [(
                    f"this graph has not had migration(s) {names} of this kag-neo4j, and answers miss what they "
                    "add; run `kag-neo4j migrate`"
                )] if pending else []
        return list(self._graph_warnings)

    def _store_trace(self, answer: Answer) -> None:
        """Write the run; on failure keep the answer, without a run id, and say why."""
        run_id = uuid.uuid4().hex
        try:
            write_trace(self.db, answer, run_id, model=self.llm.model_id)
        except (Neo4jError, DriverError) as exc:
            code = exc.code if isinstance(exc, Neo4jError) and exc.code else type(exc).__name__
            message = (
                f"the answer was not stored as a trace ({code}: {exc}); it has no run id. Check that the "
                "Neo4j user may write and the database has disk space, or ask with --no-trace / trace=False"
            )
            _log.warning(message)
            answer.warnings.append(message)
            answer.run_id = None
            return
        answer.run_id = run_id

    def trace(self, run_id: str) -> TraceView:
        """A stored run (see ``kag-neo4j trace``)."""
        return read_trace(self.db, run_id)

    def close(self) -> None:
        if self._owns_db:
            self.llm.close()
        if self._owns_db:
            self.db.close()

    def __enter__(self) -> KAG:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
