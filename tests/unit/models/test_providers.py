"""The provider registry: the product offers only real providers; others are registered."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kag_neo4j.config import Settings
from kag_neo4j.errors import ConfigError
from kag_neo4j.models import build_llm
from kag_neo4j.models.providers import LLMOptions, llm_provider_names, register_llm_provider
from kag_neo4j.models.scripted import ScriptedLLM

REPO = Path(__file__).resolve().parents[3]


def test_the_product_offers_no_test_double() -> None:
    # a fresh interpreter without the test suite's registration: scripted is not a provider
    code = ("from kag_neo4j.models.providers import llm_provider_names; print(','.join(llm_provider_names()))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    assert out.stdout.strip() == "llamacpp,openai"
    code = ("from kag_neo4j.config import Settings; from kag_neo4j.models import build_llm\n"
            "try:\n    build_llm(Settings(llm_provider='scripted', llm_model='x.json'))\n"
            "except Exception as exc:\n    print(type(exc).__name__, exc)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    assert out.stdout.startswith("ConfigError") and "llamacpp, openai" in out.stdout


def test_a_registered_provider_is_built_from_settings(tmp_path: Path) -> None:
    seen: list[LLMOptions] = []

    def build_echo(settings: Settings, options: LLMOptions) -> ScriptedLLM:
        seen.append(options)
        return ScriptedLLM(lambda messages: messages[-1].content, model_id=f"echo:{settings.llm_model}",
                           **options.as_kwargs())

    register_llm_provider("echo_test", build_echo, replace=True)
    assert "echo_test" in llm_provider_names()
    llm = build_llm(Settings(home=tmp_path, llm_provider="echo_test", llm_model="m1", llm_timeout=7.0, no_cache=True))
    assert llm.model_id == "echo:m1" and seen[0].timeout == 7.0
    with pytest.raises(ValueError, match="already registered"):
        register_llm_provider("echo_test", build_echo)


def test_an_unknown_provider_lists_the_registered_ones(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown KAG_LLM_PROVIDER 'nope'.*llamacpp, openai"):
        build_llm(Settings(home=tmp_path, llm_provider="nope"))
