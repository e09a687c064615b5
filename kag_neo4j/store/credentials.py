"""The local server's password: generated once per instance, kept owner-only, read by every command.

``KAG_HOME/server/instances/<name>/credentials.json`` (mode 0600, in a 0700 instance directory)
holds the password of the ``neo4j`` user. It is set with Neo4j's own admin tool
(``dbms set-initial-password``) before the instance's first start; Neo4j applies it while the
``neo4j`` user still has the factory password, which is also what lets an instance created
before authentication was on take the new password on its next start.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
from pathlib import Path

from pydantic import BaseModel, SecretStr, ValidationError

from kag_neo4j.errors import ServerError
from kag_neo4j.store.provision import Runtime

USERNAME = "neo4j"
_FILE = "credentials.json"
_ADMIN_TOOL = "org.neo4j.cli.AdminTool"


class Credentials(BaseModel):
    """What ``credentials.json`` holds."""

    username: str = USERNAME
    password: SecretStr

    @property
    def auth(self) -> tuple[str, str]:
        return self.username, self.password.get_secret_value()


def credentials_file(instance: Path) -> Path:
    return instance / _FILE


def secure_directory(path: Path) -> None:
    """Create ``path`` (and parents) and make it owner-only (0700)."""
    path.mkdir(parents=True, exist_ok=True)
    os.chmod(path, 0o700)


def load_credentials(instance: Path) -> Credentials | None:
    """The instance's credentials, or None when it has none yet (an instance from before auth)."""
    path = credentials_file(instance)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ServerError(f"cannot read the local server's password file {path} ({exc}); check its owner") from exc
    try:
        return Credentials.model_validate_json(text)
    except ValidationError as exc:
        raise ServerError(
            f"the local server's password file {path} is not valid ({exc.errors()[0]['msg']}); it must be "
            '{"username": "neo4j", "password": "..."} with the password of the instance\'s neo4j user'
        ) from exc


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically; the file is 0600 from its creation on."""
    partial = path.with_name(path.name + ".partial")
    partial.unlink(missing_ok=True)
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(partial, path)


def create_credentials(instance: Path) -> Credentials:
    """Generate a password (256 bits, URL-safe) and keep it in the instance's credentials file."""
    secure_directory(instance)
    credentials = Credentials(password=SecretStr(secrets.token_urlsafe(32)))
    payload = {"username": credentials.username, "password": credentials.password.get_secret_value()}
    write_private(credentials_file(instance), json.dumps(payload) + "\n")
    return credentials


def _argfile_word(value: str) -> str:
    """``value`` as one word of a picocli argument file: quoted, so ``#``, blanks and quotes stay in it."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def set_initial_password(
    java: Path, runtime: Runtime, instance: Path, conf: Path, credentials: Credentials
) -> None:
    """Run ``neo4j-admin dbms set-initial-password`` for the instance (before Neo4j starts).

    The password travels in an owner-only argument file (``@file``), never on a command line
    that other local users could read in the process list.
    """
    argfile = instance / "run" / "set-initial-password.args"
    secure_directory(argfile.parent)
    write_private(argfile, f"dbms\nset-initial-password\n--\n{_argfile_word(credentials.password.get_secret_value())}\n")
    command = [
        str(java), "-Xmx256m", "-cp", f"{runtime.plugins}/*{os.pathsep}{runtime.lib}/*",
        _ADMIN_TOOL, f"@{argfile}",
    ]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, cwd=instance, stdin=subprocess.DEVNULL, timeout=300,
            env={**os.environ, "NEO4J_HOME": str(instance), "NEO4J_CONF": str(conf)},
        )
    except subprocess.TimeoutExpired as exc:
        raise ServerError(f"neo4j-admin set-initial-password did not finish within 300 s for {instance}") from exc
    finally:
        argfile.unlink(missing_ok=True)
    if done.returncode != 0:
        output = (done.stdout + done.stderr).replace(credentials.password.get_secret_value(), "********")
        useful = [line for line in output.splitlines() if line.strip() and not line.lstrip().startswith("at ")]
        raise ServerError(
            f"neo4j-admin set-initial-password failed for the local server {instance} "
            f"(exit {done.returncode}):\n" + "\n".join(useful[:15])
            + "\nAn invalid setting (KAG_SERVER_HEAP, KAG_SERVER_PAGECACHE) is the usual cause."
        )
