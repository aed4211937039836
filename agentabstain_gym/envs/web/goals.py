"""Solvable shopping goals drawn from catalogue products, and their instructions.

A goal is taken from one product (its type, one to three of its attributes, one offered value per option group,
a price cap above its price), so at least that product earns reward 1.0. The instruction says all of it in one of
several sentence shapes taken from ``data/web/instructions.json``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from agentabstain_gym.envs.web.catalogue import GeneratedCatalogue
from agentabstain_gym.envs.web.matching import Goal
from agentabstain_gym.envs.web.vocab import ProductType, load_data, type_by_name


@dataclass(frozen=True)
class GoalSpec:
    """A goal with the product it was drawn from and the sentence that asks for it."""

    goal: Goal
    source: int
    instruction: str


def join_phrases(items: list[str] | tuple[str, ...]) -> str:
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def option_phrase(group: str, value: str, rng: np.random.Generator) -> str:
    phrases = load_data("instructions")["option_phrases"]
    choices = phrases.get(group, phrases["_default"])
    return choices[int(rng.integers(len(choices)))].format(v=value, g=group)


def options_phrase(options: tuple[tuple[str, str], ...], rng: np.random.Generator) -> str:
    joiner = (" and ", ", ", ", ")[int(rng.integers(3))]
    return joiner.join(option_phrase(g, v, rng) for g, v in options)


def format_cap(cap: float) -> str:
    return f"{cap:.2f}"


def price_cap(price: float, rng: np.random.Generator) -> float:
    """A round cap 5-80% above the price, as a shopper would state a budget."""
    raw = price * float(rng.uniform(1.05, 1.8))
    step = 5 if raw > 20 else 1
    return float(math.ceil(raw / step) * step)


#: Words that start an attribute phrase which cannot stand before the noun ("for pets air purifier").
_NOT_BEFORE_NOUN = frozenset({"for", "with", "no", "made", "works", "from", "one", "two", "three", "over", "on",
                              "in", "to", "under", "side", "back", "approved", "measure", "lab"})
#: A product for someone in particular: a request for it does not name another person as its user.
_FOR_SOMEONE = re.compile(r"\b(?:men's|women's|girls'|boys'|kids'?|baby|infant|toddler)(?!\w)")
#: ``[a|b|c]`` in a template: one of the alternatives.
_ALTERNATIVES = re.compile(r"\[([^\[\]]*)\]")


def _pick_one(items: list[str], rng: np.random.Generator) -> str:
    return items[int(rng.integers(len(items)))]


def _before_noun(attributes: tuple[str, ...]) -> bool:
    return bool(attributes) and all(a.split()[0] not in _NOT_BEFORE_NOUN and " for " not in a
                                    and " with " not in a for a in attributes)


def _article(phrase: str) -> str:
    return ("an " if phrase[0] in "aeiou" else "a ") + phrase


def goal_instruction(goal: Goal, ptype: ProductType, rng: np.random.Generator) -> str:
    """One of many sentence shapes (questions, fragments, requests with a use or a person in them), each stating
    every attribute, option value and the cap word for word."""
    return render_request(goal, ptype, rng)


def render_request(goal: Goal, ptype: ProductType, rng: np.random.Generator,
                   overrides: dict[str, str] | None = None) -> str:
    """A request for ``goal`` in one of the goal sentence shapes. ``overrides`` replaces what a slot says (the
    generated rewrites use it: ``type_a`` for something other than the type, ``attrs``, ``opts``, ``price``), and
    only shapes that say that slot the way it is given are drawn (no attributes before the noun when they are
    replaced, no shape stating the cap itself when the price is replaced)."""
    over = dict(overrides or {})
    data = load_data("instructions")["goal"]
    pre_ok = _before_noun(goal.attributes) and "attrs" not in over and "type_a" not in over

    def fits(t: dict[str, Any]) -> bool:
        text = t["t"]
        if "type_a" in over and ("{type}" in text or "{one}" in text or t.get("plural")):
            return False
        if "price" in over and ("{n}" in text or "{price}" not in text):
            return False
        return ((pre_ok or not t.get("pre")) and not (t.get("singular") and ptype.plural)
                and not (t.get("plural") and not ptype.plural))

    templates = [t for t in (t if isinstance(t, dict) else {"t": t} for t in data["templates"]) if fits(t)]
    template = _ALTERNATIVES.sub(lambda m: _pick_one(m.group(1).split("|"), rng),
                                templates[int(rng.integers(len(templates)))]["t"])
    uses = [*data["uses"]["any"], *data["uses"][ptype.category]]
    if not _FOR_SOMEONE.search(ptype.name):
        uses += data["uses"]["people"]
    cap = format_cap(goal.price_upper)
    n = f"{goal.price_upper:.0f}" if goal.price_upper == int(goal.price_upper) else cap
    prices = data["prices"]
    price = prices[int(rng.integers(len(prices)))].format(cap=cap, n=n)
    pre_type = f"{', '.join(goal.attributes)} {ptype.name}"
    attrs = join_phrases(goal.attributes)
    slots = {**ptype.grammar(), "attrs": attrs, "opts": options_phrase(goal.options, rng),
             "cap": cap, "n": n, "price": price, "use": uses[int(rng.integers(len(uses)))], "pre_type": pre_type,
             "one": "ones" if ptype.plural else "one",
             "pre_type_a": pre_type if ptype.plural else _article(pre_type)}
    if "type_a" in over:
        slots["be"], slots["come"] = "is", "comes"
    slots.update(over)
    text = template.format(**slots)
    return re.sub(r"\s+([,.;:?])", r"\1", re.sub(r"\s{2,}", " ", text)).strip()


def make_goals(catalogue: GeneratedCatalogue, seed: int, n_goals: int) -> list[GoalSpec]:
    """``n_goals`` distinct goals, each from a different product, in a seeded order."""
    rng = np.random.default_rng([seed, 0x60A1])
    order = rng.permutation(len(catalogue))
    goals: list[GoalSpec] = []
    seen: set[tuple] = set()
    for index in order:
        if len(goals) >= n_goals:
            break
        index = int(index)
        ptype = catalogue.ptype(index)
        attrs = list(catalogue.attributes(index))
        k = min(len(attrs), int(rng.choice([1, 2, 2, 2, 3])))
        chosen = tuple(attrs[int(j)] for j in sorted(rng.choice(len(attrs), size=k, replace=False)))
        offered = catalogue.options(index)
        options = tuple((g, vals[int(rng.integers(len(vals)))]) for g, vals in offered.items())
        goal = Goal(product_type=ptype.name, category=ptype.category, attributes=chosen, options=options,
                    price_upper=price_cap(catalogue.price(index), rng))
        key = (goal.product_type, tuple(sorted(goal.attributes)), goal.options)
        if key in seen:
            continue
        seen.add(key)
        # the wording has a stream of its own, so new sentence shapes change no goal (rewrite slots are keyed by goal)
        wording = np.random.default_rng([seed, 0x1A57, len(goals)])
        goals.append(GoalSpec(goal=goal, source=index, instruction=goal_instruction(goal, ptype, wording)))
    if len(goals) < n_goals:
        raise ValueError(f"a catalogue of {len(catalogue)} products yields only {len(goals)} distinct goals; "
                         f"ask for fewer goals or more products")
    return goals


def goal_to_dict(goal: Goal) -> dict:
    return {"product_type": goal.product_type, "category": goal.category, "attributes": list(goal.attributes),
            "options": [list(o) for o in goal.options], "price_upper": goal.price_upper}


def goal_from_dict(data: dict, where: str = "goal") -> Goal:
    """A goal from its dict form (task payloads, custom tasks); errors say which field is wrong."""
    if not isinstance(data, dict):
        raise ValueError(f"{where}: expected an object with product_type, attributes, options, price_upper")
    ptype = data.get("product_type")
    if not isinstance(ptype, str) or not ptype:
        raise ValueError(f"{where}: field 'product_type' must be a non-empty string")
    attributes = data.get("attributes", [])
    if not isinstance(attributes, list) or not all(isinstance(a, str) for a in attributes):
        raise ValueError(f"{where}: field 'attributes' must be a list of strings")
    options = data.get("options", [])
    if isinstance(options, dict):
        options = list(options.items())
    if not isinstance(options, list) or not all(isinstance(o, (list, tuple)) and len(o) == 2 for o in options):
        raise ValueError(f"{where}: field 'options' must be a list of [group, value] pairs or an object")
    price = data.get("price_upper", 1e9)
    if isinstance(price, bool) or not isinstance(price, (int, float)):
        raise ValueError(f"{where}: field 'price_upper' must be a number")
    known = type_by_name().get(ptype)
    category = str(data.get("category") or (known.category if known else ""))
    return Goal(product_type=ptype, category=category, attributes=tuple(a.lower() for a in attributes),
                options=tuple((str(g), str(v)) for g, v in options), price_upper=float(price))
