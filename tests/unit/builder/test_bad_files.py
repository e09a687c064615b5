"""Every bad file of a folder is named with its reason; the good files around it load."""

from __future__ import annotations

from pathlib import Path

import pytest

from kag_neo4j.builder.readers import READERS, ReadReport, read_file, read_path
from kag_neo4j.builder.readers.common import ReadContext
from kag_neo4j.errors import ReadError
from tests.badfiles import BAD_FILES, write_bad_files, write_good_files


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, ReadReport, list]:
    root = tmp_path_factory.mktemp("bad-folder")
    write_bad_files(root)
    write_good_files(root)
    report = ReadReport()
    documents = list(read_path(root, report=report))
    return root, report, documents


def _outcome(name: str, report: ReadReport) -> tuple[str, str]:
    for failure in report.failures:
        if Path(failure.path).name == name:
            return "refused", failure.reason
    for skipped in report.skipped:
        if Path(skipped.path).name == name:
            return "skipped", skipped.reason
    for warning in report.warnings:
        if f"{name}:" in warning:
            return "warned", warning
    return "loaded", ""


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_each_bad_file_is_named_with_its_reason(folder: tuple[Path, ReadReport, list], name: str) -> None:
    _, report, _ = folder
    outcome, reason = _outcome(name, report)
    assert outcome == BAD_FILES[name].outcome
    assert BAD_FILES[name].reason in reason


def test_every_good_file_loads_next_to_the_bad_ones(folder: tuple[Path, ReadReport, list], tmp_path: Path) -> None:
    _, _, documents = folder
    good = write_good_files(tmp_path)
    for name, word in good.items():
        texts = [doc.text for doc in documents if Path(doc.source.split("#")[0]).name == name]
        assert texts, name
        assert any(word.casefold() in text.casefold() for text in texts), name
    assert len(BAD_FILES) >= 25


def test_deeply_nested_json_is_a_read_error_not_a_crash(tmp_path: Path) -> None:
    write_bad_files(tmp_path)
    with pytest.raises(ReadError) as info:
        read_file(tmp_path / "deeply-nested.json")
    assert info.value.path.endswith("deeply-nested.json")


def test_any_exception_of_a_reader_becomes_a_read_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def exploding(path: Path, ctx: ReadContext) -> list:
        raise ZeroDivisionError("the parser divided by zero")

    monkeypatch.setitem(READERS, ".boom", exploding)
    (tmp_path / "a.boom").write_text("x")
    (tmp_path / "b.txt").write_text("The railway opened in 1902.")
    report = ReadReport()
    documents = list(read_path(tmp_path, report=report))
    assert [Path(d.source).name for d in documents] == ["b.txt"]
    assert len(report.failures) == 1
    assert "ZeroDivisionError: the parser divided by zero" in report.failures[0].reason
    assert "corrupt" in report.failures[0].reason


def test_line_limit_is_an_option(tmp_path: Path) -> None:
    from kag_neo4j.builder.readers import ReadOptions

    path = tmp_path / "long.txt"
    path.write_text("word " * 400)
    assert read_file(path)
    with pytest.raises(ReadError, match="without a line break"):
        read_file(path, options=ReadOptions(max_line_chars=1000))
