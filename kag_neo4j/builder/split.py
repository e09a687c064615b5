"""Split documents into chunks: by length with overlap, or along the heading outline.

* Paragraphs (blank-line separated; a fenced code block is one paragraph) stay whole when they
  fit, and consecutive paragraphs are packed up to ``max_chars``.
* A paragraph longer than that is cut at sentence boundaries (English ``.!?``, Chinese
  ``。！？；…``, line breaks); a sentence longer than that at a space (or anywhere in CJK text).
* Consecutive chunks of one section overlap by up to ``overlap`` characters, taken as whole
  trailing sentences of the previous chunk when they fit.
* ``outline`` mode never packs across headings; ``length`` mode does. Either way every chunk
  carries the heading path (``title_path``) where it starts. Headings are Markdown syntax in
  documents whose reader kept them (Markdown, HTML, DOCX, PDF bookmarks); in plain text only an
  explicit ``outline`` mode reads them. ``auto`` is ``outline`` for those documents, else
  ``length``.
* Ids are deterministic: ``<document id>#<paragraph>#<index>``, where ``paragraph`` numbers the
  document's body paragraphs from 0 and ``index`` is the piece of that paragraph the chunk
  starts with (0 unless the paragraph was cut).
* A document of structured records (CSV/JSON rows, no text) gives one chunk per record.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from kag_neo4j.builder.records import ChunkRecord, SourceDocument

SplitMode = Literal["auto", "length", "outline"]

_ATX = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(```|~~~)")

_ABBREVIATIONS = frozenset(
    """mr mrs ms dr prof st jr sr vs etc e.g i.e no nos inc ltd co corp fig figs vol vols pp ca approx
    u.s u.k jan feb mar apr jun jul aug sep sept oct nov dec gen col lt sgt capt rev mt ft op cf al""".split()
)
_CJK_END = "。！？；…"
_CLOSERS = "\"'”’」』）)]》"
_SENTENCE = re.compile(
    r"[" + _CJK_END + r"]+[" + re.escape(_CLOSERS) + r"]*"  # Chinese: no space needed
    r"|[.!?]+[" + re.escape(_CLOSERS) + r"]*(?=\s)"  # English: followed by whitespace
    r"|\n"
)
_WORD_BEFORE = re.compile(r"([A-Za-z][A-Za-z.]*)$")
_CJK_CHAR = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\uac00-\ud7af]")


def _is_abbreviation(text: str, dot: int) -> bool:
    """Whether the ``.`` at ``dot`` ends an abbreviation or an initial (``Dr.``, ``J.``, ``e.g.``)."""
    if text[dot] != ".":
        return False
    match = _WORD_BEFORE.search(text[:dot])
    if not match:
        return False
    word = match.group(1).casefold()
    if len(word) == 1 and word.isalpha():
        return True
    return word in _ABBREVIATIONS


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each sentence in ``text`` (whitespace between sentences left out)."""
    spans: list[tuple[int, int]] = []
    start = 0
    for match in _SENTENCE.finditer(text):
        end = match.end()
        if match.group(0) != "\n" and match.group(0)[0] in ".!?":
            if _is_abbreviation(text, match.start()):
                continue
            following = text[end:].lstrip()
            if following[:1].islower():
                continue  # "approx. three", "p. 5 of"
        _add_span(text, start, end, spans)
        start = end
    _add_span(text, start, len(text), spans)
    return spans


def _add_span(text: str, start: int, end: int, spans: list[tuple[int, int]]) -> None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if end > start:
        spans.append((start, end))


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text`` (English and Chinese punctuation, line breaks)."""
    return [text[start:end] for start, end in sentence_spans(text)]


def _hard_cut(text: str, start: int, end: int, limit: int) -> list[tuple[int, int]]:
    """Cut ``text[start:end]`` into pieces of at most ``limit`` characters, at spaces when possible."""
    pieces = []
    while end - start > limit:
        cut = text.rfind(" ", start + limit // 2, start + limit + 1)
        if cut <= start:
            cut = start + limit
        pieces.append((start, cut))
        start = cut
        while start < end and text[start].isspace():
            start += 1
    if end > start:
        pieces.append((start, end))
    return pieces


def pack_spans(text: str, limit: int) -> list[tuple[int, int]]:
    """Greedy pieces of ``text`` of at most ``limit`` characters, cut at sentence boundaries."""
    pieces: list[tuple[int, int]] = []
    current: tuple[int, int] | None = None
    for start, end in sentence_spans(text):
        for s, e in _hard_cut(text, start, end, limit) if end - start > limit else [(start, end)]:
            if current is not None and e - current[0] <= limit:
                current = (current[0], e)
                continue
            if current is not None:
                pieces.append(current)
            current = (s, e)
    if current is not None:
        pieces.append(current)
    return pieces


# --------------------------------------------------------------------------- blocks


@dataclass
class _Paragraph:
    number: int
    text: str
    path: tuple[str, ...]
    section: int
    heading: bool = False


def _parse(text: str, outline: bool, headings: bool = True) -> list[_Paragraph]:
    """Body paragraphs with their heading path. ``outline``: headings are not paragraphs (they
    are the path); else they are paragraphs too. ``headings=False``: no heading syntax at all."""
    paragraphs: list[_Paragraph] = []
    stack: list[tuple[int, str]] = []
    section = 0
    lines: list[str] = []
    fence: str | None = None

    def path() -> tuple[str, ...]:
        return tuple(title for _, title in stack)

    def flush() -> None:
        body = "\n".join(lines).strip("\n")
        lines.clear()
        if body.strip():
            paragraphs.append(_Paragraph(len(paragraphs), body, path(), section))

    def heading(level: int, title: str) -> None:
        nonlocal section
        flush()
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
        section += 1
        if not outline:
            paragraphs.append(_Paragraph(len(paragraphs), title, path(), section, heading=True))

    for line in text.split("\n"):
        if not headings:
            if line.strip():
                lines.append(line)
            else:
                flush()
            continue
        fence_match = _FENCE.match(line)
        if fence is not None:
            lines.append(line)
            if fence_match and fence_match.group(1) == fence:
                fence = None
            continue
        if fence_match:
            fence = fence_match.group(1)
            lines.append(line)
            continue
        atx = _ATX.match(line)
        if atx:
            heading(len(atx.group(1)), atx.group(2).strip())
            continue
        setext = _SETEXT.match(line)
        if setext and len(lines) == 1 and lines[0].strip() and not _ATX.match(lines[0]):
            title = lines.pop().strip()
            if setext.group(1).startswith("-") and len(setext.group(1)) < 3:
                lines.append(title)
                lines.append(line)
                continue
            heading(1 if setext.group(1).startswith("=") else 2, title)
            continue
        if not line.strip():
            flush()
            continue
        lines.append(line)
    flush()
    return paragraphs


# --------------------------------------------------------------------------- packing


@dataclass
class _Segment:
    paragraph: _Paragraph
    index: int
    text: str
    gap: str  # the original text between the previous piece of this paragraph and this one


@dataclass
class _Draft:
    first: _Segment
    parts: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "".join(self.parts)


def _tail(text: str, budget: int) -> str:
    """The end of ``text`` in at most ``budget`` characters: whole sentences, else whole words."""
    if budget <= 0 or not text:
        return ""
    spans = sentence_spans(text)
    start = None
    for s, _e in reversed(spans):
        if len(text) - s > budget:
            break
        start = s
    if start is not None:
        return text[start:].strip()
    piece = text[-budget:]
    if not _CJK_CHAR.search(piece):
        space = piece.find(" ")
        piece = piece[space + 1 :] if space >= 0 else ""
    return piece.strip()


def _segments(paragraph: _Paragraph, max_chars: int, overlap: int) -> list[_Segment]:
    if len(paragraph.text) <= max_chars:
        return [_Segment(paragraph, 0, paragraph.text, "")]
    spans = pack_spans(paragraph.text, max(1, max_chars - overlap))
    segments = []
    previous_end = 0
    for index, (start, end) in enumerate(spans):
        gap = paragraph.text[previous_end:start] if index else ""
        segments.append(_Segment(paragraph, index, paragraph.text[start:end], gap))
        previous_end = end
    return segments


def _pack(paragraphs: list[_Paragraph], max_chars: int, overlap: int) -> list[_Draft]:
    drafts: list[_Draft] = []
    current: _Draft | None = None
    for paragraph in paragraphs:
        for segment in _segments(paragraph, max_chars, overlap):
            separator = segment.gap if segment.index else "\n\n"
            if current is not None and len(current.text) + len(separator) + len(segment.text) <= max_chars:
                current.parts.extend([separator, segment.text])
                continue
            tail_source = current.text if current is not None else ""
            if current is not None:
                drafts.append(current)
            current = _Draft(first=segment)
            room = max_chars - len(segment.text) - len(separator)
            tail = _tail(tail_source, min(overlap, room))
            if tail:
                current.parts.extend([tail, separator])
            current.parts.append(segment.text)
    if current is not None:
        drafts.append(current)
    return drafts


def _has_outline(doc: SourceDocument) -> bool:
    """Whether the reader kept headings as Markdown (Markdown, HTML, DOCX, PDF bookmarks)."""
    return doc.media_type == "text/markdown" or doc.metadata.get("outline") == "markdown"


def record_text(record: dict[str, object]) -> str:
    """A structured record as one line of text (``key: value; ...``), nested values as JSON."""
    import json

    parts = []
    for key, value in record.items():
        if value is None or value == "" or value == {} or value == []:
            continue
        shown = json.dumps(value, ensure_ascii=False) if isinstance(value, (dict, list)) else str(value)
        parts.append(f"{key}: {shown}")
    return "; ".join(parts)


def _record_chunks(doc: SourceDocument) -> list[ChunkRecord]:
    path = [doc.record_type] if doc.record_type else []
    chunks: list[ChunkRecord] = []
    for number, record in enumerate(doc.records):
        text = record_text(record)
        if not text:
            continue
        chunks.append(
            ChunkRecord(
                id=f"{doc.id}#{number}#0",
                document_id=doc.id,
                text=text,
                title=doc.title,
                title_path=list(path),
                position=len(chunks),
                paragraph=number,
                index=0,
            )
        )
    return chunks


def split_document(
    doc: SourceDocument,
    *,
    max_chars: int = 1200,
    overlap: int = 150,
    mode: SplitMode = "auto",
) -> list[ChunkRecord]:
    """The chunks of ``doc`` (see the module docstring); the same input always gives the same ids."""
    if max_chars < 50:
        raise ValueError(f"max_chars must be at least 50 characters, got {max_chars}")
    if not 0 <= overlap <= max_chars // 2:
        raise ValueError(f"overlap must be between 0 and max_chars/2 ({max_chars // 2}), got {overlap}")
    if mode not in ("auto", "length", "outline"):
        raise ValueError(f"mode must be auto, length or outline, got {mode!r}")
    if not doc.text.strip():
        return _record_chunks(doc) if doc.records else []
    marked = _has_outline(doc)
    outline = mode == "outline" or (mode == "auto" and marked)
    paragraphs = _parse(doc.text.replace("\r\n", "\n"), outline, headings=marked or mode == "outline")
    if outline:
        groups: list[list[_Paragraph]] = []
        for paragraph in paragraphs:
            if groups and groups[-1][-1].section == paragraph.section:
                groups[-1].append(paragraph)
            else:
                groups.append([paragraph])
    else:
        groups = [paragraphs] if paragraphs else []
    chunks: list[ChunkRecord] = []
    for group in groups:
        for draft in _pack(group, max_chars, overlap):
            chunks.append(
                ChunkRecord(
                    id=f"{doc.id}#{draft.first.paragraph.number}#{draft.first.index}",
                    document_id=doc.id,
                    text=draft.text.strip(),
                    title=doc.title,
                    title_path=list(draft.first.paragraph.path),
                    position=len(chunks),
                    paragraph=draft.first.paragraph.number,
                    index=draft.first.index,
                )
            )
    return chunks
