"""The prompt modules build messages and read reply text; they depend on the models layer only
(never on the solver, whose parser turns reply text into plans)."""

from __future__ import annotations

import ast
from pathlib import Path

import kag_neo4j.prompts

ALLOWED = ("kag_neo4j.models", "kag_neo4j.prompts", "kag_neo4j.errors")


def test_prompt_modules_import_only_models_errors_and_each_other() -> None:
    folder = Path(kag_neo4j.prompts.__file__).parent
    wrong = []
    for path in sorted(folder.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            for name in names:
                if name.startswith("kag_neo4j") and not name.startswith(ALLOWED):
                    wrong.append(f"{path.name}: {name}")
    assert wrong == []
