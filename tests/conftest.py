"""Shared test configuration: integration tests are marked by their folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import scripted_provider

FIXTURES = Path(__file__).parent / "fixtures"


scripted_provider.register()  # the scripted test double, as KAG_LLM_PROVIDER=scripted (tests only)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "integration" in item.path.parts:
            item.add_marker(pytest.mark.integration)


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    return FIXTURES
