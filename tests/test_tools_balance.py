"""The AbstainTools suite has the published counts: 42 sandboxes, 541 tools (246/119/176), 263 pairs with its per-scenario,
per-type, per-location and per-phase counts, every sandbox in 3+ pairs, cross-sandbox pairs, no near-duplicates."""

from __future__ import annotations

import dataclasses
from collections import Counter

from agentabstain_gym.envs.tools import catalog
from agentabstain_gym.envs.tools.balance import balance, balance_problems, inventory, near_duplicates
from agentabstain_gym.envs.tools.schemas import tool_kinds
from agentabstain_gym.envs.tools.tasks import load_pairs

SEED_PAIRS = {"S1": (19, 20), "S2": (15, 15), "S3": (17, 15), "S4": (16, 15), "S5": (15, 19), "S6": (19, 15),
              "S7": (15, 15), "S8": (16, 17)}


def test_inventory_targets_are_the_published_table() -> None:
    target = inventory()["pairs"]
    assert {s: (t["informational"], t["operational"]) for s, t in target["by_scenario"].items()} == SEED_PAIRS
    assert target["total"] == 263 == sum(a + b for a, b in SEED_PAIRS.values())
    assert target["by_location"] == {"query": 132, "environment": 63, "inventory": 34, "runtime": 34}
    assert target["by_phase"] == {"pre-execution": 166, "runtime": 97}


def test_sandboxes_and_tools_are_exactly_the_published_ones() -> None:
    names = catalog.sandbox_names()
    assert len(names) == 42
    kinds = Counter(kind for name in names for kind in tool_kinds(name).values())
    assert dict(kinds) == {"lookup": 246, "verify": 119, "commit": 176}


def test_pairs_have_exactly_the_published_balance() -> None:
    pairs = load_pairs()
    have = balance(pairs)
    assert have["total"] == 263
    assert {s: (t.get("informational", 0), t.get("operational", 0))
            for s, t in have["by_scenario"].items()} == SEED_PAIRS
    assert have["by_location"] == {"query": 132, "environment": 63, "inventory": 34, "runtime": 34}
    assert have["by_phase"] == {"pre-execution": 166, "runtime": 97}
    assert have["by_type"] == {"informational": 132, "operational": 131}
    # S5 is exactly the inventory deltas and S6 exactly the runtime ones, as in the published suite
    assert {p.location for p in pairs if p.scenario == "S5"} == {"inventory"}
    assert {p.location for p in pairs if p.scenario == "S6"} == {"runtime"}
    assert min(have["per_sandbox"][n] for n in catalog.sandbox_names()) >= 3
    assert have["cross_sandbox"] >= 53  # multi-app tasks: a trip, a refund, a notice checked in the company register
    spanning = [p for p in pairs if len(p.positive.sandboxes) > 1]
    assert {p.scenario for p in spanning} == set(SEED_PAIRS) and {p.positive.type for p in spanning} == {
        "informational", "operational"}
    assert balance_problems(pairs) == []


def test_no_two_pairs_are_near_duplicates() -> None:
    assert near_duplicates(load_pairs()) == []


def test_near_duplicate_check_catches_a_reworded_copy() -> None:
    pairs = list(load_pairs())
    a, b = pairs[0], next(p for p in pairs if p.key.split("#")[0] != pairs[0].key.split("#")[0])
    echo = dataclasses.replace(b, positive=dataclasses.replace(b.positive, instruction=a.positive.instruction + "!"))
    problems = near_duplicates([a, echo])
    assert len(problems) == 1 and "T+ requests are near-duplicates" in problems[0]
