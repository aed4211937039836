"""The web shop's vocabulary, read from ``agentabstain_gym/data/web``: product types, attributes, options.

Product types live one file per category (``data/web/catalogue/<category>.json``, ``{"label", "types"}``), in
:data:`CATEGORIES` order and file order, so any number of types can be authored without touching code.

The match tables precomputed here are what make exact task construction cheap at any catalogue size: whether a
product *could* earn reward 1.0 for a goal reduces to bit tests on its attribute and option masks, because generated
pages mention an attribute phrase only when the product has it (:func:`vocabulary_problems` checks that).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources
from typing import Any

from agentabstain_gym.envs.web.matching import attribute_matches, option_matches

CATEGORIES = ("beauty", "grocery", "fashion", "home", "electronics")
#: Widths the generated catalogue's bit masks support (it picks the narrowest dtype that fits the data).
MAX_ATTRIBUTES = 64
MAX_GROUP_VALUES = 64
MAX_GROUPS = 8
#: What the authoring guide asks of a shipped type (checked by :func:`catalogue_problems`).
TYPE_KEYS = frozenset({"name", "path", "nouns", "price", "attributes", "options"})
AUTHORED_ATTRIBUTES = (8, 16)
AUTHORED_GROUPS = (1, 2)
AUTHORED_VALUES = (2, 12)


@cache
def load_data(name: str) -> dict[str, Any]:
    """One of the shipped JSON files of ``agentabstain_gym/data/web`` (cached; do not mutate)."""
    path = resources.files("agentabstain_gym") / "data" / "web" / f"{name}.json"
    return json.loads(path.read_text(encoding="utf-8"))


@cache
def load_category(category: str) -> dict[str, Any]:
    """The shipped product types of one category, ``{"label": ..., "types": [...]}`` (cached; do not mutate)."""
    if category not in CATEGORIES:
        raise ValueError(f"unknown category {category!r}; valid categories are {list(CATEGORIES)}")
    path = resources.files("agentabstain_gym") / "data" / "web" / "catalogue" / f"{category}.json"
    return json.loads(path.read_text(encoding="utf-8"))


def catalogue_data() -> dict[str, dict[str, Any]]:
    """Every category's type file, in :data:`CATEGORIES` order."""
    return {c: load_category(c) for c in CATEGORIES}


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
        return self.name.endswith("s") and not self.name.endswith(("ss", "us", "is"))

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


def _mask_table(items: tuple[str, ...], matches: Callable[[str, str], bool]) -> tuple[int, ...]:
    return tuple(sum(1 << j for j, other in enumerate(items) if matches(goal, other)) for goal in items)


def make_type(type_id: int, category: str, label: str, spec: Mapping[str, Any]) -> ProductType:
    """A product type from its data (shipped or synthesised); raises ``ValueError`` when it cannot fit the masks."""
    attributes = tuple(spec["attributes"])
    groups = tuple(spec["options"])
    values = tuple(tuple(spec["options"][g]) for g in groups)
    if len(attributes) > MAX_ATTRIBUTES or len(groups) > MAX_GROUPS or any(len(v) > MAX_GROUP_VALUES for v in values):
        raise ValueError(f"product type {spec['name']!r}: more than {MAX_ATTRIBUTES} attributes, {MAX_GROUPS} option "
                         f"groups or {MAX_GROUP_VALUES} values in a group")
    return ProductType(
        type_id=type_id, category=category, category_label=label, name=spec["name"], path=tuple(spec["path"]),
        nouns=tuple(spec["nouns"]), price=(float(spec["price"][0]), float(spec["price"][1])),
        attributes=attributes, groups=groups, values=values,
        attr_match=_mask_table(attributes, attribute_matches),
        option_match=tuple(_mask_table(v, option_matches) for v in values))


def build_types(data: Mapping[str, Mapping[str, Any]]) -> tuple[ProductType, ...]:
    """Product types of category files, numbered in :data:`CATEGORIES` order, then file order."""
    out: list[ProductType] = []
    for category in CATEGORIES:
        if category not in data:
            continue
        spec = data[category]
        for t in spec["types"]:
            out.append(make_type(len(out), category, spec["label"], t))
    return tuple(out)


@lru_cache(maxsize=1)
def product_types() -> tuple[ProductType, ...]:
    """Every shipped product type, in a fixed order (categories in :data:`CATEGORIES` order, types in file order)."""
    return build_types(catalogue_data())


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


def _type_problems(where: str, t: Mapping[str, Any]) -> list[str]:
    """What the authoring guide asks of one type's data (shape, sizes, and attributes that would blur)."""
    if not isinstance(t, Mapping) or set(t) != TYPE_KEYS:
        keys = sorted(t) if isinstance(t, Mapping) else type(t).__name__
        return [f"{where}: keys {keys} != {sorted(TYPE_KEYS)}"]
    out = []
    name = t["name"]
    if not isinstance(name, str) or not name.strip() or name != name.lower() or name != " ".join(name.split()):
        out.append(f"{where}: name must be a lower-case phrase")
    if not isinstance(t["path"], list) or not 2 <= len(t["path"]) <= 4:
        out.append(f"{where}: path needs 2-4 levels")
    if not isinstance(t["nouns"], list) or len(t["nouns"]) != 3 or len(set(t["nouns"])) != 3:
        out.append(f"{where}: give exactly 3 distinct title nouns")
    price = t["price"]
    if not (isinstance(price, list) and len(price) == 2 and all(isinstance(p, (int, float)) for p in price)
            and 0 < price[0] < price[1]):
        out.append(f"{where}: price [lo, hi] with 0 < lo < hi")
    attrs = t["attributes"]
    lo, hi = AUTHORED_ATTRIBUTES
    if not isinstance(attrs, list) or not all(isinstance(a, str) for a in attrs):
        return [*out, f"{where}: attributes must be a list of strings"]
    if not lo <= len(attrs) <= hi or len(set(attrs)) != len(attrs):
        out.append(f"{where}: {lo}-{hi} distinct attributes (has {len(attrs)})")
    for a in attrs:
        if a != a.lower() or a != " ".join(a.split()) or not a:
            out.append(f"{where}: attribute {a!r} must be a lower-case phrase")
        for b in attrs:
            if a != b and attribute_matches(a, b):
                out.append(f"{where}: attribute {a!r} also matches {b!r} (fuzzy or substring)")
    groups = t["options"]
    if not isinstance(groups, Mapping) or not all(isinstance(v, list) and all(isinstance(x, str) for x in v)
                                                  for v in groups.values()):
        return [*out, f"{where}: options must map each group to a list of strings"]
    glo, ghi = AUTHORED_GROUPS
    if not glo <= len(groups) <= ghi:
        out.append(f"{where}: {glo} or {ghi} option groups")
    vlo, vhi = AUTHORED_VALUES
    for g, vals in groups.items():
        if not vlo <= len(vals) <= vhi or len(set(vals)) != len(vals):
            out.append(f"{where}: option group {g!r} needs {vlo}-{vhi} distinct values")
        if any(v != v.lower() or not v.strip() for v in vals):
            out.append(f"{where}: option group {g!r} values must be lower case")
    names = list(groups)
    for i, g in enumerate(names):
        for h in names[i + 1:]:
            for v in groups[g]:
                for u in groups[h]:
                    if option_matches(v, u):
                        out.append(f"{where}: option {v!r} in {g!r} and {h!r}")
    if isinstance(t["path"], list) and isinstance(t["nouns"], list) and isinstance(name, str):
        own = " ".join(str(x).lower() for x in [*t["nouns"], *t["path"], name])
        for a in attrs:
            if a in own:
                out.append(f"{where}: attribute {a!r} occurs in the name/nouns/path (every product would show it)")
    return out


def _generic_problems(ptype: ProductType) -> list[str]:
    """Attributes that generic page text of the type already shows (a product without them would show them too)."""
    generic = [g.replace("{noun}", "").replace("{brand}", "") for g in generic_texts(ptype)]
    blob = "\n".join(generic)
    out = []
    for attribute in ptype.attributes:
        if attribute in blob:
            text = next(g for g in generic if attribute in g)
            out.append(f"{ptype.name}: attribute {attribute!r} occurs in generic text {text!r}")
    return out


def catalogue_problems(data: Mapping[str, Mapping[str, Any]], only: tuple[str, ...] | None = None) -> list[str]:
    """Every problem of category files ``data`` (category -> ``{"label", "types"}``): the authoring guide's rules,
    names unique across the store, and (once all five categories are there) attributes that generic page text
    shows. ``only`` limits the report to those categories (name clashes are always reported)."""
    wanted = tuple(only) if only is not None else tuple(c for c in CATEGORIES if c in data)
    problems: list[str] = []
    seen: dict[str, str] = {}
    sound: dict[str, dict[str, Any]] = {}
    for c in CATEGORIES:
        spec = data.get(c)
        if spec is None:
            continue
        if not isinstance(spec, Mapping) or not isinstance(spec.get("label"), str) or not isinstance(
                spec.get("types"), list):
            problems.append(f"{c}: a category file is {{\"label\": \"...\", \"types\": [...]}}")
            continue
        sound[c] = {"label": spec["label"], "types": []}
        for t in spec["types"]:
            n = t.get("name", "?") if isinstance(t, Mapping) else "?"
            if n in seen:
                problems.append(f"{c}/{n}: name also in {seen[n]}")
            seen.setdefault(n, c)
            own = _type_problems(f"{c}/{n}", t)
            if c in wanted:
                problems += own
            if not own:
                sound[c]["types"].append(t)
    if any(c not in data for c in CATEGORIES):
        return problems  # the generic-text check needs the whole store
    for ptype in build_types(sound):  # types with problems of their own are left out of this check
        if ptype.category in wanted:
            problems += [f"{ptype.category}/{p}" for p in _generic_problems(ptype)]
    return problems


def vocabulary_problems() -> list[str]:
    """Data errors in the shipped vocabulary that would break exact task construction (empty when sound)."""
    return catalogue_problems(catalogue_data())
