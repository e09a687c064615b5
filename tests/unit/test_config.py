"""Settings precedence: flags > environment > kag.toml > defaults."""

from __future__ import annotations

from pathlib import Path

import pytest

from kag_neo4j.config import Settings, load_settings
from kag_neo4j.errors import ConfigError


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for key in ("NEO4J_URI", "NEO4J_USERNAME", "NEO4J_PASSWORD", "NEO4J_DATABASE", "KAG_HOME", "KAG_SERVER_PORT"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.chdir(tmp_path)


def test_defaults_use_the_local_server() -> None:
    settings = load_settings()
    assert settings.neo4j_uri is None and settings.manages_local_server
    assert settings.neo4j_database == "neo4j"


def test_toml_then_env_then_flags(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "kag.toml").write_text('neo4j_uri = "bolt://toml:7687"\nneo4j_database = "fromtoml"\nserver_port = 7001\n')
    settings = load_settings()
    assert (settings.neo4j_uri, settings.neo4j_database, settings.server_port) == ("bolt://toml:7687", "fromtoml", 7001)

    monkeypatch.setenv("NEO4J_URI", "neo4j+s://abc.databases.neo4j.io")
    monkeypatch.setenv("KAG_SERVER_PORT", "7002")
    settings = load_settings()
    assert settings.neo4j_uri == "neo4j+s://abc.databases.neo4j.io"
    assert settings.server_port == 7002 and settings.neo4j_database == "fromtoml"

    settings = load_settings(neo4j_uri="bolt://flag:7687", server_port=None)
    assert settings.neo4j_uri == "bolt://flag:7687" and settings.server_port == 7002


def test_an_empty_variable_counts_as_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAG_SERVER_PORT", "")
    monkeypatch.setenv("KAG_SERVER_NAME", "")
    settings = load_settings()
    assert settings.server_port == Settings.model_fields["server_port"].default
    assert settings.server_name == Settings.model_fields["server_name"].default


def test_kag_config_names_another_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    other = tmp_path / "elsewhere.toml"
    other.write_text('neo4j_database = "other"\n')
    monkeypatch.setenv("KAG_CONFIG", str(other))
    assert load_settings().neo4j_database == "other"


@pytest.mark.parametrize("uri", ["bolt://localhost:7687", "neo4j://cluster:7687", "neo4j+s://x.databases.neo4j.io"])
def test_supported_schemes(uri: str) -> None:
    assert load_settings(neo4j_uri=uri).neo4j_uri == uri


def test_bad_uri_names_the_setting_and_the_fix() -> None:
    with pytest.raises(ConfigError, match="NEO4J_URI 'http://localhost:7474' has an unsupported scheme; use one of bolt://"):
        load_settings(neo4j_uri="http://localhost:7474")
