"""Which product type a shopping request is about: resolved against the store's taxonomy, or made from a phrase.

Real requests (WebShop's human instructions, the paper's rows, a user's own) name products in their own words. A
request resolves to a shipped type when the type's name (or one of its title nouns) occurs in it, singular or
plural; failing that, to the type whose head noun occurs with the most of its other words. A request that names no
shipped type gets a type made from its product phrase, filed under the closest shipped type's department, so the
store can stock it like any other.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from agentabstain_gym.envs.web.matching import attribute_matches, normalise
from agentabstain_gym.envs.web.vocab import (
    CATEGORIES,
    ProductType,
    load_category,
    load_data,
    make_type,
    product_types,
    title_case,
)

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_PRICE_CLAUSE = re.compile(r"(?:,?\s*and)?\s*(?:with a |at a )?(?:price|priced|cost\w*)?\s*\b(?:lower|less|under|below|"
                           r"cheaper)\s+(?:than\s+)?\$?\s*\d[^:;?!]*$")
_LEAD_IN = re.compile(r"^(?:(?:hi|hey|hello|ok|so|please)\b[,!.]?\s+)*(?:i(?:'m| am)? (?:looking|searching|shopping) for|"
                      r"i(?: would|'d) like(?: to (?:buy|get|order))?|(?:(?:i|we|my \w+|our \w+) (?:really )?)?"
                      r"(?:need|needs|want|wants)(?: to (?:buy|get|find|order))?|(?:please )?(?:find|get|show|buy)"
                      r"(?: me)?|can you (?:find|get)(?: me)?|looking for|searching for|shopping for|"
                      r"i'm after|do you have)\s+")
_ARTICLE = re.compile(r"^(?:a|an|the|some|one|two|three|four|five|six|[0-9.]+(?:\s*(?:fl oz|oz|ounces?|lbs?|pounds?|ml|"
                      r"liters?|grams?|kg|inch(?:es)?|feet|foot|ft|count|ct|pcs|pieces?))?|(?:packs?|box(?:es)?|"
                      r"bottles?|bags?|cans?|jars?|sets?|pairs?|cases?|cartons?|tubes?|bars?|rolls?|pieces?|"
                      r"packages?|containers?) of)\s+")
_CONTAINER = re.compile(r"\b(?:packs?|box(?:es)?|bottles?|bags?|cans?|jars?|cartons?|tubes?|packages?|containers?) of\b")
_CUT = re.compile(r"\s(?:that|which|with|for|in|of|to|from|by|under|without|made|and|but|so|size|color|colour|"
                  r"priced?)\s|,|;|\.(?!\d)|\?|!")


def singular(word: str) -> str:
    """A crude singular that is the same for both sides of a comparison (``boots``/``boot``, ``dresses``)."""
    if len(word) <= 3 or word.endswith(("ss", "us", "is", "'s")):
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "xes", "sses")):
        return word[:-2]
    return word[:-1] if word.endswith("s") else word


def words(text: str) -> list[str]:
    return [singular(w) for w in _WORD.findall(text.lower())]


def store_category(value: Any, product_category: Any = None) -> str | None:
    """Our category for another dataset's category word or ``A › B › C`` path, or None."""
    for raw in (value, str(product_category or "").split("›")[0]):
        key = normalise(str(raw or ""))
        if key in CATEGORIES:
            return key
        aliases = load_data("requests")["category_aliases"]
        if key in aliases:
            return aliases[key]
        for c in CATEGORIES:
            if key and normalise(load_category(c)["label"]) == key:
                return c
    return None


@dataclass(frozen=True)
class _Entry:
    ptype: ProductType
    name: str  # " w1 w2 " in singular words, for phrase tests
    nouns: tuple[str, ...]
    head: str
    tokens: frozenset[str]


@lru_cache(maxsize=1)
def _entries() -> tuple[_Entry, ...]:
    out = []
    for t in product_types():
        name = words(t.name)
        out.append(_Entry(t, f" {' '.join(name)} ", tuple(f" {' '.join(words(n))} " for n in t.nouns),
                          name[-1], frozenset(name)))
    return tuple(out)


@lru_cache(maxsize=1)
def _wearer_of() -> dict[str, str]:
    return {singular(w): who for who, ws in load_data("requests")["wearers"].items() for w in ws}


def _wearers(tokens: set[str] | frozenset[str]) -> set[str]:
    """Who the words say a product is for (men, women, children)."""
    table = _wearer_of()
    return {table[t] for t in tokens if t in table}


def _request_text(text: str) -> str:
    """The request without its price clause (numbers there are not product words) and its "x free" phrases (the
    x of "sugar free" is not what is bought)."""
    text = re.sub(r"\b[\w-]+[ -]free\b", " ", _PRICE_CLAUSE.sub("", text.lower()))
    return _CONTAINER.sub(" ", text)


def resolve_type(text: str, category: str | None = None, strict: bool = False) -> ProductType | None:
    """The shipped type a request or phrase is about (None when it names none). ``category`` narrows the choice
    when the request comes with one; ``strict`` accepts only a type whose name or a title noun occurs in full."""
    request = _request_text(text)
    seq = words(request)
    if not seq:
        return None
    padded = f" {' '.join(seq)} "
    present = set(seq)
    first_clause = set(words(_CUT.split(f" {request} ")[0]))  # where a request usually names its product
    who = _wearers(present)
    pools = [e for e in _entries() if e.ptype.category == category] if category else []
    for pool in (pools, list(_entries())) if pools else (list(_entries()),):
        best: tuple[tuple, ProductType] | None = None
        for e in pool:
            if e.head not in present:
                continue
            if e.name in padded:
                score: tuple = (2, len(e.tokens), -padded.index(e.name), -e.ptype.type_id)
            elif _wearers(e.tokens) - who and who:  # a request for women's boots never gets men's boots
                continue
            elif any(n in padded for n in e.nouns):
                score = (1, len(e.tokens), 0, -e.ptype.type_id)
            elif strict:
                continue
            else:  # most of the name: "yoga mat" is no "bath mat"
                overlap = len(e.tokens & present) / len(e.tokens)
                if overlap < 2 / 3:
                    continue
                score = (0, e.head in first_clause, overlap, -seq.index(e.head), -e.ptype.type_id)
            if best is None or score > best[0]:
                best = (score, e.ptype)
        if best is not None:
            return best[1]
    return None


def product_phrase(instruction: str, attributes: Sequence[str] = (), options: Sequence[str] = ()) -> str:
    """The product a request names, in its own words ("i need a long lasting deodorant for women, and price lower
    than 40.00 dollars" -> "deodorant"), for requests that name no shipped type."""
    text = _request_text(instruction)
    for phrase in sorted([*attributes, *options], key=len, reverse=True):
        text = re.sub(rf"(?<!\w){re.escape(phrase.lower())}(?!\w)", " ", text)
    text = _LEAD_IN.sub("", " ".join(text.split()))
    for _ in range(4):
        text = _ARTICLE.sub("", text)
    head = _CUT.split(f" {text} ")[0]
    head = " ".join(re.sub(r"[^\w\s'&-]", " ", head).split())
    tokens = [w for w in head.split() if not w.replace(".", "").isdigit()][-4:]
    return " ".join(tokens) or "item"


def _nearest(phrase: str, category: str | None) -> ProductType | None:
    """The shipped type closest to a phrase (shared words, head noun first), within ``category`` when given."""
    found = resolve_type(phrase, category)
    if found is not None:
        return found
    present = set(words(phrase))
    pool = [e for e in _entries() if category is None or e.ptype.category == category]
    scored = [(len(e.tokens & present), -e.ptype.type_id, e.ptype) for e in pool if e.tokens & present]
    return max(scored)[2] if scored else None


def phrase_type(phrase: str, *, category: str | None = None, product_category: str | None = None,
                attributes: Sequence[str] = (), price_cap: float | None = None) -> ProductType:
    """A product type made from a shopper's phrase: filed and priced like its nearest shipped type, with that
    type's attributes and options as the store's other wording (none that could pass for a wanted attribute)."""
    name = " ".join(phrase.lower().split()) or "item"
    near = _nearest(name, category) or _nearest(name, None)
    cat = category or (near.category if near is not None else "home")
    label = load_category(cat)["label"]
    levels = [p.strip() for p in str(product_category or "").split("›") if p.strip()][1:5]
    if levels:
        path = levels
    elif near is not None and near.category == cat:
        path = [*near.path[:-1], title_case(name)]
    else:
        path = ["More", title_case(name)]
    if price_cap is not None and price_cap < 1e6:
        price = [max(1.0, round(price_cap * 0.35)), max(2.0, round(price_cap * 1.6))]
    else:
        price = list(near.price) if near is not None else [5.0, 80.0]
    wanted = [a.lower() for a in attributes]
    own: list[str] = []
    for a in near.attributes if near is not None else ():
        if a not in name and not any(attribute_matches(w, a) or attribute_matches(a, w) for w in wanted):
            own.append(a)
    options: Mapping[str, list[str]] = ({g: list(v) for g, v in zip(near.groups, near.values, strict=True)}
                                        if near is not None and near.category == cat else {})
    spec = {"name": name, "path": path, "nouns": [title_case(name)], "price": price,
            "attributes": own[:16], "options": dict(options)}
    return make_type(-1, cat, label, spec)
