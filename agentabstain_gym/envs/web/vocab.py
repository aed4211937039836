"""The web shop's vocabulary, read from ``agentabstain_gym/data/web/*.json``: product types, attributes, options.

The match tables precomputed here are what make exact task construction cheap at any catalogue size: whether a
product *could* earn reward 1.0 for a goal reduces to bit tests on its attribute and option masks, because generated
pages mention an attribute phrase only when the product has it (:func:`vocabulary_problems` checks that).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources
from typing import Any

from agentabstain_gym.envs.web.matching import attribute_matches, option_matches

CATEGORIES = ("beauty", "grocery", "fashion", "home", "electronics")


@cache
def load_data(name: str) -> dict[str, Any]:
    """One of the shipped JSON files of ``agentabstain_gym/data/web`` (cached; do not mutate)."""
    path = resources.files("agentabstain_gym") / "data" / "web" / f"{name}.json"
    return json.loads(path.read_text(encoding="utf-8"))


@dataclass(frozen=True)
class ProductType:
    """One kind of product: ``attributes`` index the bits of an attribute mask, each option group's values index
    the bits of that group's mask. ``attr_match[a]`` is the mask of attributes that satisfy goal attribute ``a``;
    ``option_match[g][v]`` the mask of group ``g`` values that satisfy goal value ``v``."""

    type_id: int
    category: str
    category_label: str
    name: str
    path: tuple[str, ...]
    nouns: tuple[str, ...]
    price: tuple[float, float]
    attributes: tuple[str, ...]
    groups: tuple[str, ...]
    values: tuple[tuple[str, ...], ...]
    attr_match: tuple[int, ...]
    option_match: tuple[tuple[int, ...], ...]

    @property
    def plural(self) -> bool:
        return self.name.endswith("s")

    @property
    def with_article(self) -> str:
        if self.plural:
            return self.name
        return ("an " if self.name[0] in "aeiou" else "a ") + self.name

    def grammar(self) -> dict[str, str]:
        """Template slots that agree with the type's name: ``type``, ``type_a``, ``be``, ``come``."""
        return {"type": self.name, "type_a": self.with_article, "be": "are" if self.plural else "is",
                "come": "come" if self.plural else "comes"}

    @property
    def product_category(self) -> str:
        return " › ".join((self.category_label, *self.path))


def _mask_table(items: tuple[str, ...], matches: Any) -> tuple[int, ...]:
    return tuple(sum(1 << j for j, other in enumerate(items) if matches(goal, other)) for goal in items)


@lru_cache(maxsize=1)
def product_types() -> tuple[ProductType, ...]:
    """Every product type, in a fixed order (the order of the data file)."""
    data = load_data("catalogue")["categories"]
    out: list[ProductType] = []
    for category in CATEGORIES:
        spec = data[category]
        for t in spec["types"]:
            attributes = tuple(t["attributes"])
            groups = tuple(t["options"])
            values = tuple(tuple(t["options"][g]) for g in groups)
            if len(attributes) > 31 or any(len(v) > 15 for v in values):
                raise ValueError(f"product type {t['name']!r}: too many attributes or option values for the masks")
            out.append(ProductType(
                type_id=len(out), category=category, category_label=spec["label"], name=t["name"],
                path=tuple(t["path"]), nouns=tuple(t["nouns"]), price=(float(t["price"][0]), float(t["price"][1])),
                attributes=attributes, groups=groups, values=values,
                attr_match=_mask_table(attributes, lambda g, p: attribute_matches(g, p)),
                option_match=tuple(_mask_table(v, option_matches) for v in values)))
    return tuple(out)


@lru_cache(maxsize=1)
def type_by_name() -> dict[str, ProductType]:
    return {t.name: t for t in product_types()}


@lru_cache(maxsize=4096)
def title_case(phrase: str) -> str:
    """Capitalise a phrase as a store title would, keeping acronyms (SPF, USB, HDMI...) upper case."""
    acronyms = set(load_data("text")["acronyms"])
    words = []
    for word in phrase.split(" "):
        low = word.lower()
        if low in acronyms or (low[:-1].isdigit() and low[-1:] == "w"):
            words.append(word.upper())
        else:
            words.append(word[:1].upper() + word[1:])
    return " ".join(words)


def generic_texts(ptype: ProductType) -> list[str]:
    """Every text a page of this type may show that does not come from one of the product's attributes."""
    text = load_data("text")
    cat = ptype.category
    brands = text["brands"][cat]
    out = [*ptype.nouns, *text["title_tails"][cat], *text["bullet_openers"][cat], *text["generic_bullets"],
           *text["descriptions"], ptype.category_label, *ptype.path]
    out += [p + s for p in brands["prefix"] for s in brands["suffix"]]
    return [s.lower() for s in out]


def vocabulary_problems() -> list[str]:
    """Data errors that would break exact task construction (empty when the data is sound)."""
    problems = []
    for ptype in product_types():
        generic = generic_texts(ptype)
        for attribute in ptype.attributes:
            for text in generic:
                if attribute in text.replace("{noun}", "").replace("{brand}", ""):
                    problems.append(f"{ptype.name}: attribute {attribute!r} occurs in generic text {text!r}")
        for g, group in enumerate(ptype.groups):
            for h, other in enumerate(ptype.groups):
                if g == h:
                    continue
                for v in ptype.values[g]:
                    for u in ptype.values[h]:
                        if option_matches(v, u):
                            problems.append(f"{ptype.name}: option {v!r} ({group}) matches {u!r} ({other})")
    return problems
