"""Assemble a Neo4j Community + OpenGDS + APOC runtime from Maven Central into the user cache.

Maven resolves the runtime closure of ``org.neo4j:neo4j`` (the server) into ``lib/`` and the GDS
and APOC modules into ``plugins/``. A stamp file records a complete copy, so later starts need
no network. Maven's local repository (``KAG_HOME/m2``) is reused across versions.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from kag_neo4j.config import Settings
from kag_neo4j.errors import ServerError

PLUGIN_GROUPS = ("org.neo4j.gds", "org.neo4j.procedure")
_STAMP = ".provisioned.json"
_DOWNLOADED = re.compile(r"Downloaded from \S+: (\S+)")


@dataclass(frozen=True)
class Runtime:
    """A provisioned runtime: where its jars are and which versions they are."""

    root: Path
    neo4j_version: str
    gds_version: str
    apoc_version: str

    @property
    def lib(self) -> Path:
        return self.root / "lib"

    @property
    def plugins(self) -> Path:
        return self.root / "plugins"

    def entry_point(self) -> str:
        """The server main class: ``Neo4jCommunity`` in late 2025.x+, ``CommunityEntryPoint`` before."""
        import zipfile

        jar = next(self.lib.glob(f"org.neo4j.neo4j-{self.neo4j_version}.jar"), None)
        if jar is not None:
            with zipfile.ZipFile(jar) as archive:
                if "org/neo4j/server/Neo4jCommunity.class" in archive.namelist():
                    return "org.neo4j.server.Neo4jCommunity"
        return "org.neo4j.server.CommunityEntryPoint"


def _versions(settings: Settings) -> dict[str, str]:
    return {"neo4j": settings.neo4j_version, "gds": settings.gds_version, "apoc": settings.apoc_version}


def runtime_for(settings: Settings) -> Runtime:
    return Runtime(settings.server_dir, settings.neo4j_version, settings.gds_version, settings.apoc_version)


def is_provisioned(settings: Settings) -> bool:
    stamp = settings.server_dir / _STAMP
    if not stamp.is_file():
        return False
    try:
        recorded = json.loads(stamp.read_text())
    except (OSError, ValueError):
        return False
    return recorded.get("versions") == _versions(settings)


def _pom(settings: Settings) -> str:
    template = resources.files("kag_neo4j.store").joinpath("runtime/pom.xml").read_text(encoding="utf-8")
    return (
        template.replace("@NEO4J_VERSION@", settings.neo4j_version)
        .replace("@GDS_VERSION@", settings.gds_version)
        .replace("@APOC_VERSION@", settings.apoc_version)
    )


def _maven() -> str:
    mvn = shutil.which("mvn")
    if mvn is None:
        raise ServerError(
            "Maven (mvn) is needed once to fetch Neo4j, GDS and APOC from Maven Central; "
            "install it (Debian: apt-get install maven), or set NEO4J_URI to an existing Neo4j"
        )
    return mvn


def _copy_dependencies(
    mvn: str, pom: Path, repo: Path, out: Path, group_filter: str, on_download: Callable[[str], None]
) -> None:
    command = [
        mvn, "-B", "-f", str(pom), f"-Dmaven.repo.local={repo}",
        "dependency:copy-dependencies", "-DincludeScope=runtime", "-Dmdep.prependGroupId=true",
        f"-DoutputDirectory={out}", group_filter,
    ]
    _run_maven(
        command, f"the Neo4j runtime (Neo4j {pom.parent.name})", "KAG_NEO4J_VERSION, KAG_GDS_VERSION, KAG_APOC_VERSION",
        on_download,
    )


def _run_maven(command: list[str], what: str, versions: str, on_download: Callable[[str], None] | None) -> None:
    """Run Maven, reporting each downloaded artifact; a failure names ``what`` and the settings to check."""
    tail: list[str] = []
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            tail = (tail + [line.rstrip()])[-40:]
            match = _DOWNLOADED.search(line)
            if match and on_download is not None:
                on_download(match.group(1).rsplit("/", 1)[-1])
        code = proc.wait()
    if code != 0:
        errors = [line for line in tail if "[ERROR]" in line] or tail
        raise ServerError(
            f"Maven could not fetch {what}; its output ends with:\n" + "\n".join(errors[-12:])
            + f"\nCheck that Maven Central is reachable and the versions exist ({versions})."
        )


@contextmanager
def exclusive(lock_file: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``lock_file`` across processes (concurrent first starts provision
    one after another instead of overwriting each other's staging folder; starts choose ports one
    after another)."""
    lock_file.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_file, "a+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def provision(settings: Settings, on_download: Callable[[str], None] | None = None) -> Runtime:
    """Make sure the runtime jars are in the cache; fetch them with Maven the first time."""
    runtime = runtime_for(settings)
    if is_provisioned(settings):
        return runtime
    root = settings.server_dir
    with exclusive(root.parent / f".{root.name}.lock"):
        if is_provisioned(settings):  # another process finished it while we waited
            return runtime
        return _provision(settings, runtime, on_download)


def _provision(settings: Settings, runtime: Runtime, on_download: Callable[[str], None] | None) -> Runtime:
    mvn = _maven()
    root = settings.server_dir
    root.mkdir(parents=True, exist_ok=True)
    pom = root / "pom.xml"
    pom.write_text(_pom(settings), encoding="utf-8")
    repo = Path(os.environ.get("KAG_MAVEN_REPO", settings.home / "m2"))
    staging = root / "staging"
    shutil.rmtree(staging, ignore_errors=True)
    callback = on_download or (lambda _name: None)
    groups = ",".join(PLUGIN_GROUPS)
    _copy_dependencies(mvn, pom, repo, staging / "lib", f"-DexcludeGroupIds={groups}", callback)
    _copy_dependencies(mvn, pom, repo, staging / "plugins", f"-DincludeGroupIds={groups}", callback)
    for name in ("lib", "plugins"):
        shutil.rmtree(root / name, ignore_errors=True)
        (staging / name).rename(root / name)
    staging.rmdir()
    _check_layout(runtime)
    digest = hashlib.sha256("".join(sorted(p.name for p in runtime.lib.iterdir())).encode()).hexdigest()
    (root / _STAMP).write_text(json.dumps({"versions": _versions(settings), "lib_digest": digest}), encoding="utf-8")
    return runtime


BROWSER_ARTIFACT = "org.neo4j.client:neo4j-browser"


def browser_jar(settings: Settings) -> Path:
    """Where Neo4j Browser's jar (its web application, served by the server's HTTP connector) is kept."""
    return settings.home / "server" / f"neo4j-browser-{settings.browser_version}.jar"


def provision_browser(settings: Settings, on_download: Callable[[str], None] | None = None) -> Path:
    """Fetch Neo4j Browser's jar from Maven Central the first time it is asked for; return its path."""
    jar = browser_jar(settings)
    if jar.exists():
        return jar
    with exclusive(jar.parent / f".{jar.name}.lock"):
        if jar.exists():
            return jar
        staging = jar.parent / f"{jar.name}.staging"
        shutil.rmtree(staging, ignore_errors=True)
        repo = Path(os.environ.get("KAG_MAVEN_REPO", settings.home / "m2"))
        command = [
            _maven(), "-B", f"-Dmaven.repo.local={repo}", "dependency:copy",
            f"-Dartifact={BROWSER_ARTIFACT}:{settings.browser_version}", f"-DoutputDirectory={staging}",
        ]
        _run_maven(command, f"Neo4j Browser {settings.browser_version}", "KAG_BROWSER_VERSION", on_download)
        fetched = next(staging.glob("neo4j-browser-*.jar"), None)
        if fetched is None:
            raise ServerError(f"Maven reported success but left no Neo4j Browser jar in {staging}; delete it and retry")
        fetched.rename(jar)
        shutil.rmtree(staging, ignore_errors=True)
    return jar


def _check_layout(runtime: Runtime) -> None:
    server = runtime.lib / f"org.neo4j.neo4j-{runtime.neo4j_version}.jar"
    gds = list(runtime.plugins.glob("org.neo4j.gds.proc-*.jar"))
    apoc = list(runtime.plugins.glob("org.neo4j.procedure.apoc-core-*.jar"))
    missing = [what for what, ok in (("Neo4j server jar", server.exists()), ("GDS", gds), ("APOC core", apoc)) if not ok]
    if missing:
        raise ServerError(f"the runtime in {runtime.root} lacks {', '.join(missing)}; delete it and retry")
