"""AbstainTools sandbox specs: the meta-validator on every sandbox, the published tool counts, flat schemas."""

from __future__ import annotations

import copy

import pytest
import yaml

from agentabstain_gym.envs.tools import catalog
from agentabstain_gym.envs.tools.schemas import flat_schema_problems, tool_kinds, tool_schemas
from agentabstain_gym.envs.tools.spec import KIND_WORDS, check_sandbox, load_sandbox, parse_sandbox, read_yaml

SANDBOXES = list(catalog.sandbox_names())
INVENTORY = yaml.safe_load((catalog.DATA_DIR / "inventory.yaml").read_text())


def test_the_inventory_is_the_published_one() -> None:
    boxes = INVENTORY["sandboxes"]
    assert len(boxes) == 42
    assert sum(b["tools"] for b in boxes.values()) == INVENTORY["totals"]["tools"] == 541
    assert sum(INVENTORY["totals"][k] for k in ("lookup", "verify", "commit")) == 541
    assert all(catalog.camel(b["file"]) == name for name, b in boxes.items())


@pytest.mark.parametrize("name", SANDBOXES)
def test_spec_passes_meta_validation(name: str) -> None:
    assert check_sandbox(name) == []


@pytest.mark.parametrize("name", SANDBOXES)
def test_tool_count_is_the_published_one(name: str) -> None:
    assert name in INVENTORY["sandboxes"], f"{name} is not one of the published 42 sandboxes"
    spec = load_sandbox(name)
    assert len(spec.tools) == INVENTORY["sandboxes"][name]["tools"]
    assert all(c in ("lookup", "verify", "commit") for c in tool_kinds(name).values())


def test_kind_totals_stay_within_the_published_ones_and_match_them_when_complete() -> None:
    totals = {k: 0 for k in ("lookup", "verify", "commit")}
    for name in SANDBOXES:
        for kind, n in load_sandbox(name).kind_counts().items():
            totals[kind] += n
    seed = {k: INVENTORY["totals"][k] for k in totals}
    assert all(totals[k] <= seed[k] for k in totals), totals
    if len(SANDBOXES) == 42:
        assert totals == seed


@pytest.mark.parametrize("name", SANDBOXES)
def test_every_schema_is_flat_and_hides_the_kind(name: str) -> None:
    schemas = tool_schemas(name)
    assert [s["function"]["name"] for s in schemas] == list(load_sandbox(name).tools)
    for schema in schemas:
        assert flat_schema_problems(schema) == [], schema["function"]["name"]
        assert not KIND_WORDS.search(schema["function"]["description"])
        assert "kind" not in str(schema)


@pytest.mark.parametrize("name", SANDBOXES)
def test_seed_data_is_realistic_in_size(name: str) -> None:
    sizes = {c: len(r) for c, r in load_sandbox(name).snapshot.collections.items()}
    assert 1 <= len(sizes) <= 21
    assert max(sizes.values()) >= 24, sizes  # dozens of records somewhere, not three


def test_flat_schema_checker_catches_nesting() -> None:
    schema = tool_schemas("UserProfile")[0]
    bad = copy.deepcopy(schema)
    bad["function"]["parameters"]["properties"]["x"] = {"anyOf": [{"type": "string"}], "description": "d"}
    bad["function"]["parameters"]["additionalProperties"] = False
    problems = flat_schema_problems(bad)
    assert any("anyOf" in p for p in problems) and any("additionalProperties" in p for p in problems)


def _calendar_data() -> dict:
    return read_yaml(catalog.sandbox_path("Calendar"))


@pytest.mark.parametrize("breakage, expected", [
    (lambda d: d["tools"][0].update(kind="read"), "kind"),
    (lambda d: d["tools"][1].update(op="frobnicate"), "op"),
    (lambda d: d["tools"][1].update(description="Look up events with a lookup tool."), "reveal"),
    (lambda d: d["tools"][2]["parameters"]["query"].pop("description"), "description"),
    (lambda d: d["tools"][2]["config"].update(search_fields=["nope"]), "search_fields"),
    (lambda d: d["tools"][1]["config"].update(where={"field": "record.status", "op": "approx", "value": 1}),
     "operator"),
    (lambda d: d["tools"][9].update(custom="calendar.missing"), "exactly one"),
    (lambda d: d["tools"][6].update(custom="calendar.missing"), "not registered"),
    (lambda d: d["collections"]["events"]["records"][0].update(start="next tuesday"), "date"),
    (lambda d: d["collections"]["events"]["records"][1].update(event_id="evt-0201"), "duplicate key"),
    (lambda d: d["collections"]["rooms"]["records"][0].update(colour="red"), "not declared"),
    (lambda d: d["tools"][3]["parameters"].update(filter={"type": "object", "description": "x"}), "flat"),
    (lambda d: d["tools"][8]["config"].update(extra_key=1), "unknown config"),
    (lambda d: d.update(name="Calendars"), "CamelCase"),
])
def test_meta_validator_reports_each_breakage(breakage, expected: str) -> None:
    data = copy.deepcopy(_calendar_data())
    breakage(data)
    _, problems = parse_sandbox(data, "Calendar")
    assert any(expected in p for p in problems), problems
