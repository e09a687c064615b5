"""``python -m tests.integration.kag_cli ARGS``: the ``kag-neo4j`` command with the test suite's scripted
LLM provider registered (``KAG_LLM_PROVIDER=scripted``), for tests that run the CLI in a subprocess."""

from __future__ import annotations

from kag_neo4j.cli import main
from tests import scripted_provider

if __name__ == "__main__":
    scripted_provider.register()
    main()
