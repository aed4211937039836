"""How the web heuristic reads a shopping request: what is wanted, the budget, and whether the request alone shows
that no purchase can serve it.

The reading is general, not tied to any generator's sentences. Money is read in the ways people state it (a
bound before or after an amount, ranges, "for free"). The product type is the store's when the request names one
(the same resolver task files are grounded with), else the request's own product phrase, which is searched like any
other: an unfamiliar product is never a reason to stop. The cues (``data/web/cues.json``) are of four kinds:
requirements that exclude each other (clashing properties, an "X free" next to X, two values of one option, an
empty price window, a size or number no product has, a price below anything of its kind), wording that rests on
taste, references to things only the shopper knows, and a request for "something" that never says what.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from agentabstain_gym.envs.web.quantities import (
    count_conflict,
    measure_conflict,
    measures,
    unit_price_conflict,
)
from agentabstain_gym.envs.web.taxonomy import product_phrase, resolve_type, singular
from agentabstain_gym.envs.web.vocab import ProductType, load_data

_NUMBER = r"(\d[\d,]*(?:\.\d+)?)"
_BARE = re.compile(r"\b" + _NUMBER + r"(?=\s*(?:[,.;:?!)]|$|\s(?:and|or|for|please|total|each|tops|max)\b))")
#: Below this share of the lowest price a kind of product sells at, a cap is no price at all for it.
PLAUSIBLE_SHARE = 0.5
#: How far outside the sizes a kind of product comes in a stated measurement may be before it is impossible.
SIZE_FACTOR = 6.0


@dataclass(frozen=True)
class Reading:
    """What a request asks for, and the reason it cannot be served as asked (``cue``), if the words show one."""

    text: str
    ptype: ProductType | None
    phrase: str
    attrs: tuple[str, ...]
    options: tuple[str, ...]
    cap: float | None
    floor: float | None
    cue: str | None


def _bounded(pattern: str) -> re.Pattern[str]:
    return re.compile(r"(?<![\w$])(?:" + pattern + r")(?![\w])")


@lru_cache(maxsize=1)
def _cues() -> dict[str, Any]:
    data = load_data("cues")
    money = data["money"]
    out: dict[str, Any] = {
        "amount": re.compile(money["amount"]),
        "range": re.compile(money["range"]),
        "free": _bounded("|".join(money["free"])),
        "bounds": sorted([(p, "upper", "before") for p in money["upper_before"]]
                         + [(p, "upper", "after") for p in money["upper_after"]]
                         + [(p, "lower", "before") for p in money["lower_before"]]
                         + [(p, "lower", "after") for p in money["lower_after"]], key=lambda x: -len(x[0])),
        "taste": [_bounded(p) for p in data["taste"]],
        "context": [_bounded(p) for p in data["context"]],
        "impossible": [_bounded(p) for p in data["impossible"]],
        "vague": frozenset(data["vague_things"]),
        "vague_object": _bounded(data["vague_objects"]),
        "clashes": [(_bounded(a), _bounded(b)) for a, b in data["clashes"]],
        "negators": tuple(sorted(data["free_of_negators"], key=len, reverse=True)),
        "negated_noun": re.compile(r"(?<![\w])" + data["negated_noun"]),
        "wearers": {k: frozenset(v) for k, v in data["wearers"].items()},
        "option_noun": re.compile(r"(?<![\w-])(?:" + data["option_nouns"] + r")(?![\w-])"),
        "evaluative": re.compile(r"[a-z]+-?(?:" + data["evaluative_suffixes"] + r")$"),
    }
    return out


# ----- money ---------------------------------------------------------------------------------------------------------
def _bound(before: str, after: str) -> str | None:
    """``upper``/``lower`` when the words right before or after an amount make it a bound (longest phrase wins:
    "no cheaper than" is a floor, "cheaper than" a cap)."""
    before = " ".join(re.sub(r"[^\w%' ]", " ", before).split()[-5:])
    after = " ".join(re.sub(r"[^\w%' ]", " ", after).split()[:3])
    for phrase, kind, side in _cues()["bounds"]:
        if side == "before" and re.search(r"(?:^|\s)" + re.escape(phrase) + r"(?:\s+(?:of|is|at|around|about))?$",
                                          before):
            return kind
        if side == "after" and re.match(re.escape(phrase) + r"(?:\s|$)", after):
            return kind
    return None


def read_money(text: str) -> tuple[float | None, float | None]:
    """(cap, floor) a request states; a "between" range gives both, "for free" a cap of 0."""
    return _money(text)[:2]


def without_money(text: str) -> str:
    """The request with its amounts of money blanked out (a cap of 40 is no size 40)."""
    for start, end in sorted(_money(text)[2], reverse=True):
        text = text[:start] + " " * (end - start) + text[end:]
    return text


def _money(text: str) -> tuple[float | None, float | None, list[tuple[int, int]]]:
    cues = _cues()
    caps: list[float] = []
    floors: list[float] = []
    taken: list[tuple[int, int]] = []
    money: list[tuple[int, int]] = []
    for m in cues["range"].finditer(text):
        a, b = (float(x.replace(",", "")) for x in m.groups())
        floors.append(min(a, b))
        caps.append(max(a, b))
        taken.append(m.span())
        money.append(m.span())
    spans = [(m.start(), m.end(), m.group(1) or m.group(2)) for m in cues["amount"].finditer(text)]
    spans += [(m.start(), m.end(), m.group(1)) for m in _BARE.finditer(text)
              if not any(s <= m.start() < e for s, e, _ in spans)]
    for start, end, number in spans:
        if any(s <= start < e for s, e in taken):
            continue
        kind = _bound(text[max(0, start - 40):start], text[end:end + 25])
        value = float(number.replace(",", ""))
        dollars = "$" in text[start:end] or re.search(r"dollars?|bucks|usd", text[start:end]) is not None
        if kind is not None or dollars:  # a bare number with no bound is no price ("size 34,")
            money.append((start, end))
        if kind == "upper":
            caps.append(value)
        elif kind == "lower":
            floors.append(value)
    if cues["free"].search(text):
        caps.append(0.0)
    return (min(caps) if caps else None), (max(floors) if floors else None), money


# ----- the product ---------------------------------------------------------------------------------------------------
def _present(phrase: str, text: str) -> bool:
    return phrase in text and re.search(r"(?<![\w.])" + re.escape(phrase) + r"(?![\w.])", text) is not None


def _what(text: str, ptype: ProductType | None) -> tuple[tuple[str, ...], tuple[str, ...], str]:
    """Attributes and option values of ``ptype`` the request names, and the request with them (and the type's
    names) cut out: what is left is the shopper's own wording."""
    if ptype is None:
        return (), (), text
    rest = text
    for name in sorted({ptype.name, *(n.lower() for n in ptype.nouns)}, key=len, reverse=True):
        rest = rest.replace(name, " | ")
    attrs = tuple(a for a in ptype.attributes if _present(a, text))
    for a in sorted(attrs, key=len, reverse=True):  # "clear back" is an attribute, not the colour "clear"
        rest = rest.replace(a, " | ")
    options = []
    for v in sorted((v for vs in ptype.values for v in vs), key=len, reverse=True):
        if _present(v, rest):
            options.append(v)
            rest = rest.replace(v, " | ")
    return attrs, tuple(options), rest


_GREETING = re.compile(r"^(?:(?:hi|hey|hello|ok|okay|so|um|please|quick request|quick question)\b[,!.:]?\s*)+")


def _without(text: str, phrases: tuple[str, ...]) -> str:
    for phrase in sorted(phrases, key=len, reverse=True):
        text = text.replace(phrase, " | ")
    return text


# ----- cues ----------------------------------------------------------------------------------------------------------
def _negated(text: str, start: int) -> bool:
    """A word of denial among the three words before ``start``, within its clause ("no added sugar")."""
    clause = re.split(r"[,.;:?!]", text[max(0, start - 40):start])[-1]
    return any(w in _cues()["negators"] for w in re.findall(r"[a-z']+", clause)[-3:])


def _clash(text: str, ptype: ProductType | None = None) -> str | None:
    """Two requirements no one product can meet together. ``text`` has the product's option values cut out: a
    flavour called "oats and honey" names a taste, not an ingredient a vegan product would lack. Two attributes the
    store's own type lists together are no clash: its products do carry both."""
    own = ptype.attributes if ptype is not None else ()
    for first, second in _cues()["clashes"]:
        for a in first.finditer(text):
            for b in second.finditer(text):
                if b.start() < a.end() and a.start() < b.end():
                    continue  # one phrase, read by both sides ("non gmo" holds "gmo")
                if any(a.group(0) in x for x in own) and any(b.group(0) in x for x in own):
                    continue
                if _negated(text, b.start()):
                    continue
                return f"'{a.group(0)}' and '{b.group(0)}' cannot both be true of one product"
    for m in re.finditer(r"\b([a-z]+)[ -]free\b", text):  # "sugar free ... with cane sugar"
        word = m.group(1)
        if word in _cues()["negators"] or len(word) < 3:
            continue
        for other in re.finditer(rf"\b{re.escape(word)}s?\b", text):
            if m.start() <= other.start() < m.end() or re.match(r"[ -]free\b", text[other.end():]):
                continue
            if not _negated(text, other.start()):
                return f"'{m.group(0)}' is denied by '{word}' elsewhere in the request"
    return None


def _two_values(text: str, ptype: ProductType, options: tuple[str, ...]) -> str | None:
    """Two values of one option group asked for together ("a twin size queen sheet set"), not as a choice."""
    for group, values in zip(ptype.groups, ptype.values, strict=True):
        named = [v for v in options if v in values]
        if len(named) < 2:
            continue
        a, b = sorted(named[:2], key=text.find)
        between = text[text.find(a) + len(a):text.find(b)]
        if re.search(r"\b(?:or|either|to|maybe|otherwise|instead)\b|/", between) or len(between.split()) > 12:
            continue
        return f"one {ptype.name} cannot be both {a} and {b} ({group})"
    return None


def _size_out_of_range(text: str, ptype: ProductType) -> str | None:
    """A measurement far outside every size the kind of product comes in ("a 5 gallon lip balm")."""
    known: dict[str, list[float]] = {}
    for values in ptype.values:
        for v in values:
            for dim, amount, _, _ in measures(v.lower()):
                known.setdefault(dim, []).append(amount)
    for dim, amount, _, _ in measures(text):
        sizes = known.get(dim)
        if sizes and amount > 0 and (amount > SIZE_FACTOR * max(sizes) or amount * SIZE_FACTOR < min(sizes)):
            return f"no {ptype.name} comes anywhere near that size"
    return None


def _vague(text: str, phrase: str) -> bool:
    """The request never says what to buy: its product phrase, or the object of its verb, is a stand-in
    ("something", "a gift", "the usual thing")."""
    cues = _cues()
    words = phrase.split()
    if words and (words[0] in cues["vague"] or " ".join(words[:2]) in cues["vague"]):
        return True
    return cues["vague_object"].search(text) is not None


def _denied(text: str) -> str | None:
    """Something the request rules out ("no", "without", "minus", "zero") that it also asks for: "a keyboard and
    mouse combo, minus the mouse", "peppermint flavor with zero mint"."""
    for m in _cues()["negated_noun"].finditer(text):
        word = singular(m.group(1).split()[0])
        if len(word) < 4 or word in _cues()["negators"]:
            continue
        for other in re.finditer(rf"[a-z]*{re.escape(word)}s?(?:es)?\b", text):
            if m.start() <= other.start() < m.end() or re.match(r"[ -]free\b", text[other.end():]):
                continue
            whole = other.group(0)
            if whole.rstrip("s") != word and not (len(whole) > len(word) + 2 and whole.endswith(word)):
                continue  # "mint" in "peppermint" counts, "ash" in "cashew" does not
            if not _negated(text, other.start()):
                return f"the request asks for '{whole}' and for '{m.group(0)}'"
    return None


_FOR_WHOM = re.compile(r"\bfor (?:my|our|his|her) ([a-z-]+)")


def _wearer_clash(text: str, ptype: ProductType | None) -> str | None:
    """A product made for one kind of wearer, bought for another ("a girls' swimsuit for my son")."""
    name = ptype.name if ptype is not None else ""
    if not name:
        return None
    wearers = _cues()["wearers"]
    female = re.search(r"\b(?:women's|girls'|girl's|ladies')", name) is not None
    male = re.search(r"\b(?:men's|boys'|boy's)", name) is not None
    child = re.search(r"\b(?:baby|toddler|infant|kids'?|girls'|boys')", name) is not None
    for m in _FOR_WHOM.finditer(text):
        who = m.group(1)
        if (female and who in wearers["male"]) or (male and who in wearers["female"]) or (
                child and who in wearers["adult"]):
            return f"{name} are not made for a {who}" if ptype.plural else f"a {name} is not made for a {who}"
    return None


def _vague_option(rest: str) -> str | None:
    """An option named by how it should feel or whose it is, not by its value ("in a becoming color", "the size
    my niece wears", "whatever shade she likes"). ``rest`` has the store's own values cut out."""
    cues = _cues()
    for clause in re.split(r"[,;:?!]|\.(?!\d)|\band\b", rest):
        for m in cues["option_noun"].finditer(clause):
            before = clause[:m.start()].split()[-3:]
            after = clause[m.end():].split()[:3]
            if "|" in before[-2:] or after[:1] == ["|"]:
                continue  # the store's value is right there ("in | color")
            if any(w in ("whatever", "whichever", "my", "his", "her", "our", "their", "your") or w.endswith(("'s", "s'"))
                   for w in before):
                return f"the request does not name the {m.group(0)}, only whose it is"
            if before and before[-1] not in cues["negators"] and cues["evaluative"].match(before[-1]) and \
                    before[-1] not in ("matching", "setting", "baking", "cooking", "roasting", "sparkling",
                                       "drinking", "sleeping", "running", "walking", "hiking", "living"):
                return f"the {m.group(0)} is described by taste ('{before[-1]}'), not named"
            if after and (after[0] in ("that", "which") and len(after) > 1 and after[1] in (
                    "feels", "looks", "tastes", "smells", "flatters", "suits", "goes", "works", "fits", "matches",
                    "i", "she", "he", "they", "we", "you") or after[0] in ("i", "she", "he", "they", "we", "you",
                                                                                "everyone", "people")):
                return f"the request does not name the {m.group(0)}"
    return None


def request_cue(r: Reading, rest: str) -> str | None:
    """Why the request alone cannot be served, or None. ``rest`` is the request without the store's own words
    for the product (its type names, attributes, option values), where taste and context are read."""
    cues = _cues()
    text = r.text
    if r.cap is not None and r.floor is not None and r.floor >= r.cap:
        return f"no price is at least {r.floor:.2f} and below {r.cap:.2f} dollars"
    if r.cap is not None and r.cap <= 0:
        return "nothing in the store is free"
    if r.cap is not None and r.ptype is not None and r.cap < PLAUSIBLE_SHARE * r.ptype.price[0]:
        return f"no {r.ptype.name} sells for {r.cap:.2f} dollars or less"
    if r.cap is not None and r.cap < 0.5:
        return f"no product sells for {r.cap:.2f} dollars or less"
    for pattern in cues["impossible"]:
        if m := pattern.search(text):
            return f"no product can be '{m.group(0)}'"
    plain = _without(text, r.options)
    found = (_clash(plain, r.ptype) or _denied(plain) or measure_conflict(text) or count_conflict(text)
             or unit_price_conflict(text, r.cap) or _wearer_clash(text, r.ptype))
    if found:
        return found
    if r.ptype is not None:
        found = _two_values(text, r.ptype, r.options) or _size_out_of_range(rest, r.ptype)
        if found:
            return found
    for pattern in cues["taste"]:
        if m := pattern.search(rest):
            return f"the choice rests on taste no product page can confirm ('{m.group(0)}')"
    for pattern in cues["context"]:
        if m := pattern.search(rest):
            return f"the request leans on something only the shopper knows ('{m.group(0)}')"
    vague_option = _vague_option(rest)
    if vague_option:
        return vague_option
    if r.ptype is None and _vague(_GREETING.sub("", text), r.phrase):
        return "the request does not say what to buy"
    return None


@lru_cache(maxsize=8192)
def read_request(instruction: str) -> Reading:
    text = " ".join(instruction.lower().split())
    cap, floor = read_money(text)
    ptype = resolve_type(text)
    attrs, options, rest = _what(without_money(text), ptype)
    plain = _GREETING.sub("", text)
    if ptype is not None and resolve_type(text, strict=True) is None and _vague(plain, product_phrase(plain)):
        ptype, attrs, options, rest = None, (), (), text  # "something for my mom that is water resistant"
    phrase = ptype.name if ptype is not None else product_phrase(plain)
    reading = Reading(text, ptype, phrase, attrs, options, cap, floor, None)
    return Reading(text, ptype, phrase, attrs, options, cap, floor, request_cue(reading, rest))
