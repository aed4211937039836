"""WebShop's purchase reward, with rapidfuzz in place of its Java/spaCy stack.

``reward = (attribute matches + option matches + 1[price <= cap]) / (attributes + options + 1) * type gate``.
A goal attribute matches when one of the product's attributes scores above 85 on ``token_set_ratio`` or when the
phrase occurs in the product's title, bullets or description; a goal option matches a chosen option when the two are
equal after normalising case and spaces (stricter than WebShop, see :func:`option_matches`). The type gate is 1 for the goal's product type, 0.5 for another type of the same
category, 0.1 otherwise (WebShop derives a similar gate from the product query and title nouns).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from rapidfuzz import fuzz

#: WebShop's threshold: a fuzzy score strictly above this counts as a match.
FUZZY_THRESHOLD = 85.0


def attribute_matches(goal: str, product_attribute: str) -> bool:
    g, p = goal.lower(), product_attribute.lower()
    return g == p or g in p or fuzz.token_set_ratio(g, p) > FUZZY_THRESHOLD


def normalise(text: str) -> str:
    return " ".join(text.lower().split())


def option_matches(goal: str, chosen: str) -> bool:
    """Equal after case and whitespace normalisation. (WebShop's fuzzy option match counts "1 fl oz (pack of 1)"
    as "3.4 fl oz (pack of 1)" and "iphone 14" as "iphone 15", which rewards the wrong size or model.)"""
    return normalise(goal) == normalise(chosen)


@dataclass(frozen=True)
class Goal:
    """What a buyer wants: a product type, attribute phrases, option values by group, and a price cap."""

    product_type: str
    category: str
    attributes: tuple[str, ...]
    options: tuple[tuple[str, str], ...]  # (group, value)
    price_upper: float
    extra: Mapping[str, object] = field(default_factory=dict, compare=False, hash=False)


@dataclass(frozen=True)
class Score:
    """The parts of a purchase reward, kept for the episode record and for tests."""

    reward: float
    attribute_matches: int
    option_matches: int
    price_ok: bool
    type_gate: float


def type_gate(goal: Goal, product_type: str, category: str) -> float:
    if product_type == goal.product_type:
        return 1.0
    return 0.5 if category == goal.category else 0.1


def count_attribute_matches(goal: Goal, attributes: Sequence[str], text_lower: str) -> int:
    matched = 0
    for attribute in goal.attributes:
        if any(attribute_matches(attribute, p) for p in attributes) or attribute.lower() in text_lower:
            matched += 1
    return matched


def count_option_matches(goal: Goal, chosen: Iterable[str]) -> int:
    chosen = list(chosen)
    return sum(1 for _, value in goal.options if any(option_matches(value, c) for c in chosen))


def score_purchase(goal: Goal, *, product_type: str, category: str, attributes: Sequence[str], text_lower: str,
                   price: float, chosen_options: Iterable[str]) -> Score:
    """The reward of buying this product with these options for ``goal``."""
    n_attr = count_attribute_matches(goal, attributes, text_lower)
    n_opt = count_option_matches(goal, chosen_options)
    price_ok = price <= goal.price_upper + 1e-9
    gate = type_gate(goal, product_type, category)
    total = len(goal.attributes) + len(goal.options) + 1
    reward = round((n_attr + n_opt + int(price_ok)) / total * gate, 6)
    return Score(reward=reward, attribute_matches=n_attr, option_matches=n_opt, price_ok=price_ok, type_gate=gate)


def best_choice(goal: Goal, offered: Mapping[str, Sequence[str]]) -> dict[str, str]:
    """The option choice (one value per group) that matches the most goal options: each goal option is served by
    its own group when it can be, else by any group still free."""
    choice: dict[str, str] = {}
    for group, value in goal.options:
        groups = [group] + [g for g in offered if g != group]
        for g in groups:
            if g in choice or g not in offered:
                continue
            hit = next((v for v in offered[g] if option_matches(value, v)), None)
            if hit is not None:
                choice[g] = hit
                break
    return choice
