"""The local server's configuration file and state record: HTTP (Neo4j Browser) only when asked for."""

from __future__ import annotations

import json
from pathlib import Path

from kag_neo4j.config import Settings
from kag_neo4j.store import server


def _config(tmp_path: Path, http_port: int) -> dict[str, str]:
    settings = Settings(home=tmp_path / "home")
    conf = server._write_config(tmp_path / "instance", tmp_path / "plugins", 7801, http_port, settings)
    lines = (conf / "neo4j.conf").read_text().splitlines()
    return dict(line.split("=", 1) for line in lines if "=" in line and not line.startswith("#"))


def test_http_is_off_unless_browser_is_asked_for(tmp_path: Path) -> None:
    config = _config(tmp_path, 0)
    assert config["server.http.enabled"] == "false" and "server.http.listen_address" not in config
    assert config["server.bolt.listen_address"] == "127.0.0.1:7801"


def test_browser_listens_on_the_loopback_address_with_authentication_on(tmp_path: Path) -> None:
    config = _config(tmp_path, 7802)
    assert config["server.http.enabled"] == "true"
    assert config["server.http.listen_address"] == "127.0.0.1:7802"
    assert config["server.https.enabled"] == "false" and config["dbms.security.auth_enabled"] == "true"


def test_a_state_record_from_before_browser_support_still_loads(tmp_path: Path) -> None:
    record = {"pid": 1, "port": 7687, "instance": str(tmp_path), "neo4j_version": "5.26.24",
              "gds_version": "2.13.9", "apoc_version": "5.26.19", "started_at": 0.0}
    path = tmp_path / "state.json"
    path.write_text(json.dumps(record))
    state = server._load_state_file(path)
    assert state is not None and state.http_port == 0 and state.browser_url is None
    served = server.ServerState(**{**record, "http_port": 7475})
    assert served.browser_url == "http://127.0.0.1:7475/browser/?dbms=neo4j://neo4j@127.0.0.1:7687"
