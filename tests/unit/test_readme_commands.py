"""CI runs the README's commands verbatim: the first code block (install + main job) and the test
command. If someone edits one and not the other, this fails before a fresh machine does."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _bash_blocks(text: str) -> list[list[str]]:
    blocks = re.findall(r"```bash\n(.*?)```", text, flags=re.S)
    return [[line.split("#", 1)[0].rstrip() for line in block.splitlines() if line.split("#", 1)[0].strip()]
            for block in blocks]


def _ci_lines() -> list[str]:
    return [line.strip() for line in (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()]


def test_ci_runs_the_first_code_block_of_the_readme_verbatim() -> None:
    main_job = _bash_blocks((REPO / "README.md").read_text(encoding="utf-8"))[0]
    assert main_job, "the README's first code block is the main job"
    ci = _ci_lines()
    for command in main_job:
        assert command.strip() in ci, f"README runs {command!r}; .ci/run does not"
    ci_at = [ci.index(command.strip()) for command in main_job]
    assert ci_at == sorted(ci_at), "CI runs the README's commands in the README's order"


def test_ci_runs_the_readme_test_command_after_the_main_job() -> None:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Run the tests"):]
    test_command = _bash_blocks(section)[0][0]
    assert test_command.startswith("python -m pytest")
    ci = _ci_lines()
    assert test_command in ci
    last_main = max(ci.index(c.strip()) for c in _bash_blocks(text)[0])
    assert ci.index(test_command) > last_main


def test_there_is_no_parallel_install_script() -> None:
    scripts = sorted(p.name for p in (REPO / ".ci").iterdir())
    assert scripts == ["run"], f"CI installs only through the README's commands, found {scripts}"
