"""KAG's demo questions, asked through the product path with the configured LLM.

    python benchmarks/demo_questions.py --yes [--demos DIR] [--schemas DIR] [--only riskmining,supplychain,medicine]
                                              [--hashing] [--keep]

EMPTIES the configured database (it must carry the test marker or be claimed with --yes) once
per demo, loads the demo the way its README builds it, and asks its questions with
``KAG.ask`` — the planner, Retrieval over stored and rule-derived facts, the judge, the
configured LLM (the offline default: Qwen2.5-Coder-1.5B through llama.cpp) — writing the trace:

* riskmining: the tables with ``RiskMining.schema`` (structured import, no LLM), then the
  schema's rules and the demo's ``concept.rule`` applied and registered (``kag-neo4j rules
  apply``); "裘**是否有风险？", "柏*是赌博App老板吗？".
* supplychain: the tables with ``SupplyChain.schema``, its rules and ``concept.rule`` as of
  2023-09-30; "顺丁橡胶成本上涨对那些公司产生了影响".
* medicine: ``Disease.csv`` read as passages and extracted in full mode with the LLM (two
  passages; the chunks titled by a disease also fill ``Disease``'s relations as a form), the
  taxonomies and ``SPO.csv`` as tables; "甲状腺结节可以吃什么药？". The load's note counts the
  typed ``(:Disease)-[:applicableMedicine]->(:Medicine)`` facts written from the text.

The expected answer is computed here from the CSVs and the rules' meaning (csv module only,
nothing read from the graph): the classes a rule puts the person in, the companies making a
product downstream of 顺丁橡胶, the medicines 甲状腺结节's text names. Prints a Markdown table:
question, answer, expected, right?, graph facts used, rule in the stored trace?, LLM calls,
seconds. ``--hashing`` embeds with the hashing embedder (quick loads; dense retrieval is then
lexical). Exits 1 when an answer is wrong.
"""

from __future__ import annotations

import csv
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kag_neo4j.api import KAG  # noqa: E402
from kag_neo4j.builder.pipeline import LoadOptions, load, with_schema_types  # noqa: E402
from kag_neo4j.builder.readers.common import ReadOptions  # noqa: E402
from kag_neo4j.builder.readers.mapping import MappingFile, TableMapping  # noqa: E402
from kag_neo4j.config import Settings, load_settings  # noqa: E402
from kag_neo4j.models import build_embedder, build_llm  # noqa: E402
from kag_neo4j.models.base import LLM, Embedder  # noqa: E402
from kag_neo4j.models.hashing import HashingEmbedder  # noqa: E402
from kag_neo4j.rules.registry import apply_and_register  # noqa: E402
from kag_neo4j.schema.validate import load_schema  # noqa: E402
from kag_neo4j.solver.results import Answer  # noqa: E402
from kag_neo4j.store.database import Database  # noqa: E402
from kag_neo4j.store.reset import claim_database, reset_database  # noqa: E402
from tests.integration.test_riskmining_acceptance import DEVELOPER, OWNER, expected_sets  # noqa: E402

from demos_load import DEMOS, demo_arguments, demo_rules, parse_demo_arguments, rows, values  # noqa: E402 - the sibling script

SUPPLY_AS_OF = "2023-09-30"
RISK_AS_OF = "2024-02-01"


@dataclass
class Expected:
    text: str  # shown in the table
    check: Callable[[Answer], bool]  # is the answer right?


@dataclass
class Question:
    demo: str
    text: str
    expected: Callable[[Path], Expected]


def _names(folder: Path, table: str, key: str = "id") -> dict[str, str]:
    return {r[key]: r["name"] for r in rows(folder / f"{table}.csv")}


def _mentions(answer: str, names: set[str]) -> set[str]:
    return {name for name in names if name in answer}


def _risk_classes(folder: Path, person: str) -> set[str]:
    """The TaxOfRiskUser classes concept.rule puts ``person`` (a name) in, from the CSVs."""
    ids = {name: pid for pid, name in _names(folder, "Person").items()}
    sets = expected_sets(folder)
    pid = ids[person]
    return {cls for cls, members in ((DEVELOPER, sets["developers"]), (OWNER, sets["owners"])) if pid in members}


def _is_risky(folder: Path) -> Expected:
    classes = _risk_classes(folder, "裘**")
    if not classes:
        return Expected("无风险", lambda a: a.known and ("否" in a.answer or "no" in a.answer.lower()))
    return Expected("是：" + "、".join(sorted(classes)),
                    lambda a: a.known and (bool(_mentions(a.answer, classes)) or a.answer.strip() in {"是", "yes"}))


def _is_owner(folder: Path) -> Expected:
    yes = OWNER in _risk_classes(folder, "柏*")
    if yes:
        return Expected("是", lambda a: a.known and (a.answer.strip() in {"是", "yes"} or a.answer.strip() == OWNER))
    return Expected("否", lambda a: a.known and a.answer.strip() in {"否", "no"})


def _affected_companies(folder: Path) -> Expected:
    """concept.rule: a 价格上涨 ProductChainEvent on product P leads to a 成本上涨 CompanyEvent of
    every company c with (P)-[:hasSupplyChain]->(down:Product)<-[:product]-(c); CompanyUpdate.csv
    replaces a company's products."""
    products = {r["id"]: r for r in rows(folder / "Product.csv")}
    events = [r for r in rows(folder / "ProductChainEvent.csv")
              if r["index"] == "价格" and r["trend"] == "上涨" and r["subject"].rsplit("-", 1)[-1] == "顺丁橡胶"]
    downstream = {d for e in events for d in values(products.get(e["subject"], {}).get("hasSupplyChain", ""))
                  if d in products}
    made = {r["id"]: (r["name"], set(values(r["product"]))) for r in rows(folder / "Company.csv")}
    for r in rows(folder / "CompanyUpdate.csv"):
        if r["id"] in made:
            made[r["id"]] = (made[r["id"]][0], set(values(r["products"])))
    affected = {name for name, made_products in made.values() if made_products & downstream}
    shown = "、".join(sorted(affected)[:4]) + (f" … ({len(affected)})" if len(affected) > 4 else "")

    def check(answer: Answer) -> bool:
        named = _mentions(answer.answer, set(_names(folder, "Company").values()))
        return answer.known and bool(named) and named <= affected

    return Expected(shown or "(none)", check)


#: the medicines the 甲状腺结节 row of Disease.csv names in its treatment sentences; each is
#: checked to occur in that row's text (so the list is the data's, read by a person)
THYROID_MEDICINES = ("复方碘口服液", "Lugol液", "抗甲状腺药物", "硫脲类化合物", "丙基硫氧嘧啶", "PTU",
                     "甲基硫氧嘧啶", "MTU", "甲硫咪唑", "卡比马唑", "放射性碘")


def _thyroid_medicines(folder: Path) -> Expected:
    (row,) = [r for r in rows(folder / "Disease.csv") if r["title"] == "甲状腺结节"]
    names = {m for m in THYROID_MEDICINES if m in row["text"]}
    missing = set(THYROID_MEDICINES) - names
    if missing:
        raise SystemExit(f"Disease.csv's 甲状腺结节 text no longer names {sorted(missing)}")

    def check(answer: Answer) -> bool:
        cited = any("甲状腺结节" in (c.title or "") or "甲状腺结节" in c.text for c in answer.citations)
        typed = any(f.predicate == "applicableMedicine" for f in answer.kg_path)  # the acceptance: from typed facts
        return answer.known and bool(_mentions(answer.answer, names)) and cited and typed

    return Expected("、".join(["复方碘口服液", "丙基硫氧嘧啶", "甲基硫氧嘧啶", "甲硫咪唑", "卡比马唑", "…"])
                    + " (cited, from typed facts)", check)


QUESTIONS = [
    Question("riskmining", "裘**是否有风险？", _is_risky),
    Question("riskmining", "柏*是赌博App老板吗？", _is_owner),
    Question("supplychain", "顺丁橡胶成本上涨对那些公司产生了影响", _affected_companies),
    Question("medicine", "甲状腺结节可以吃什么药？", _thyroid_medicines),
]


def load_demo(name: str, db: Database, settings: Settings, embedder: Embedder, llm: LLM, demos: Path,
              schemas: Path) -> str:
    """Load demo ``name`` into the (emptied) database as its README builds it; a one-line note."""
    folder = demos / name
    schema_file = schemas / DEMOS[name].schema
    schema = load_schema(str(schema_file))
    started = time.perf_counter()
    if name == "medicine":  # Disease.csv's text is extracted by the LLM (full mode); the rest are tables
        mapping = MappingFile(files={"Disease.csv": TableMapping(mode="passages")})
        summary = load([folder], db, settings, LoadOptions(mode="full", spg_schema=schema, similarity=None),
                       embedder=embedder, llm=llm,
                       read_options=with_schema_types(ReadOptions(mapping=mapping), schema))
        typed = db.read("MATCH (:Disease)-[r:applicableMedicine]->(:Medicine) WHERE size(r.chunk_ids) > 0 "
                        "RETURN count(r) AS n")[0]["n"]
        return (f"medicine: full load {time.perf_counter() - started:.0f} s, {summary.llm_calls} LLM calls, "
                f"{typed} typed applicableMedicine facts from the text")
    load([folder], db, settings, LoadOptions(mode="light", spg_schema=schema, similarity=None),
         embedder=embedder, read_options=with_schema_types(ReadOptions(), schema))
    loaded = time.perf_counter() - started
    as_of = SUPPLY_AS_OF if name == "supplychain" else RISK_AS_OF
    result = apply_and_register(db, demo_rules(folder, schema_file), as_of=as_of)
    derived = sum(r.derived for r in result.rules)
    return f"{name}: load {loaded:.0f} s, {len(result.rules)} rules applied as of {as_of} ({derived} facts)"


def rule_in_trace(db: Database, answer: Answer) -> str:
    """The rules the stored trace (the run's kg_path) names, or "no"."""
    if answer.run_id is None:
        return "no trace"
    row = db.read("MATCH (r:KagRun {id: $id}) RETURN r.kg_path AS path", id=answer.run_id)
    facts = json.loads(row[0]["path"]) if row and row[0]["path"] else []
    rules = sorted({f["derived_by"] for f in facts if f.get("derived_by")})
    return "; ".join(r.split(":", 1)[1] for r in rules) if rules else "no"


def _cell(text: str, limit: int = 60) -> str:
    text = " ".join(str(text).split()).replace("|", "\\|")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def main(argv: list[str] | None = None) -> int:
    parser = demo_arguments(__doc__)
    parser.add_argument("--only", default="riskmining,supplychain,medicine", help="demos to run, comma separated")
    parser.add_argument("--hashing", action="store_true", help="embed with the hashing embedder (fast loads)")
    parser.add_argument("--keep", action="store_true",
                        help="leave the last demo's graph and traces in the database (open them in Neo4j Browser)")
    args = parse_demo_arguments(parser, argv)
    settings = load_settings()
    embedder: Embedder = HashingEmbedder(384) if args.hashing else build_embedder(settings)
    llm = build_llm(settings)
    lines = ["| question | answer | expected (from the CSVs) | right? | graph facts used | rule in trace | LLM calls | s |",
             "|---|---|---|---|---|---|---:|---:|"]
    notes: list[str] = []
    wrong = 0
    with Database.connect(settings) as db:
        claim_database(db, reason="benchmarks/demo_questions.py --yes", allow_data=True)
        for demo in [d for d in args.only.split(",") if d]:
            questions = [q for q in QUESTIONS if q.demo == demo]
            if not questions:
                parser.error(f"no questions for demo {demo!r}; use riskmining, supplychain or medicine")
            reset_database(db)
            notes.append(load_demo(demo, db, settings, embedder, llm, args.demos, args.schemas))
            print(notes[-1], file=sys.stderr, flush=True)
            kag = KAG(db, llm, embedder)
            for question in questions:
                want = question.expected(args.demos / demo)
                started = time.perf_counter()
                answer = kag.ask(question.text)
                seconds = time.perf_counter() - started
                right = want.check(answer)
                wrong += not right
                facts = ", ".join(f"{f.subject} {f.predicate} {f.object}" for f in answer.kg_path[:3])
                more = f" (+{len(answer.kg_path) - 3})" if len(answer.kg_path) > 3 else ""
                lines.append(
                    f"| {question.text} | {_cell(answer.answer)} | {_cell(want.text)} | {'yes' if right else 'NO'} | "
                    f"{len(answer.kg_path)}: {_cell(facts + more, 80)} | {_cell(rule_in_trace(db, answer), 80)} | "
                    f"{answer.usage.get('llm_calls', 0)} | {seconds:.0f} |")
                print(f"{question.text}: {answer.answer!r} (run {answer.run_id})", file=sys.stderr, flush=True)
        if not args.keep:
            reset_database(db)
    llm.close()
    print("\n".join([*lines, "", *notes]))
    return 1 if wrong else 0


if __name__ == "__main__":
    raise SystemExit(main())
