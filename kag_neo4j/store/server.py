"""The local Neo4j server: start, stop, status and logs, with its state recorded on disk.

An instance lives in ``KAG_HOME/server/instances/<name>`` (conf, data, logs, run; owner-only).
``state.json`` there records the pid and Bolt port of a running server, so every other command
finds it; ``credentials.json`` (0600, :mod:`kag_neo4j.store.credentials`) holds the password of
its ``neo4j`` user. The server listens on loopback only, with authentication on, and loads only
the GDS and APOC procedures kag-neo4j calls (:mod:`kag_neo4j.store.allowlist`).

With ``KAG_SERVER_GDS=false`` (``kag-neo4j server start --no-gds``) the instance loads its own
plugins folder, the runtime's without the GDS jars: a Neo4j like Aura Free or a plain server, on
which Personalized PageRank runs in plain Cypher (docs/server.md).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from urllib.parse import urlsplit

from kag_neo4j.config import Settings
from kag_neo4j.errors import ServerError
from kag_neo4j.store import allowlist
from kag_neo4j.store.credentials import (
    Credentials,
    create_credentials,
    credentials_file,
    load_credentials,
    secure_directory,
    set_initial_password,
    write_private,
)
from kag_neo4j.store.java import find_java
from kag_neo4j.store.provision import Runtime, exclusive, provision, provision_browser

_JVM_FLAGS = (
    "-XX:+UseG1GC", "-XX:-OmitStackTraceInFastThrow", "-XX:+UnlockExperimentalVMOptions",
    "-XX:+TrustFinalNonStaticFields", "-XX:+DisableExplicitGC", "-Djdk.nio.maxCachedBufferSize=1024",
    "-Dio.netty.tryReflectionSetAccessible=true", "-Djdk.tls.ephemeralDHKeySize=2048",
    "-Djdk.tls.rejectClientInitiatedRenegotiation=true",
    "--add-opens=java.base/java.nio=ALL-UNNAMED", "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED", "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
    "--enable-native-access=ALL-UNNAMED", "-Dlog4j2.disable.jmx=true", "-Dfile.encoding=UTF-8",
    "-Djol.skipHotspotSAAttach=true",
)


@dataclass(frozen=True)
class ServerState:
    """What ``state.json`` records about a running local server."""

    pid: int
    port: int
    instance: str
    neo4j_version: str
    gds_version: str  # "" when started without GDS
    apoc_version: str
    started_at: float
    http_port: int = 0  # 0: no HTTP connector, so no Neo4j Browser

    @property
    def uri(self) -> str:
        return f"bolt://127.0.0.1:{self.port}"

    @property
    def browser_url(self) -> str | None:
        """Neo4j Browser, with the connect form filled in for this server (None without --browser)."""
        if not self.http_port:
            return None
        return f"http://127.0.0.1:{self.http_port}/browser/?dbms=neo4j://neo4j@127.0.0.1:{self.port}"


@dataclass(frozen=True)
class ServerStatus:
    running: bool
    state: ServerState | None
    note: str = ""


def _instances_root(settings: Settings) -> Path:
    return settings.home / "server" / "instances"


def instance_dir(settings: Settings) -> Path:
    """One server instance (conf, data, logs) per KAG_SERVER_NAME; all share the runtime jars."""
    return _instances_root(settings) / settings.server_name


def _state_file(settings: Settings) -> Path:
    return instance_dir(settings) / "state.json"


def console_log(settings: Settings) -> Path:
    return instance_dir(settings) / "logs" / "console.log"


def _load_state(settings: Settings) -> ServerState | None:
    return _load_state_file(_state_file(settings))


def _load_state_file(path: Path) -> ServerState | None:
    if not path.exists():
        return None
    try:
        return ServerState(**json.loads(path.read_text()))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, TypeError) as exc:
        raise ServerError(f"the server state file {path} is unreadable ({exc}); delete it and retry") from exc


def _pid_is_our_server(pid: int, instance: str) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return False
    cmdline = Path(f"/proc/{pid}/cmdline")
    if cmdline.exists():
        try:
            args = cmdline.read_bytes().split(b"\0")
        except OSError:
            return False
        return f"--home-dir={instance}".encode() in args
    return True  # no /proc (macOS): trust the live pid


def read_state(settings: Settings) -> ServerState | None:
    """The state of the running local server, or None (a stale record is ignored)."""
    state = _load_state(settings)
    if state is None or not _pid_is_our_server(state.pid, state.instance):
        return None
    return state


def credentials(settings: Settings) -> Credentials | None:
    """The password of the instance's ``neo4j`` user (None: an instance that never ran with auth)."""
    return load_credentials(instance_dir(settings))


def credentials_path(settings: Settings) -> Path:
    return credentials_file(instance_dir(settings))


def instance_auth(settings: Settings) -> tuple[str, str] | None:
    """What a driver authenticates to the settings' local instance with."""
    found = credentials(settings)
    return found.auth if found is not None else None


def _loopback_port(uri: str) -> int | None:
    """The port of a plain ``bolt://`` / ``neo4j://`` URI on this machine's loopback, else None."""
    parsed = urlsplit(uri)
    if parsed.scheme not in ("bolt", "neo4j") or parsed.hostname not in ("127.0.0.1", "localhost", "::1"):
        return None
    try:
        return parsed.port or 7687
    except ValueError:
        return None


def auth_for_uri(settings: Settings, uri: str) -> tuple[str, str] | None:
    """The credentials of the running local instance that serves ``uri`` (any instance name), or None.

    This is what keeps ``export NEO4J_URI=$(kag-neo4j server uri)`` working without a password.
    """
    port = _loopback_port(uri)
    root = _instances_root(settings)
    if port is None or not root.is_dir():
        return None
    for instance in sorted(root.iterdir()):
        try:
            state = _load_state_file(instance / "state.json")
        except ServerError:
            continue  # an unreadable record of another instance is not this URI's server
        if state is not None and state.port == port and _pid_is_our_server(state.pid, state.instance):
            found = load_credentials(instance)
            return found.auth if found is not None else None
    return None


def status(settings: Settings) -> ServerStatus:
    state = _load_state(settings)
    if state is None:
        return ServerStatus(False, None, "not running")
    if not _pid_is_our_server(state.pid, state.instance):
        return ServerStatus(
            False, state, f"stale record: pid {state.pid} in {_state_file(settings)} is not running (it will be replaced on start)"
        )
    return ServerStatus(True, state, f"running on {state.uri} (pid {state.pid})")


def port_is_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _choose_port(preferred: int, avoid: int = 0) -> int:
    """``preferred`` when it is free, else a free port the system picks (never ``avoid``)."""
    if preferred != avoid and port_is_free(preferred):
        return preferred
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


#: the jars of the GDS plugin in the runtime's plugins folder (APOC's and their shared libraries stay)
_GDS_JARS = "org.neo4j.gds.*.jar"


def plugins_dir(instance: Path, runtime: Runtime, settings: Settings) -> Path:
    """The plugins folder the instance loads: the runtime's, or (``server_gds`` off) the instance's
    own copy of it without GDS, re-made on every start (hard links where the file system allows)."""
    if settings.server_gds:
        return runtime.plugins
    own = instance / "plugins"
    if own.exists():
        shutil.rmtree(own)
    secure_directory(own)
    gds = {jar.name for jar in runtime.plugins.glob(_GDS_JARS)}
    for jar in sorted(runtime.plugins.glob("*.jar")):
        if jar.name in gds:
            continue
        try:
            os.link(jar, own / jar.name)
        except OSError:
            shutil.copy2(jar, own / jar.name)
    return own


def _write_config(instance: Path, plugins: Path, port: int, http_port: int, settings: Settings) -> Path:
    conf = instance / "conf"
    for sub in ("conf", "data", "logs", "run", "import"):
        secure_directory(instance / sub)
    lines = [
        "# Written by kag-neo4j on every start; edits are overwritten.",
        f"server.directories.data={instance / 'data'}",
        f"server.directories.logs={instance / 'logs'}",
        f"server.directories.run={instance / 'run'}",
        f"server.directories.import={instance / 'import'}",
        f"server.directories.plugins={plugins}",
        "server.default_listen_address=127.0.0.1",
        "server.bolt.enabled=true",
        f"server.bolt.listen_address=127.0.0.1:{port}",
        # the routing table a neo4j:// driver fetches names this address (default: localhost:7687,
        # which is another instance, or nothing, whenever this one runs on another port)
        f"server.bolt.advertised_address=127.0.0.1:{port}",
        # HTTP only for Neo4j Browser (--browser), on the loopback address like Bolt
        f"server.http.enabled={'true' if http_port else 'false'}",
        *([f"server.http.listen_address=127.0.0.1:{http_port}"] if http_port else []),
        "server.https.enabled=false",
        "dbms.security.auth_enabled=true",
        f"dbms.security.procedures.allowlist={allowlist.setting_value()}",
        f"dbms.security.procedures.unrestricted={allowlist.setting_value()}",
        f"server.memory.pagecache.size={settings.server_pagecache}",
        "db.tx_log.rotation.retention_policy=100M size",
        "dbms.usage_report.enabled=false",
    ]
    (conf / "neo4j.conf").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (conf / "apoc.conf").write_text("apoc.export.file.enabled=false\n", encoding="utf-8")
    return conf


def _useful_log_lines(settings: Settings, limit: int = 25) -> str:
    path = console_log(settings)
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return f"(no server log at {path})"
    important = [line for line in lines if " ERROR " in line or "Exception" in line or "Caused by" in line]
    chosen = (important[-limit:] if important else lines[-limit:])
    return "\n".join(chosen)


def _ping(uri: str, auth: tuple[str, str]) -> bool:
    """True when the default database answers; raises ``neo4j.exceptions.AuthError`` on a refused password."""
    import neo4j
    from neo4j.exceptions import AuthError

    try:
        with neo4j.GraphDatabase.driver(uri, auth=auth, connection_timeout=3) as driver:
            with driver.session() as session:  # the default database is online, not just Bolt
                session.run("RETURN 1").consume()
        return True
    except AuthError:
        raise
    except Exception:  # noqa: BLE001 - any other failure means "not ready yet"
        return False


def check_plugins(uri: str, auth: tuple[str, str] | None, *, gds: bool = True) -> dict[str, str | None]:
    """Versions of Neo4j, GDS and APOC as the server reports them (raises when one is missing;
    ``gds`` False: a server without GDS, whose ``gds`` is None)."""
    import neo4j

    from kag_neo4j.store import cypher

    with neo4j.GraphDatabase.driver(uri, auth=auth) as driver:
        record = driver.execute_query(cypher.query("store/plugin_versions" if gds else "store/plugin_versions_apoc")).records[0]
    return {"neo4j": record["neo4j"], "gds": record["gds"] if gds else None, "apoc": record["apoc"]}


def has_gds(state: ServerState) -> bool:
    """Whether the running instance was started with GDS."""
    return bool(state.gds_version)


def _password_refused(settings: Settings, instance: Path, migrated: bool) -> ServerError:
    path = credentials_file(instance)
    why = (
        "this instance was created before kag-neo4j turned authentication on, and its neo4j user's "
        "password was changed since, so the generated one could not be set"
        if migrated else "the instance's neo4j user has another password than the one kept there"
    )
    return ServerError(
        f"the local server {settings.server_name!r} refused the password in {path}: {why}. Put that "
        f'user\'s password into {path} ({{"username": "neo4j", "password": "..."}}, mode 0600), '
        f"or move {instance / 'data'} away to start this instance empty with a new password."
    )


def _ensure_password(java: Path, runtime: Runtime, instance: Path, conf: Path) -> tuple[Credentials, bool]:
    """The instance's credentials, set as the neo4j user's password when Neo4j has not got it yet.

    Returns (credentials, migrated): migrated is True for an instance that has data but no
    password yet (it was created before authentication was on).
    """
    initialized = (instance / "data" / "databases" / "system").exists()
    known = load_credentials(instance)
    created = known is None
    if known is None:
        known = create_credentials(instance)
    if created or not initialized:  # a first start, an instance from before auth, or its data removed
        try:
            set_initial_password(java, runtime, instance, conf, known)
        except ServerError:
            if created:
                credentials_file(instance).unlink(missing_ok=True)
            raise
    return known, created and initialized


def start(
    settings: Settings,
    *,
    on_download: Callable[[str], None] | None = None,
    on_wait: Callable[[float], None] | None = None,
) -> tuple[ServerState, bool]:
    """Start the local server (provisioning it first); returns (state, started_now)."""
    current = status(settings)
    if current.running and current.state is not None:
        return current.state, False
    runtime = provision(settings, on_download)
    # one start at a time per KAG_HOME, from choosing the port until the server answers: two
    # instances starting at once would otherwise pick the same free port, and one would take
    # the other's server for its own
    with exclusive(settings.server_dir.parent / ".start.lock"):
        current = status(settings)
        if current.running and current.state is not None:
            return current.state, False
        return _launch(settings, runtime, on_wait, on_download), True


def _launch(
    settings: Settings, runtime: Runtime, on_wait: Callable[[float], None] | None,
    on_download: Callable[[str], None] | None = None,
) -> ServerState:
    from neo4j.exceptions import AuthError

    java = find_java(settings.java_home)
    instance = instance_dir(settings)
    secure_directory(instance)
    lock = instance / "data" / "databases" / "store_lock"
    port = _choose_port(settings.server_port)
    plugins = plugins_dir(instance, runtime, settings)
    classpath = [f"{plugins}/*", f"{runtime.lib}/*"]
    http_port = 0
    if settings.server_browser:
        classpath.append(str(provision_browser(settings, on_download)))
        http_port = _choose_port(settings.server_http_port, avoid=port)
    conf = _write_config(instance, plugins, port, http_port, settings)
    known, migrated = _ensure_password(java, runtime, instance, conf)
    log = console_log(settings)
    log.parent.mkdir(parents=True, exist_ok=True)
    command = [
        str(java), "-Xms512m", f"-Xmx{settings.server_heap}", *_JVM_FLAGS,
        "-cp", os.pathsep.join(classpath),
        runtime.entry_point(), f"--home-dir={instance}", f"--config-dir={conf}", "--console-mode",
    ]
    with log.open("ab") as out:
        out.write(f"\n--- kag-neo4j start {time.strftime('%Y-%m-%d %H:%M:%S')} port {port}\n".encode())
        out.flush()
        proc = subprocess.Popen(
            command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            cwd=instance, start_new_session=True,
        )
    state = ServerState(
        pid=proc.pid, port=port, instance=str(instance), neo4j_version=runtime.neo4j_version,
        gds_version=runtime.gds_version if settings.server_gds else "", apoc_version=runtime.apoc_version,
        started_at=time.time(), http_port=http_port,
    )
    write_private(_state_file(settings), json.dumps(asdict(state)))
    began = time.monotonic()
    while True:
        waited = time.monotonic() - began
        code = proc.poll()
        if code is not None:
            _state_file(settings).unlink(missing_ok=True)
            hint = ""
            if code == 2 and lock.exists():
                hint = f"\nAnother Neo4j may be using {instance / 'data'} (store lock); stop it first."
            if code == 3:
                hint = "\nInvalid configuration or more memory asked than the machine has (KAG_SERVER_HEAP, KAG_SERVER_PAGECACHE)."
            raise ServerError(
                f"Neo4j exited with code {code} during start-up. Useful lines of {log}:\n"
                + _useful_log_lines(settings) + hint
            )
        try:
            if _ping(state.uri, known.auth):
                break
        except AuthError as exc:
            _terminate(proc.pid, 30)
            _state_file(settings).unlink(missing_ok=True)
            raise _password_refused(settings, instance, migrated) from exc
        if waited > settings.server_start_timeout:
            _terminate(proc.pid, 30)
            _state_file(settings).unlink(missing_ok=True)
            raise ServerError(
                f"Neo4j did not answer on {state.uri} within {settings.server_start_timeout:.0f} s "
                f"(KAG_SERVER_START_TIMEOUT). Last lines of {log}:\n" + _useful_log_lines(settings)
            )
        if on_wait:
            on_wait(waited)
        time.sleep(0.5)
    try:
        check_plugins(state.uri, known.auth, gds=settings.server_gds)
    except Exception as exc:
        plugins = "GDS/APOC" if settings.server_gds else "APOC"
        raise ServerError(
            f"Neo4j started on {state.uri} but {plugins} do not answer ({exc}). Log:\n" + _useful_log_lines(settings)
        ) from exc
    return state


def _terminate(pid: int, timeout: float) -> bool:
    """SIGTERM, wait up to ``timeout`` seconds, then SIGKILL; True when it ended cleanly."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return True
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            finished, _ = os.waitpid(pid, os.WNOHANG)
            if finished == pid:
                return True
        except ChildProcessError:
            pass  # not our child: poll its existence instead
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.25)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return True
    return False


def stop(settings: Settings, timeout: float = 60.0) -> str:
    """Stop the local server; returns what happened in words."""
    current = status(settings)
    if current.state is None:
        return "not running"
    if not current.running:
        _state_file(settings).unlink(missing_ok=True)
        return f"not running (removed a stale record of pid {current.state.pid})"
    clean = _terminate(current.state.pid, timeout)
    _state_file(settings).unlink(missing_ok=True)
    return "stopped" if clean else f"did not stop within {timeout:.0f} s; killed pid {current.state.pid}"


def log_tail(settings: Settings, lines: int = 50) -> list[str]:
    path = console_log(settings)
    if not path.exists():
        return []
    return path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:]
