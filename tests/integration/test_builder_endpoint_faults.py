"""A full (LLM) load against a faulty OpenAI-compatible endpoint (a local fake) and a real Neo4j.

Refused key, unknown model and nothing listening stop the load with an error naming the
endpoint and the fix, before anything is written; 500s, timeouts and invalid JSON are retried
and then recorded per chunk. Either way a changed document keeps its complete old version.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kag_neo4j.builder.pipeline import LoadOptions, LoadSummary, load
from kag_neo4j.config import Settings
from kag_neo4j.errors import ModelEndpointError
from kag_neo4j.models.fake_endpoint import Fault, FakeEndpoint
from kag_neo4j.models.hashing import HashingEmbedder
from kag_neo4j.store import migrations
from kag_neo4j.store.database import Database
from kag_neo4j.store.reset import reset_database
from tests.integration.builder_support import snapshot
from tests.integration.cli_env import set_connection_env
from tests.integration.conftest import TEST_DIMENSION

TEXTS = {
    "engines.txt": "Ada Lovelace wrote about the Analytical Engine. Charles Babbage designed the Analytical Engine.",
    "rivers.txt": "The Thames flows through London. The Severn rises in Wales and reaches Bristol.",
    "stars.txt": "Henrietta Leavitt worked at Harvard. Edwin Hubble used her work at Mount Wilson.",
}
CHANGED = ("rivers.txt", "The Thames flows through Oxford and London. The Trent joins the Humber near Hull.")


def _corpus(folder: Path, changed: bool = False) -> Path:
    folder.mkdir(exist_ok=True)
    for name, text in TEXTS.items():
        (folder / name).write_text(CHANGED[1] if changed and name == CHANGED[0] else text, encoding="utf-8")
    return folder


def _settings(settings: Settings, endpoint: FakeEndpoint) -> Settings:
    return settings.model_copy(update={"llm_provider": "openai", "llm_base_url": endpoint.url, "llm_model": "fake",
                                       "llm_max_retries": 1, "llm_timeout": 1.0, "no_cache": True})


def _load(db: Database, settings: Settings, folder: Path, fault: Fault = "none", after: int = 0) -> LoadSummary:
    with FakeEndpoint(fault, after=after, delay=2.5) as endpoint:
        return load([folder], db, _settings(settings, endpoint), LoadOptions(mode="full", max_chars=200, overlap=0),
                    embedder=HashingEmbedder(TEST_DIMENSION))


def _version(db: Database) -> int | None:
    return db.read("OPTIONAL MATCH (m:KagMeta {key: 'graph'}) RETURN m.version AS v")[0]["v"]


@pytest.mark.parametrize(("fault", "fix"), [("401", "KAG_LLM_API_KEY"), ("404", "KAG_LLM_MODEL"),
                                            ("refused", "KAG_LLM_BASE_URL")])
def test_a_refusing_endpoint_stops_the_load_and_the_old_version_stays(
    db: Database, test_settings: Settings, tmp_path: Path, fault: Fault, fix: str
) -> None:
    folder = _corpus(tmp_path / "corpus")
    assert _load(db, test_settings, folder).documents_loaded == 3
    before, version = snapshot(db), _version(db)
    _corpus(folder, changed=True)
    with pytest.raises(ModelEndpointError, match=rf"http://127\.0\.0\.1:\d+/v1.*{fix}"):
        _load(db, test_settings, folder, fault)
    assert snapshot(db) == before  # the changed document was not deleted
    assert _version(db) == version


def test_a_refusal_midway_leaves_no_document_half_written(db: Database, test_settings: Settings, tmp_path: Path) -> None:
    folder = _corpus(tmp_path / "corpus")
    with pytest.raises(ModelEndpointError):
        _load(db, test_settings, folder, "401", after=2)  # two chunks answered, then the key is refused
    statuses = db.read("MATCH (d:Document) RETURN d.status AS status")
    assert all(row["status"] == "complete" for row in statuses)
    assert db.read("MATCH (c:Chunk) WHERE NOT (c)-[:PART_OF]->(:Document {status: 'complete'}) "
                   "RETURN count(c) AS n")[0]["n"] == 0


@pytest.mark.parametrize("fault", ["500", "timeout", "invalid_json"])
def test_per_chunk_failures_keep_the_old_version_until_a_rerun_succeeds(
    db: Database, test_settings: Settings, tmp_path: Path, fault: Fault
) -> None:
    folder = _corpus(tmp_path / "corpus")
    _load(db, test_settings, folder)
    before = snapshot(db)
    _corpus(folder, changed=True)
    summary = _load(db, test_settings, folder, fault)  # the load goes on: the failures are per chunk
    assert summary.extraction_failures > 0 and summary.documents_kept == 1 and summary.documents_incomplete == 1
    assert summary.documents_replaced == 0
    assert snapshot(db) == before
    rerun = _load(db, test_settings, folder)
    assert rerun.documents_replaced == 1 and rerun.documents_incomplete == 0
    after = snapshot(db)
    reset_database(db)
    migrations.migrate(db, embedding_dimension=TEST_DIMENSION)
    _load(db, test_settings, folder)
    assert after == snapshot(db)  # the same graph a clean load of the new version gives


def test_the_load_command_names_the_endpoint_and_the_fix(db: Database, test_settings: Settings, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    import typer
    from typer.testing import CliRunner

    from kag_neo4j.cli.load import register

    folder = _corpus(tmp_path / "corpus")
    app = typer.Typer()
    register(app)
    with FakeEndpoint("401") as endpoint:
        set_connection_env(monkeypatch, db.connection)
        for name, value in {"KAG_HOME": str(tmp_path / "home"),
                            "KAG_EMBEDDER": "hashing", "KAG_EMBEDDING_DIMENSIONS": str(TEST_DIMENSION),
                            "KAG_LLM_PROVIDER": "openai", "KAG_LLM_BASE_URL": endpoint.url,
                            "KAG_LLM_MODEL": "fake"}.items():
            monkeypatch.setenv(name, value)
        result = CliRunner().invoke(app, ["load", str(folder), "--mode", "full", "--no-progress"])
    assert result.exit_code == 1
    assert endpoint.url in result.output and "KAG_LLM_API_KEY" in result.output
    assert db.read("MATCH (d:Document) RETURN count(d) AS n")[0]["n"] == 0
