"""The local server's password file: generated, owner-only, validated on read."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from kag_neo4j.errors import ServerError
from kag_neo4j.store.credentials import create_credentials, credentials_file, load_credentials


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_created_credentials_are_owner_only_and_read_back(tmp_path: Path) -> None:
    instance = tmp_path / "instances" / "x"
    created = create_credentials(instance)
    path = credentials_file(instance)
    assert _mode(path) == 0o600 and _mode(instance) == 0o700
    assert json.loads(path.read_text()) == {"username": "neo4j", "password": created.password.get_secret_value()}
    assert len(created.password.get_secret_value()) >= 32
    assert load_credentials(instance) == created
    assert created.password.get_secret_value() not in repr(created)
    assert create_credentials(tmp_path / "other").password != created.password


def test_missing_file_means_no_password_yet(tmp_path: Path) -> None:
    assert load_credentials(tmp_path) is None


def test_a_broken_file_is_explained(tmp_path: Path) -> None:
    credentials_file(tmp_path).write_text('{"username": "neo4j"}')
    with pytest.raises(ServerError, match=r"credentials.json is not valid .*\"password\""):
        load_credentials(tmp_path)


def test_only_a_running_local_instance_lends_its_password(tmp_path: Path) -> None:
    from kag_neo4j.config import Settings
    from kag_neo4j.store import server

    settings = Settings(home=tmp_path, neo4j_uri=None)
    instance = server.instance_dir(settings)
    create_credentials(instance)
    (instance / "state.json").write_text(json.dumps({  # a record whose pid is not this instance's server
        "pid": 999_999, "port": 7687, "instance": str(instance), "neo4j_version": "x", "gds_version": "x",
        "apoc_version": "x", "started_at": 0.0,
    }))
    for uri in ("bolt://127.0.0.1:7687", "neo4j://localhost", "neo4j+s://db.example.com:7687", "bolt://10.0.0.5:7687"):
        assert server.auth_for_uri(settings, uri) is None, uri
    assert server.auth_for_uri(Settings(home=tmp_path / "empty", neo4j_uri=None), "bolt://127.0.0.1:7687") is None
