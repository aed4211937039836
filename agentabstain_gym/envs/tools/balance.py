"""Suite-level checks of the tool pairs: the published balance and no near-duplicate instructions.

A pair can be valid on its own and still hurt the benchmark: the counts per scenario, type, delta location and
phase are AgentAbstain's published table (``inventory.yaml`` holds them), and two pairs whose requests read almost alike measure
the same thing twice.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from rapidfuzz import fuzz

from agentabstain_gym.envs.tools import catalog
from agentabstain_gym.envs.tools.spec import read_yaml
from agentabstain_gym.envs.tools.tasks import Pair

#: Two requests of different pairs at or above this token-sort similarity (0-100) are near-duplicates.
NEAR_DUPLICATE = 85.0


def inventory() -> Mapping[str, Any]:
    return read_yaml(catalog.DATA_DIR / "inventory.yaml")


def balance(pairs: Sequence[Pair]) -> dict[str, Any]:
    """The counts the published table reports, for ``pairs``."""
    by_scenario: dict[str, Counter[str]] = {}
    for p in pairs:
        by_scenario.setdefault(p.scenario, Counter())[p.positive.type] += 1
    per_sandbox: Counter[str] = Counter()
    for p in pairs:
        per_sandbox.update(p.positive.sandboxes)
    return {
        "total": len(pairs),
        "by_scenario": {s: dict(sorted(c.items())) for s, c in sorted(by_scenario.items())},
        "by_location": dict(Counter(p.location for p in pairs)),
        "by_phase": dict(Counter(p.phase for p in pairs)),
        "by_type": dict(Counter(p.positive.type for p in pairs)),
        "per_sandbox": dict(sorted(per_sandbox.items())),
        "cross_sandbox": sum(len(p.positive.sandboxes) > 1 for p in pairs),
    }


def balance_problems(pairs: Sequence[Pair]) -> list[str]:
    """Where ``pairs`` differ from the published counts (empty when the suite has the published counts)."""
    target, have = inventory()["pairs"], balance(pairs)
    problems = []
    if have["total"] != target["total"]:
        problems.append(f"{have['total']} pairs, the published suite has {target['total']}")
    for scenario, types in target["by_scenario"].items():
        got = have["by_scenario"].get(scenario, {})
        for kind, n in types.items():
            if got.get(kind, 0) != n:
                problems.append(f"{scenario} {kind}: {got.get(kind, 0)} pairs, the published suite has {n}")
    for section in ("by_location", "by_phase"):
        for name, n in target[section].items():
            if have[section].get(name, 0) != n:
                what = "delta on the" if section == "by_location" else "trigger"
                problems.append(f"{what} {name}: {have[section].get(name, 0)} pairs, the published suite has {n}")
    least = target["min_pairs_per_sandbox"]
    for name in catalog.sandbox_names():
        if have["per_sandbox"].get(name, 0) < least:
            problems.append(f"{name} is in {have['per_sandbox'].get(name, 0)} pairs; every sandbox needs {least}")
    if have["cross_sandbox"] == 0:
        problems.append("no pair spans two sandboxes")
    return problems


def near_duplicates(pairs: Sequence[Pair], threshold: float = NEAR_DUPLICATE) -> list[str]:
    """Requests of different T+ tasks (and of T- tasks of different T+) that read almost alike."""
    problems = []
    for side in ("positive", "negative"):
        items: dict[str, tuple[str, str]] = {}  # one request per T+ entry, or per pair for T-
        for p in pairs:
            entry = p.key.split("#")[0]
            items.setdefault(entry if side == "positive" else p.key,
                             (entry, " ".join(getattr(p, side).instruction.lower().split())))
        for (key_a, (entry_a, a)), (key_b, (entry_b, b)) in itertools.combinations(sorted(items.items()), 2):
            if entry_a != entry_b and (score := fuzz.token_sort_ratio(a, b)) >= threshold:
                label = "T+" if side == "positive" else "T-"
                problems.append(f"{key_a} and {key_b}: {label} requests are near-duplicates ({score:.0f}/100)")
    return problems
