"""Two first starts at once (two shells, two server instances) provision the runtime one after the
other; neither overwrites the other's staging folder. Real Maven, with the machine's Maven
repository (already filled by any earlier start, so no network is needed then)."""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

import pytest

from kag_neo4j.config import Settings, load_settings
from kag_neo4j.store import provision

pytestmark = pytest.mark.skipif(shutil.which("mvn") is None, reason="provisioning needs Maven")


def test_concurrent_first_provisions_both_succeed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shared_repo = Path(os.environ.get("KAG_MAVEN_REPO", load_settings().home / "m2"))
    monkeypatch.setenv("KAG_MAVEN_REPO", str(shared_repo))
    settings = Settings(home=tmp_path / "home", neo4j_uri=None)
    results: list[object] = []

    def first_start() -> None:
        try:
            results.append(provision.provision(settings))
        except Exception as exc:  # noqa: BLE001 - the assertion below shows it
            results.append(exc)

    threads = [threading.Thread(target=first_start) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=600)
    assert len(results) == 2 and all(isinstance(r, provision.Runtime) for r in results), results
    assert provision.is_provisioned(settings)
    assert not (settings.server_dir / "staging").exists()
