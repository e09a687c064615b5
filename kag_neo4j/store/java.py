"""Find a Java runtime that Neo4j 5.26 accepts (17 or 21)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from kag_neo4j.errors import ServerError

SUPPORTED_MAJORS = (17, 21)
_JVM_DIRS = (Path("/usr/lib/jvm"), Path("/usr/java"), Path("/opt/java"), Path("/Library/Java/JavaVirtualMachines"))


def java_major(java: Path) -> int | None:
    """The major version of a ``java`` executable, or None when it does not run."""
    try:
        out = subprocess.run([str(java), "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.search(r'version "(\d+)(?:\.(\d+))?', out.stderr + out.stdout)
    if not match:
        return None
    major = int(match.group(1))
    return int(match.group(2)) if major == 1 and match.group(2) else major


def _candidates(java_home: Path | None) -> list[Path]:
    found: list[Path] = []
    if java_home:
        found.append(java_home / "bin" / "java")
    if os.environ.get("JAVA_HOME"):
        found.append(Path(os.environ["JAVA_HOME"]) / "bin" / "java")
    on_path = shutil.which("java")
    if on_path:
        found.append(Path(on_path))
    for root in _JVM_DIRS:
        if root.is_dir():
            found.extend(sorted(root.glob("*/bin/java")) + sorted(root.glob("*/Contents/Home/bin/java")))
    return found


def find_java(java_home: Path | None = None) -> Path:
    """A java executable of a supported major version; ``java_home`` (KAG_JAVA_HOME) wins."""
    seen: list[str] = []
    for candidate in _candidates(java_home):
        if not candidate.exists():
            continue
        major = java_major(candidate)
        seen.append(f"{candidate} ({major or 'unknown'})")
        if major in SUPPORTED_MAJORS:
            return candidate
        if java_home and candidate == java_home / "bin" / "java":
            raise ServerError(
                f"KAG_JAVA_HOME={java_home} is Java {major}; Neo4j 5.26 needs Java 17 or 21"
            )
    raise ServerError(
        "no Java 17 or 21 found for Neo4j 5.26 (looked at: "
        + (", ".join(seen) or "nothing")
        + "). Install one (Debian: apt-get install openjdk-17-jre-headless) or set KAG_JAVA_HOME"
    )
