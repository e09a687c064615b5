"""Fixtures for the models layer's unit tests."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kag_neo4j.config import Settings

# models_testkit.py (shared test data) sits next to this file; pytest's importlib mode does not
# put test folders on sys.path, so do it here.
sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(autouse=True)
def _no_kag_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Keep the developer's KAG_* / OPENAI_* environment and kag.toml out of these tests."""
    import os

    for name in list(os.environ):
        if name.startswith(("KAG_", "OPENAI_", "HF_")):
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("KAG_CONFIG", str(tmp_path / "absent-kag.toml"))


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(home=tmp_path / "home")
