"""The generator: bound outputs answered in code with their citations; unknown fails closed;
trace properties are primitives only."""

from __future__ import annotations

import json

import pytest

from kag_neo4j.errors import KagError
from kag_neo4j.models.scripted import ScriptedLLM
from kag_neo4j.solver.generate import compose, dependency_closure
from kag_neo4j.solver.judge import JudgeOutcome
from kag_neo4j.solver.chunks import RankedChunk
from kag_neo4j.solver.memory import Binding, Item
from kag_neo4j.solver.results import Answer, KGFact, QueryRecord, Used
from kag_neo4j.solver.runtime import Runtime, SolverConfig, elide
from kag_neo4j.solver.trace import check_run_id, run_properties, step_properties


def _runtime(language: str = "en") -> Runtime:
    return Runtime(None, ScriptedLLM([]), None, config=SolverConfig(), language=language)  # type: ignore[arg-type]


def _chunk(cid: str, text: str) -> RankedChunk:
    return RankedChunk(chunk_id=cid, document_id=cid.split("#")[0], title=cid.split("#")[0], text=text)


def _graph_step(rt: Runtime, alias: str, value: str, cid: str) -> int:
    record = rt.new_record("Retrieval", source="graph")
    record.facts = [KGFact(subject="X", subject_id="x", predicate="p", object=value, layer="property", chunk_ids=[cid])]
    record.evidence = [cid]
    rt.memory.add_chunks([_chunk(cid, f"text of {cid}")])
    rt.memory.bind(Binding(alias=alias, items=[Item(value=value)], source="graph", record=record.index))
    return record.index


def test_bound_output_cites_the_evidence_of_everything_it_depends_on() -> None:
    rt = _runtime()
    a = _graph_step(rt, "o1", "1871", "hvrc#0#0")
    b = _graph_step(rt, "o2", "1899", "viaduct#0#0")
    _graph_step(rt, "o9", "unrelated", "other#0#0")
    math = rt.new_record("Math", source="math", depends_on=[a, b])
    rt.memory.bind(Binding(alias="m1", items=[Item(value=28)], source="math", record=math.index))
    composed = compose(rt, ["m1"], None)
    assert composed.known and composed.answer == "28"
    assert [c.chunk_id for c in composed.citations] == ["hvrc#0#0", "viaduct#0#0"]
    assert [f.object for f in composed.kg_path] == ["1871", "1899"]
    assert dependency_closure(rt.records, [math.index]) == [a, b, math.index]


def test_unbound_output_without_judge_answer_fails_closed() -> None:
    rt = _runtime("zh")
    rt.memory.add_chunks([_chunk("d#0#0", "some text")])
    composed = compose(rt, ["o1"], JudgeOutcome(answer="unknown"))
    assert not composed.known and composed.answer.startswith("不知道") and composed.citations == []


def test_judge_answer_cites_the_passages_it_named() -> None:
    rt = _runtime()
    rt.memory.add_chunks([_chunk("d#0#0", "Kestrel Bay is a town.")])
    composed = compose(rt, ["o2"], JudgeOutcome(answer="Kestrel Bay", evidence=["d#0#0"]))
    assert composed.known and composed.answer == "Kestrel Bay" and composed.citations[0].chunk_id == "d#0#0"


def test_step_and_run_properties_are_primitive_values() -> None:
    rt = _runtime()
    record = rt.new_record("Retrieval", step=1, action=1, question="q", lf="Retrieval(...)", source="chunks")
    record.queries.append(QueryRecord(name="procedures/hybrid_retrieval", cypher="RETURN 1",
                                      params=elide({"query_vector": [0.1] * 384, "query_text": "a b"})))
    record.used.append(Used(kind="Chunk", id="d#0#0", rank=1, score=0.5))
    record.outputs["o1"] = "1871"
    props = step_properties("run1", record)
    assert props["id"] == "run1:0" and props["op"] == "Retrieval"
    for value in props.values():
        assert isinstance(value, str | int | float | bool | list)
    params = json.loads(props["params"])
    assert params[0]["params"]["query_vector"] == "<384-d vector>"
    assert "// procedures/hybrid_retrieval" in props["cypher"]
    answer = Answer(question="q", answer="1871", known=True, steps=[record], usage={"llm_calls": 1})
    run = run_properties(answer, "run1", "scripted")
    assert run["llm_calls"] == 1 and run["known"] is True and "error" not in props


@pytest.mark.parametrize("bad", ["", "x' }) DETACH DELETE n //", "a b", "ü" * 3, "x" * 65])
def test_run_ids_are_checked(bad: str) -> None:
    with pytest.raises(KagError, match="run id"):
        check_run_id(bad)
    assert check_run_id("3f2a_b-9") == "3f2a_b-9"
