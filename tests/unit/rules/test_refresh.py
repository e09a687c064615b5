"""Which registered rules a change touches (no database): the footprint's relation types,
property keys and labels against what each rule reads, then every rule reading their results."""

from __future__ import annotations

from pathlib import Path

from kag_neo4j.rules.apply import compile_all
from kag_neo4j.rules.footprint import Footprint
from kag_neo4j.rules.load import load_rules, rule_head
from kag_neo4j.rules.refresh import affected

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
RISK = [FIXTURES / "schemas" / "RiskMining.schema", FIXTURES / "rules" / "kag" / "riskmining_concept.rule"]
SUPPLY = [FIXTURES / "schemas" / "SupplyChain.schema", FIXTURES / "rules" / "kag" / "supplychain_concept.rule"]


def _affected(files: list[Path], **change: set[str]) -> list[str]:
    rules = load_rules(files)
    return [rule.id.partition(":")[2] for rule in affected(compile_all(rules), Footprint(
        **{k: frozenset(v) for k, v in change.items()}), rules.schema_)]


def test_an_empty_change_touches_nothing() -> None:
    assert _affected(RISK) == [] and _affected(SUPPLY) == []


def test_a_property_touches_its_readers_and_their_dependents_in_run_order() -> None:
    assert _affected(RISK, keys={"riskMark"}) == [
        "App-belongTo->TaxOfRiskApp/赌博应用", "Person-belongTo->TaxOfRiskUser/赌博App开发者",
        "Person-belongTo->TaxOfRiskUser/赌博App老板"]


def test_a_relation_type_touches_its_readers_and_an_untyped_edge_reads_every_type() -> None:
    # release's `<-[useCert]-` is a variable without a type: any relation type touches it
    assert _affected(RISK, types={"hasDevice"}) == [
        "Person-developed->App", "Person-release->App", "Person-belongTo->TaxOfRiskUser/赌博App开发者",
        "Person-belongTo->TaxOfRiskUser/赌博App老板"]


def test_labels_matter_only_for_nodes_on_no_edge() -> None:
    # (e:ProductChainEvent) with an empty Structure: a new event is a new match
    assert _affected(SUPPLY, labels={"ProductChainEvent"})[0] == "ProductChainEvent-belongTo->TaxOfProdEvent/价格上涨"
    # Company nodes of the fund-transfer rules sit on fundTrans edges: a Company label alone does
    # not touch them, only the rules whose (s:Company) stands alone
    touched = _affected(SUPPLY, labels={"Company"})
    assert "Company-fundTrans1Month->Float" not in touched and "Company-cashflowDiff1Month->Float" in touched


def test_concept_memberships_are_touched_by_the_taxonomy() -> None:
    assert "Person-belongTo->TaxOfRiskUser/赌博App开发者" in _affected(RISK, types={"IS_A"})


def test_rule_head() -> None:
    assert rule_head("RiskMining:Person-belongTo->TaxOfRiskUser/赌博App开发者") == ("Person", "belongTo", "TaxOfRiskUser")
    assert rule_head("SupplyChain:TaxOfProdEvent/价格上涨-leadTo->TaxOfCompanyEvent/成本上涨") == (
        "TaxOfProdEvent", "leadTo", "TaxOfCompanyEvent")
    assert rule_head("Company-fundTrans1Month->Float") == ("Company", "fundTrans1Month", "Float")
