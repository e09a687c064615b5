"""``Retrieval(s=, p=, o=, ...)``: one hop, answered from the graph when it can, from chunks when not.

How a Retrieval runs (every query a ``.cypher`` file, every value a parameter, read transactions):

1. **Ends.** ``s`` and ``o`` are each *bound* (an alias an earlier step bound — its entities are
   the anchors), *named* (``[`Ada Pembroke`]``: linked by ``procedures/link_entities.cypher`` —
   fulltext + vector over names/aliases/descriptions, widened through the concept graph), or
   *free* (what the step looks for). A linked entity anchors the hop only when its name is close
   to the mention; otherwise it only seeds PPR. A step whose ends are all free (the fallback
   plan, or a small model that left the name out) is anchored on the entities its sub-question
   spells out (a step that reads no earlier result and whose sub-question names nobody — "某人是
   赌博App老板吗？" — on those the question spells out): their facts are read as in 2, and a
   concept membership whose class the sub-question names (``柏*是赌博App老板吗？``) answers like
   one asked with ``p=belongTo``.
2. **Graph facts** (schema relations, open facts, properties). ``cypher/solver/one_hop.cypher``
   runs from the anchors with the predicate as a normalised value and the constraints as values;
   when the exact predicate finds nothing, every fact around the anchors is read and ranked by
   :func:`~kag_neo4j.solver.matching.predicate_similarity`; a trusted fact whose other end has the
   entity type the step asks for (``o=o1:Medicine``) scores at least ``TYPE_FIT``, so it reaches
   the sub-answer (4) even when its predicate is another word. For a value-typed object
   (``o=o1:Year``) the anchors' properties are read too (``entity_properties.cypher``).
3. **Decide.** Facts answer the step when the predicate matches strongly, the fact is trusted (a
   schema relation, or an open fact with enough confidence), it runs in the asked direction and
   its value fits the object's type. Then the free alias is bound with no model call.
4. **Else chunks.** Hybrid retrieval (dense + fulltext + PPR seeded with the step's entities,
   fused by RRF) for the sub-question, and one sub-answer call with the passages and the nearby
   facts. An entity-typed answer is linked back to the graph so the next hop can start from it.

The step records which layer answered it (``graph``, ``chunks`` or ``graph+chunks``), the facts,
the chunks and entities it used (with ranks) and every query with its parameters.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from kag_neo4j.builder.names import name_key
from kag_neo4j.errors import ModelError, ModelUnavailableError
from kag_neo4j.prompts.answer import is_unknown
from kag_neo4j.prompts.context import Fact
from kag_neo4j.prompts.plan import OPERATOR_LINES
from kag_neo4j.prompts.subanswer import SubAnswerResponse, build_subanswer_messages
from kag_neo4j.solver.evidence_search import link_mention, remember_fact_chunks, retrieve_chunks
from kag_neo4j.solver.lf.analysis import AliasSite
from kag_neo4j.solver.lf.ast import Element, RetrievalOp
from kag_neo4j.solver.lf.scanner import Scanner
from kag_neo4j.solver.lf.spec import OperatorSpec
from kag_neo4j.solver.linking import LinkedEntity, link_exact
from kag_neo4j.solver.matching import (
    DATE_TYPES,
    NUMBER_TYPES,
    fits_type,
    hierarchy_leaf,
    membership_similarity,
    name_similarity,
    normalise_name,
    predicate_similarity,
)
from kag_neo4j.solver.memory import Item
from kag_neo4j.solver.results import KGFact, StepRecord, Used
from kag_neo4j.solver.runtime import Runtime
from kag_neo4j.solver.sub_question import Reference, asked_kind, contradicts, spell_out
from kag_neo4j.solver.validate import GENERIC_TYPE, ValidatedPlan
from kag_neo4j.solver.values import parse_date, parse_number
from kag_neo4j.store.keys import predicate_key

if TYPE_CHECKING:
    from kag_neo4j.solver.action import ActionContext

__all__ = ["SPEC", "End", "run_retrieval"]

#: the score of a fact whose predicate is another word but whose other end has the asked-for type:
#: below the default ``predicate_threshold`` (0.85), so it never answers a step alone, and above 0,
#: so the sub-answer sees it
TYPE_FIT = 0.4
_EDGE_INTERNAL = frozenset({"chunk_ids", "doc_ids", "confidence", "predicate", "derived_by", "rule_version", "as_of"})
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


@dataclass
class End:
    """One end (``s`` or ``o``) of a Retrieval, resolved."""

    role: Literal["s", "o"]
    element: Element
    kind: Literal["bound", "named", "free"]
    ids: list[str] = field(default_factory=list)  # anchors: entities the hop starts from
    seeds: list[str] = field(default_factory=list)  # PPR seeds (anchors, or loose link candidates)
    items: list[Item] = field(default_factory=list)
    record: int | None = None  # the record that bound it (for depends_on)

    @property
    def names(self) -> list[str]:
        return [item.text for item in self.items if item.text.strip()]


@dataclass
class _Candidate:
    fact: KGFact
    value: Any
    other_id: str | None
    anchor_id: str
    similarity: float
    trusted: bool
    forward: bool
    note: str = ""
    membership: bool = False  # a BELONGS_TO to a concept class


# --------------------------------------------------------------------------------------------
# ends (linking: :mod:`kag_neo4j.solver.evidence_search`)


def _close(mention: str, entity: LinkedEntity) -> float:
    """How close the entity's name or one of its aliases is to the mention (a hierarchical name
    ``a-b-c``, as KAG's product and industry ids are, also answers to its leaf ``c``)."""
    names = [entity.name, *entity.aliases]
    leaves = {normalise_name(leaf) for leaf in map(hierarchy_leaf, names) if leaf}
    return 1.0 if normalise_name(mention) in leaves else max(name_similarity(mention, name) for name in names)


def _resolve_named(rt: Runtime, record: StepRecord, end: End, plan: ValidatedPlan) -> None:
    element = end.element
    mention = element.name or ""
    type_name = element.type if element.type and element.type != GENERIC_TYPE else None
    if type_name and plan.is_value_type(type_name):
        type_name = None
    linked = link_mention(rt, record, mention, type_name)
    scored = sorted(((entity, _close(mention, entity)) for entity in linked), key=lambda pair: -pair[1])
    anchors = [entity for entity, score in scored if score >= rt.config.name_threshold]
    for rank, entity in enumerate(linked, start=1):
        record.used.append(Used(kind="Entity", id=entity.id, rank=rank, score=round(entity.score, 6)))
    if mention.strip() and not any(type_name is None or type_name in entity.types for entity in anchors):
        # an event the plan names (events are not in the entity indexes), or one of the asked type
        events = rt.read(record, "solver/events_by_name", key=name_key(mention), mention=mention, type=type_name,
                         k=rt.config.link_k)
        if events:
            anchors = [LinkedEntity(id=str(row["id"]), name=str(row["name"]), score=1.0) for row in events]
    if not anchors and type_name is not None and mention.strip():
        # a plan that typed the name wrongly (a small planner's ``o1:Symptom[`甲状腺结节`]`` for a
        # Disease): an entity of another type with exactly that name is the one it means
        exact = link_exact(rt.runner(record), [mention])[mention]
        if exact:
            anchors = [LinkedEntity(id=entity_id, name=mention, score=1.0) for entity_id in exact]
            record.used += [Used(kind="Entity", id=entity_id, rank=rank, score=1.0) for rank, entity_id in enumerate(exact, 1)]
            record.note += f"'{mention}' is no {type_name} in the graph: anchored on the entity of that name; "
    if anchors:
        end.ids = [entity.id for entity in anchors]
        end.seeds = list(end.ids)
        end.items = [Item(value=entity.name, entity_id=entity.id) for entity in anchors]
    else:
        end.seeds = [entity.id for entity in linked[:2]]
        end.items = [Item(value=mention)]
        if linked:
            record.note += f"'{mention}' linked only loosely ({linked[0].name}); "


def resolve_end(
    rt: Runtime,
    record: StepRecord,
    role: Literal["s", "o"],
    element: Element,
    plan: ValidatedPlan,
    definitions: Mapping[str, AliasSite],
    here: tuple[int, int],
) -> End:
    site = definitions.get(element.alias)
    reads_other = site is not None and (site.step, site.action) != here
    source_alias = element.ref if element.ref is not None else (element.alias if reads_other else None)
    if source_alias is not None:
        binding = rt.memory.get(source_alias)
        end = End(role=role, element=element, kind="bound")
        if binding is not None:
            end.items = list(binding.items)
            end.ids = binding.entity_ids
            end.seeds = list(end.ids)
            end.record = binding.record
            for rank, entity_id in enumerate(end.ids, start=1):  # the anchors this step starts from
                record.used.append(Used(kind="Entity", id=entity_id, rank=rank, score=1.0))
        return end
    if element.name is not None:
        end = End(role=role, element=element, kind="named")
        _resolve_named(rt, record, end, plan)
        return end
    return End(role=role, element=element, kind="free")


# --------------------------------------------------------------------------------------------
# graph facts


def _constraints(op: RetrievalOp) -> list[dict[str, Any]]:
    roles = {op.s.alias: "s", op.p.alias: "p", op.o.alias: "o"}
    out = []
    for constraint in op.constraints:
        target = constraint.target if constraint.target in {"s", "p", "o"} else roles.get(constraint.target)
        if target is None:
            continue
        out.append({"target": target, "prop": constraint.prop, "op": constraint.op, "value": constraint.value})
    return out


def _edge_note(edge: Mapping[str, Any] | None) -> str:
    if not edge:
        return ""
    shown = [f"{key}: {value}" for key, value in sorted(edge.items()) if key not in _EDGE_INTERNAL]
    return f" ({'; '.join(shown)})" if shown else ""


def _provenance(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _fact_from_row(row: Mapping[str, Any]) -> KGFact:
    forward = bool(row["stored_forward"])
    edge = row.get("edge") or {}
    s_id, s_name, o_id, o_name = row["subject_id"], row["subject"], row["object_id"], row["object"]
    if not forward:  # show the fact the way it is stored
        s_id, s_name, o_id, o_name = o_id, o_name, s_id, s_name
    return KGFact(
        subject=str(s_name), subject_id=str(s_id), predicate=str(row["predicate"]), object=str(o_name),
        object_id=str(o_id), layer="open" if row["open_fact"] else "schema",
        chunk_ids=[str(c) for c in row["chunk_ids"] or []], confidence=float(row["confidence"]),
        derived_by=_provenance(edge.get("derived_by")), rule_version=_provenance(edge.get("rule_version")),
    )


def _hop_candidates(
    rt: Runtime, record: StepRecord, op: RetrievalOp, anchor: End, other: End, predicate: str | None,
    *, asked: str | None = None, expected_type: str | None = None,
) -> list[_Candidate]:
    """The facts around ``anchor`` that may answer the hop, scored by how well their predicate
    says ``predicate``; ``asked`` (the step's question, for a step that names no predicate) lets
    a concept membership whose class the question spells out score as asked for; a trusted fact
    whose other end has ``expected_type`` (an entity type, or None) scores at least ``TYPE_FIT``."""
    params: dict[str, Any] = {
        "anchor_ids": anchor.ids, "anchor_role": anchor.role, "other_ids": other.ids or None,
        "other_type": None, "constraints": _constraints(op), "expected_type": expected_type,
    }
    exact = predicate is not None
    rows: list[dict[str, Any]] = []
    if predicate is not None:
        limit = rt.config.hop_limit
        rows = rt.read(record, "solver/one_hop", predicates=[predicate_key(predicate)], limit=limit + 1, **params)
        if len(rows) > limit:  # one row more than the limit: the hop was cut, and the answer may be too
            rows = rows[:limit]
            record.note += f"more than {limit} facts matched; the first {limit} are read; "
            rt.warn(f"step {record.step} ({record.lf or 'Retrieval'}): more than {limit} facts matched and only the "
                    f"first {limit} were read, so the answer may be incomplete; raise SolverConfig.hop_limit "
                    f"(`kag-neo4j ask --solver hop_limit=…`)")
    if not rows:
        exact = False
        rows = rt.read(record, "solver/one_hop", predicates=None, limit=rt.config.widen_limit, **params)
    candidates = []
    for row in rows:
        anchor_is_s = anchor.role == "s"
        value = row["object"] if anchor_is_s else row["subject"]
        other_id = row["object_id"] if anchor_is_s else row["subject_id"]
        anchor_id = row["subject_id"] if anchor_is_s else row["object_id"]
        similarity = 1.0 if exact else (predicate_similarity(predicate, row["predicate"]) if predicate else 0.5)
        classes = [str(label) for label in row.get("class_types") or []]
        if classes:  # a concept membership answers what asks for its class, by type or by name
            similarity = max(similarity, membership_similarity(predicate or asked, other.element.type, classes, str(value)))
        trusted = (not row["open_fact"]) or float(row["confidence"]) >= rt.config.graph_confidence
        if trusted and row["type_fits"]:  # (NER co-occurrences are not trusted: no noise from them)
            similarity = max(similarity, TYPE_FIT)
        candidates.append(
            _Candidate(
                fact=_fact_from_row(row), value=value, other_id=other_id, anchor_id=anchor_id,
                similarity=similarity, trusted=trusted, forward=bool(row["stored_forward"]),
                note=_edge_note(row.get("edge")), membership=bool(classes),
            )
        )
    return candidates


def _property_candidates(rt: Runtime, record: StepRecord, anchor: End, predicate: str | None) -> list[_Candidate]:
    if not predicate:
        return []
    rows = rt.read(record, "solver/entity_properties", anchor_ids=anchor.ids, predicates=[predicate_key(predicate)])
    if not rows:
        rows = rt.read(record, "solver/entity_properties", anchor_ids=anchor.ids, predicates=None)
    out = []
    for row in rows:
        value = row["value"]
        if isinstance(value, list):
            value = ", ".join(str(v) for v in value)
        fact = KGFact(
            subject=str(row["subject"]), subject_id=str(row["subject_id"]), predicate=str(row["predicate"]),
            object=str(value), object_id=None, layer="property", chunk_ids=[str(c) for c in row["chunk_ids"]],
            derived_by=_provenance(row.get("derived_by")), rule_version=_provenance(row.get("rule_version")),
        )
        out.append(
            _Candidate(
                fact=fact, value=value, other_id=None, anchor_id=str(row["subject_id"]),
                similarity=predicate_similarity(predicate, str(row["predicate"])), trusted=True, forward=True,
            )
        )
    return out


# --------------------------------------------------------------------------------------------
# the operator


def _normalise_value(text: str, type_name: str | None) -> Any:
    """What Math, Sort and Deduce read for ``text`` of a value type: an ISO date, a number, or ``text``."""
    if type_name in DATE_TYPES:
        parsed = parse_date(text)
        if parsed is not None:
            return parsed.isoformat()
    if type_name in NUMBER_TYPES:
        number = parse_number(text)
        if number is not None:
            return number
    return text


def run_retrieval(ctx: ActionContext, op: RetrievalOp) -> None:
    """Execute one Retrieval (see the module docs); binds its aliases through ``ctx``."""
    rt, record, plan, question = ctx.rt, ctx.record, ctx.plan, ctx.question
    step_number, action_number = ctx.step.number, ctx.action.number
    definitions = plan.plan.definitions()
    here = (step_number, action_number)
    s = resolve_end(rt, record, "s", op.s, plan, definitions, here)
    o = resolve_end(rt, record, "o", op.o, plan, definitions, here)
    ctx.depend_on(s.record, o.record)
    predicate = op.p.type or plan.open_predicates.get(op.p.alias)
    anchor, other = (s, o) if s.ids else (o, s) if o.ids else (None, None)
    # the free end is what the step looks for; with both ends known the step checks a relation
    target = o if o.kind == "free" else s if s.kind == "free" else None
    value_types = plan.value_types
    target_type = _answer_type(ctx, target)

    for end in (s, o):  # a named end is bound to what it linked to
        if end.kind == "named":
            ctx.bind(end.element.alias, end.items, "graph" if end.ids else "none")

    asked: str | None = None
    mentioned: list[str] | None = None
    if anchor is None and s.kind == o.kind == "free":
        # the plan named nobody (the fallback plan, or a small model's): start from the entities
        # the sub-question spells out, and read what the graph says of them
        mentioned = _mentioned(rt, record, question)
        if not mentioned and not ctx.reads and rt.question and rt.question != question:
            # a sub-question that names nobody ("某人是赌博App老板吗？" for "柏*是赌博App老板吗？") in a
            # step that reads no earlier result asks about what the question names
            mentioned = _mentioned(rt, record, rt.question)
            if mentioned:
                record.note += "the sub-question names nobody: "
        if mentioned:
            anchor, other = End(role="s", element=s.element, kind="named", ids=mentioned, seeds=mentioned), o
            asked = None if predicate else question
            record.note += f"anchored on {len(mentioned)} entities the question names; "

    other_type = None if other is None else target_type if other is target else other.element.type
    candidates: list[_Candidate] = []
    if anchor is not None and other is not None:
        expected = _entity_type(other_type, plan) if other.kind == "free" else None
        candidates = _hop_candidates(rt, record, op, anchor, other, predicate, asked=asked, expected_type=expected)
        if anchor.role == "s" and other.kind == "free" and (other_type in value_types or other_type is None):
            candidates += _property_candidates(rt, record, anchor, predicate)
    candidates.sort(key=lambda c: (-c.similarity, not c.forward, -c.fact.confidence))

    strong = [
        c
        for c in candidates
        if c.similarity >= rt.config.predicate_threshold
        and c.trusted
        and c.forward
        and (other is None or other.kind != "free" or fits_type(c.value, other_type, value_types)
             or (c.membership and other_type == "Boolean"))  # "is s a risk user?" -> the class s is in
    ]
    if strong and other is not None:
        record.source = "graph"
        if other.kind == "free":
            if other_type in value_types:  # a value per anchor: the best-matching fact's
                best: dict[str, _Candidate] = {}
                for c in strong:
                    best.setdefault(c.anchor_id, c)
                strong = list(best.values())
                items = [Item(value=c.value, key=c.anchor_id) for c in strong]
            else:
                items = [Item(value=c.value, entity_id=c.other_id, key=c.anchor_id) for c in strong]
            ctx.bind(other.element.alias, items, "graph")
        record.facts = [c.fact for c in strong]
        ctx.bind(op.p.alias, [Item(value=c.fact.predicate) for c in strong], "graph")
        for rank, c in enumerate(strong, start=1):
            if c.other_id:
                record.used.append(Used(kind="Entity", id=c.other_id, rank=rank, score=c.similarity))
        fact_chunks = [cid for c in strong for cid in c.fact.chunk_ids]
        remember_fact_chunks(rt, record, fact_chunks)
        record.evidence = list(dict.fromkeys(fact_chunks))
        return

    # chunks (fused with whatever facts were found near the anchors)
    names = [name for end in (s, o) if end.kind != "free" for name in end.names]
    if rt.config.spell_out_references:
        spelled = spell_out(question, _references((s, o), definitions))
        if spelled != question:
            record.note += f"asked as {spelled!r}; "
            question = spelled
    text = question
    extra = [name for name in names if name.casefold() not in question.casefold()]
    if extra:
        text = f"{question} ({'; '.join(extra[:4])})"
    seeds = list(dict.fromkeys(sid for end in (s, o) for sid in end.seeds))
    if not seeds:  # the plan named nobody: seed PPR with entities the sub-question spells out
        seeds = mentioned if mentioned is not None else _mentioned(rt, record, question)
    chunks = retrieve_chunks(rt, record, text, seeds, names=names)
    weak = [c for c in candidates if c.similarity > 0][: rt.config.budget.max_facts]
    facts = [Fact(subject=c.fact.subject, predicate=c.fact.predicate, object=c.fact.object + c.note) for c in weak]
    if not chunks and not facts:
        record.source = "none"
        record.note += "no graph fact and no chunk matched; "
        if target is not None:
            ctx.bind(target.element.alias, [], "none")
        return
    reads = [name for name in plan.plan.uses(action_number)]

    def sub_answer(stage: str, not_answers: list[str]) -> SubAnswerResponse:
        messages = build_subanswer_messages(
            question, language=rt.language, known=rt.memory.known(reads), facts=facts,
            passages=[chunk.passage() for chunk in chunks], expected_type=target_type,
            not_answers=not_answers, budget=rt.config.budget,
        )
        try:
            response = rt.ask(record, messages, SubAnswerResponse, stage=stage, max_tokens=rt.config.subanswer_max_tokens)
        except ModelUnavailableError:
            raise
        except ModelError as exc:
            record.error = f"sub-answer failed: {exc}"
            response = SubAnswerResponse()
        record.note += f"sub-answer: {response.answer!r}; "
        return response

    response = sub_answer("subanswer", [])
    # a reply naming the result an earlier step gave this one is no answer ("Somalia" for "who was in
    # charge of that country?"); one naming what the plan wrote is left alone: a small planner's
    # "Who was Jorge Ledezma?" step (s=s1, o=o1:Person[`Jorge Ledezma`]) has no better answer
    earlier = [name for end in (s, o) if end.kind == "bound" for name in end.names]
    if rt.config.reask_echo and target is not None and earlier and _repeats(response.answer, earlier):
        record.note += "that is the result the step starts from, not its answer: asked again; "
        response = sub_answer("subanswer-again", earlier)
        if _repeats(response.answer, earlier):
            record.note += "again only the result the step starts from: no answer; "
            response = SubAnswerResponse()
    record.source = "graph+chunks" if facts else "chunks"
    if weak:
        record.facts = [c.fact for c in weak]
    cited = [chunks[n - 1].chunk_id for n in response.evidence if isinstance(n, int) and 1 <= n <= len(chunks)]
    if is_unknown(response.answer):
        if target is not None:
            ctx.bind(target.element.alias, [], "none")
        return
    record.evidence = cited or [chunks[0].chunk_id] if chunks else []
    if target is None:
        ctx.bind(op.p.alias, [Item(value=response.answer.strip())], record.source)
        return
    if target_type and (target_type in value_types):
        written = " ".join(response.answer.split())[:300]
        value = _normalise_value(written, target_type)
        items = [Item(value=value, written=None if value == written else written)]
    else:  # each name of a listed answer ("卡比马唑、复方碘口服液") linked on its own
        items = [_link_answer(rt, record, part, target_type, plan) for part in _listed(response.answer)]
        named = {item.entity_id for item in items if item.entity_id}
        record.answer_facts = [c.fact for c in weak if c.trusted and c.other_id in named]
        fact_chunks = [cid for fact in record.answer_facts for cid in fact.chunk_ids]
        remember_fact_chunks(rt, record, fact_chunks)
        record.evidence += [cid for cid in dict.fromkeys(fact_chunks) if cid not in record.evidence]
    ctx.bind(target.element.alias, items, record.source)


def _answer_type(ctx: ActionContext, target: End | None) -> str | None:
    """The type of the step's answer: the plan's, unless the sub-question's words ask a place or a
    time that type cannot be ("Where was that director born?" over ``o2:Date``); then none for a
    place (the answer is linked like an entity) and ``Date`` for a time."""
    planned = target.element.type if target is not None else None
    kind = asked_kind(ctx.question)
    if not ctx.rt.config.words_over_type or not contradicts(kind, planned, ctx.plan.value_types):
        return planned
    ctx.record.note += f"the sub-question asks for a {kind}, the plan for a {planned}: answered as the words ask; "
    return "Date" if kind == "time" else None


def _references(ends: tuple[End, End], definitions: Mapping[str, AliasSite]) -> list[Reference]:
    """The one name each end bound by an earlier step holds, with the type that step gave it."""
    out = []
    for end in ends:
        if end.kind == "bound" and len(end.names) == 1:
            site = definitions.get(end.element.ref or end.element.alias)
            out.append(Reference(name=end.names[0], type_name=site.type if site else None))
    return out


def _repeats(answer: str, names: list[str]) -> bool:
    """Whether ``answer`` is one of ``names`` (case, articles and punctuation aside): a reply that
    names what the step starts from instead of what it asks for."""
    key = normalise_name(answer)
    return bool(key) and any(key == normalise_name(name) for name in names)


def _spelled(name: str, text: str, plain: str) -> bool:
    """Whether ``name`` appears verbatim in ``text`` (``plain``: the text normalised): a CJK name
    of two characters or more anywhere (as written, so a masked ``柏*`` counts), another name of
    three or more as whole words."""
    if _CJK.search(name):
        written = "".join(name.split())
        return (len(written) >= 2 and written in "".join(text.split())) or (
            len(normalise_name(name)) >= 2 and normalise_name(name) in plain)
    key = normalise_name(name)
    return len(key) >= 3 and f" {key} " in f" {plain} "


def _mentioned(rt: Runtime, record: StepRecord, text: str) -> list[str]:
    """Entities whose name (or an alias) appears verbatim in ``text``."""
    plain = normalise_name(text)
    found = []
    for entity in link_mention(rt, record, text, None):
        if any(_spelled(name, text, plain) for name in [entity.name, *entity.aliases]):
            found.append(entity.id)
            record.used.append(Used(kind="Entity", id=entity.id, rank=len(found), score=round(entity.score, 6)))
    return found


def _entity_type(type_name: str | None, plan: ValidatedPlan) -> str | None:
    """``type_name`` when it names a type of entities, None for a value type or the generic one."""
    return type_name if type_name and type_name != GENERIC_TYPE and not plan.is_value_type(type_name) else None


#: what separates the names of a listed answer: the enumeration comma and semicolons (never the comma
#: or "and", which also join the parts of one name: "Paris, Texas")
_LIST_SEPARATORS = re.compile(r"\s*[、;；]\s*")


def _listed(answer: str) -> list[str]:
    """The names a sub-answer lists (itself when it is one name), each once."""
    parts = [part for part in _LIST_SEPARATORS.split(answer.strip()) if part]
    return list(dict.fromkeys(parts)) or [answer.strip()]


def _link_answer(rt: Runtime, record: StepRecord, answer: str, type_name: str | None, plan: ValidatedPlan) -> Item:
    """An entity-typed sub-answer, linked back to the graph when a close entity exists."""
    linked = link_mention(rt, record, answer, _entity_type(type_name, plan))
    best = max(linked, key=lambda e: _close(answer, e), default=None)
    if best is not None and _close(answer, best) >= rt.config.name_threshold:
        record.used.append(Used(kind="Entity", id=best.id, rank=1, score=round(best.score, 6)))
        return Item(value=best.name, entity_id=best.id)
    return Item(value=" ".join(answer.split())[:300])


SPEC = OperatorSpec(
    name="Retrieval", node=RetrievalOp, parse=Scanner.retrieval, handler=run_retrieval,
    prompt=OPERATOR_LINES["Retrieval"], synonyms=("get_spo",),
)
