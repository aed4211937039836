"""Request-based rewrites of solvable goals: the instruction alone shows the request cannot be served as asked.

Three kinds, as in the paper: a matter of taste the store cannot check (``subjective``), a request that does not
say what to buy (``underspecified_intent``), and a request that cannot be true or contradicts itself
(``false_premise``: a price window that is empty, an option no product of the type has, two properties that
exclude each other). Each is said in the sentence shapes of the solvable requests (one slot changed: what is
wanted, the attributes, the options or the price), so length and punctuation do not give the kind away; none names
the problem.

The shipped default set does not use these templates: its 249 rewrites were written by people, one per slot, and
live in ``data/web/rewrites_authored.json`` keyed by :func:`slot_key` (the goal and the kind). The generator fills
any slot that file has no text for, and every slot of another seed or size.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from agentabstain_gym.envs.web.goals import (
    format_cap,
    goal_to_dict,
    join_phrases,
    option_phrase,
    render_request,
)
from agentabstain_gym.envs.web.matching import Goal, normalise
from agentabstain_gym.envs.web.vocab import ProductType, load_data, product_types

REWRITE_KINDS = ("subjective", "underspecified_intent", "false_premise")


@dataclass(frozen=True)
class Rewrite:
    instruction: str
    evidence: str
    form: str


def _pick(rng: np.random.Generator, items: list[str]) -> str:
    return items[int(rng.integers(len(items)))]


@lru_cache(maxsize=1)
def _attribute_spread() -> Counter:
    """How many product types list each attribute: a widely shared one says little about what to buy."""
    return Counter(a for t in product_types() for a in t.attributes)


@lru_cache(maxsize=1)
def _shared_values() -> dict[str, set[str]]:
    """Option value -> the product types that offer it."""
    out: dict[str, set[str]] = {}
    for t in product_types():
        for values in t.values:
            for v in values:
                out.setdefault(normalise(v), set()).add(t.name)
    return out


def subjective(goal: Goal, ptype: ProductType, rng: np.random.Generator) -> Rewrite:
    data = load_data("instructions")["subjective"]
    taste = _pick(rng, data["tastes"])
    kept = goal.attributes[:1] if len(goal.attributes) > 1 else ()  # taste stands in for the rest
    attrs = f"{kept[0]}, {taste}" if kept else taste
    text = render_request(goal, ptype, rng, {"attrs": attrs})
    return Rewrite(text, f"the choice rests on taste the store cannot check ({taste})", "taste")


def underspecified_intent(goal: Goal, ptype: ProductType, rng: np.random.Generator) -> Rewrite:
    data = load_data("instructions")["underspecified_intent"]
    spread = _attribute_spread()
    attr = max(goal.attributes, key=lambda a: (spread[a], a))
    generic = data["generic_options"]
    shared = _shared_values()
    parts = []
    for group, value in goal.options:  # a value many product types offer says nothing about what to buy
        if len(shared.get(normalise(value), ())) >= 3 and rng.random() < 0.7:
            parts.append(option_phrase(group, value, rng))
        else:
            parts.append(_pick(rng, generic.get(group, generic["other"])))
    gopts = " and ".join(parts) or "in any version"
    text = render_request(goal, ptype, rng, {"type_a": _pick(rng, data["things"]), "attrs": attr, "opts": gopts})
    return Rewrite(text, "the request does not say what kind of product to buy", "no_type")


def _foreign_value(ptype: ProductType, rng: np.random.Generator) -> tuple[str, str]:
    """An option value of another category's product type that no product of ``ptype`` can have."""
    own = {normalise(v) for values in ptype.values for v in values}
    pool = [(g, v) for t in product_types() if t.category != ptype.category
            for g, values in zip(t.groups, t.values, strict=True) for v in values
            if normalise(v) not in own and g in ("size", "model", "wattage", "count")]
    return pool[int(rng.integers(len(pool)))]


def false_premise(goal: Goal, ptype: ProductType, rng: np.random.Generator, form: str) -> Rewrite:
    data = load_data("instructions")["false_premise"]
    clashing = [a for a in goal.attributes if a in data["clashes"]]
    if not clashing:  # the goal's own attributes have no known opposite: use one the type has (sorted: seeded)
        clashing = sorted(a for a in ptype.attributes if a in data["clashes"])
    if form == "clash" and not clashing:
        form = "foreign"
    if form == "clash":
        attr = clashing[int(rng.integers(len(clashing)))]
        clash = data["clashes"][attr]
        others = [a for a in goal.attributes if a != attr]
        text = render_request(goal, ptype, rng, {"attrs": join_phrases([*others, attr]) + f" and {clash}"})
        return Rewrite(text, f"'{attr}' and '{clash}' cannot both hold", "clash")
    if form == "foreign":
        group, value = _foreign_value(ptype, rng)
        text = render_request(goal, ptype, rng, {"opts": option_phrase(group, value, rng)})
        return Rewrite(text, f"no {ptype.name} comes as {value}", "foreign")
    floor = float(round(goal.price_upper * float(rng.uniform(1.4, 2.2))))
    cap = goal.price_upper
    window = _pick(rng, data["price_windows"]).format(floor=f"{floor:.0f}", n=f"{cap:.0f}" if cap == int(cap)
                                                      else format_cap(cap))
    text = render_request(goal, ptype, rng, {"price": window})
    return Rewrite(text, f"no price is above {format_cap(floor)} and below {format_cap(cap)} dollars", "price")


def rewrite(kind: str, goal: Goal, ptype: ProductType, rng: np.random.Generator, turn: int) -> Rewrite:
    """The ``kind`` rewrite of ``goal``; ``turn`` rotates the forms of false premises so all three occur."""
    if kind == "subjective":
        return subjective(goal, ptype, rng)
    if kind == "underspecified_intent":
        return underspecified_intent(goal, ptype, rng)
    if kind == "false_premise":
        return false_premise(goal, ptype, rng, ("clash", "foreign", "price")[turn % 3])
    raise ValueError(f"unknown rewrite kind {kind!r}; valid kinds are {list(REWRITE_KINDS)}")


#: What reveals the problem of an authored rewrite (the record's ``evidence``; the generator's say it per form).
AUTHORED_EVIDENCE = {
    "subjective": "the choice rests on taste or feelings no product page can confirm",
    "underspecified_intent": "the request leaves out what it needs, or leans on context the store cannot know",
    "false_premise": "the request asks for something that cannot exist or contradicts itself",
}


def slot_key(goal: Goal, kind: str) -> str:
    """A rewrite slot's stable key: its goal's content and its kind (never its position or task id, which move
    whenever the task set is re-drawn)."""
    text = json.dumps([goal_to_dict(goal), kind], sort_keys=True)
    return "rw-" + hashlib.sha256(text.encode()).hexdigest()[:12]


def authored_rewrites(seed: int, n_products: int, n_goals: int) -> Mapping[str, Mapping[str, str]]:
    """The written rewrites for the default task set, ``key -> {"category", "instruction"}``; empty for any other
    seed or size (the file says which set it was written for)."""
    data = load_data("rewrites_authored")
    made_for = data.get("dataset", {})
    if [made_for.get("seed"), made_for.get("n_products"), made_for.get("n_goals")] != [seed, n_products, n_goals]:
        return {}
    return data.get("rewrites", {})


def authored(entry: Mapping[str, str], kind: str) -> Rewrite:
    """An authored slot's text as a rewrite (its category must be ``kind``: a key names both)."""
    if entry.get("category") != kind:
        raise ValueError(f"rewrites_authored.json: a {kind} slot holds a {entry.get('category')!r} text")
    return Rewrite(str(entry["instruction"]), AUTHORED_EVIDENCE[kind], "authored")
