"""``examples/custom_llm_provider.py`` runs, and its provider is built by ``build_llm`` and the CLI.

The provider implements only ``_complete(CompletionRequest)``; retries, accounting and structured
output with validation come from ``ChatLLM``. It talks to the package's fake endpoint on 127.0.0.1.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest
from typer.testing import CliRunner

from kag_neo4j.cli.models import app
from kag_neo4j.config import Settings
from kag_neo4j.errors import ModelEndpointError
from kag_neo4j.models import build_llm
from kag_neo4j.models.fake_endpoint import FakeEndpoint, extraction_of
from kag_neo4j.models.providers import llm_provider_names
from kag_neo4j.prompts.extract import ExtractionResponse, build_extract_messages

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "custom_llm_provider.py"


@pytest.fixture(scope="module")
def example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("custom_llm_provider_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    module.register()
    return module


def test_the_example_runs_and_extracts_through_its_provider(example: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    extraction = example.main()
    expected = extraction_of("Ada Lovelace worked with Charles Babbage in London.")
    assert [entity.name for entity in extraction.entities] == [entity["name"] for entity in expected["entities"]]
    assert "plain_http" in llm_provider_names()


def test_build_llm_gives_the_provider_retries_and_accounting(example: ModuleType, tmp_path: Path) -> None:
    with FakeEndpoint(fault="500", times=1) as endpoint:  # the first request fails with HTTP 500
        llm = build_llm(Settings(home=tmp_path, llm_provider="plain_http", llm_base_url=endpoint.url, no_cache=True,
                                 llm_max_retries=2))
        assert isinstance(llm, example.PlainHTTPLLM) and not llm.supports_structured_output
        llm.retry = llm.retry.model_copy(update={"base_delay": 0.0})
        value = llm.generate_object(build_extract_messages("Grace Hopper visited Boston.", title="Grace"),
                                    ExtractionResponse, stage="extract")
        assert endpoint.requests == 2
    assert {entity.name for entity in value.entities} == {"Grace Hopper", "Boston"}
    usage = llm.usage.stage("extract")
    assert (usage.calls, usage.failures) == (1, 1)


def test_a_refused_request_is_an_endpoint_error(example: ModuleType, tmp_path: Path) -> None:
    with FakeEndpoint(fault="401") as endpoint:
        llm = build_llm(Settings(home=tmp_path, llm_provider="plain_http", llm_base_url=endpoint.url, no_cache=True))
        with pytest.raises(ModelEndpointError, match="HTTP 401"):
            llm.generate([{"role": "user", "content": "hello"}], stage="answer")
        assert endpoint.requests == 1  # not retried


def test_the_cli_builds_the_registered_provider(example: ModuleType, tmp_path: Path) -> None:
    with FakeEndpoint() as endpoint:
        env = {"KAG_HOME": str(tmp_path), "KAG_LLM_PROVIDER": "plain_http", "KAG_LLM_BASE_URL": endpoint.url,
               "KAG_LLM_MODEL": "fake"}
        result = CliRunner().invoke(app, ["check", "--no-embedder", "--json"], env=env)
        assert endpoint.answered == 1
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert (report["llm"]["provider"], report["llm"]["model_id"]) == ("plain_http", "fake")
    assert report["llm"]["completion_tokens"] == 10  # as the endpoint reported it
