"""Numbers in shopping requests that cannot all hold: measurements against each other and against stated bounds,
pack counts against stated totals, per-item prices against the budget.

"42 inch, under three feet tall", "a 1 liter kettle that boils two liters", "16 count as two boxes of 10", "100 count
at least $1 a pod, max $55": each request states two things about one product that no product can both be. Units
and number words come from ``data/web/cues.json``; measurements are compared within one dimension only.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from agentabstain_gym.envs.web.vocab import load_data

#: How far apart two statements of one size may be before they describe two different products.
RESTATED_GAP = 0.10
_BOUND_UPPER = (r"under|below|less than|shorter than|smaller than|lighter than|no more than|at most|maxing (?:out )?at|"
                r"maxes out at|tops out at|topping out at|capped at|not (?:over|past|above)|no \w+ (?:past|over|longer than|"
                r"bigger than|larger than|wider than)|no more than")
_BOUND_LOWER = r"over|above|more than|at least|longer than|taller than|bigger than|larger than|heavier than|no less than"
_JOIN = r"but|yet|while|measuring|that's|that is|that boils|boils|about|around|roughly|actually|really|on a|on an"
_RESOLUTION = {"4k": 2160.0, "8k": 4320.0, "5k": 2880.0, "2k": 1440.0, "hd": 720.0, "full hd": 1080.0}


@lru_cache(maxsize=1)
def _tables() -> dict[str, Any]:
    data = load_data("cues")
    words = dict(sorted(data["number_words"].items(), key=lambda kv: -len(kv[0])))
    number = r"(\d+(?:\.\d+)?|" + "|".join(re.escape(w) for w in words) + ")"
    units = {dim: dict(sorted(t.items(), key=lambda kv: -len(kv[0]))) for dim, t in data["units"].items()}
    unit_re = "|".join(re.escape(u) for dim in units.values() for u in dim)
    measure = re.compile(r"(?<![\w.$])(?<!sq )(?<!square )(?<!cubic )" + number + r"(?:\s*x\s*" + number
                         + r")?\s*-?\s*(" + unit_re + r")(?![\w])")
    nouns = data["count_nouns"]
    return {"words": words, "number": number, "units": units, "measure": measure,
            "nouns": nouns, "count_re": {
                "pack": re.compile(r"(?:pack|set|box|case|bundle|bag|carton) of " + number + r"\b|\b" + number
                                   + r"[ -](?:pack|count|ct|pc|pcs|piece|pieces|pairs|pair)\b"),
                "pack_of": re.compile(r"\b" + number + r"[ -]?(?:pack|packs|boxes|bags|cartons|cases) of " + number
                                      + r"\b"),
                "total": re.compile(r"(?:holding|containing|contains|that holds|which holds) " + number
                                    + r" (?:\w+ ){0,2}?[a-z]+s\b|(?:with|in|as|of) " + number + r" (?:\w+ ){0,2}?(?:"
                                    + nouns + r")\b|\b" + number + r" (?:\w+ ){0,2}?(?:per pack|all told|in total|"
                                    r"total|in each pack|in the pack)\b|\b(?:a single|just one|only one|one single) "
                                    r"(?:\w+ )?(?:" + nouns + r"|tube|bottle|can|bar|jar|piece|item|unit|lamp)\b")}}


def _value(token: str) -> float:
    words = _tables()["words"]
    return float(words[token]) if token in words else float(token)


def measures(text: str) -> list[tuple[str, float, int, int]]:
    """(dimension, value in the dimension's base unit, start, end) of every measurement in ``text``."""
    out = []
    units = _tables()["units"]
    for m in _tables()["measure"].finditer(text):
        unit = m.group(3)
        for dim, table in units.items():
            if unit in table:
                for number in (m.group(1), m.group(2)):
                    if number:
                        out.append((dim, _value(number) * table[unit], m.start(), m.end()))
                break
    for name, lines in _RESOLUTION.items():  # "4k" states a resolution as surely as "2160p"
        for m in re.finditer(rf"(?<![\w.]){re.escape(name)}(?![\w])", text):
            out.append(("resolution", lines, m.start(), m.end()))
    return out


def _bounded(text: str, start: int) -> str | None:
    before = re.split(r"[,.;:?!]", text[max(0, start - 30):start])[-1]
    if re.search(r"(?:^|\s)(?:" + _BOUND_UPPER + r")\s*$", before):
        return "upper"
    if re.search(r"(?:^|\s)(?:" + _BOUND_LOWER + r")\s*$", before):
        return "lower"
    return None


def measure_conflict(text: str) -> str | None:
    """A stated size outside a bound the request also states, a size restated as another, or a rectangle asked to
    be square."""
    found = measures(text)
    stated = [(d, v, s, e) for d, v, s, e in found if _bounded(text, s) is None]
    for dim, bound, start, _ in found:
        kind = _bounded(text, start)
        for d, v, s, _ in stated:
            if d != dim or kind is None:
                continue
            if (kind == "upper" and v > bound * 1.1) or (kind == "lower" and v * 1.1 < bound):
                return f"'{text[s:start].strip(' ,')[:40] or text[s:]}' is outside '{text[start - 12:start + 20]}'"
    for i, (d1, v1, s1, e1) in enumerate(stated):
        for d2, v2, s2, _ in stated[i + 1:]:
            if d1 != d2 or s2 - e1 > 60 or max(v1, v2) <= (1 + RESTATED_GAP) * min(v1, v2):
                continue
            between = text[e1:s2]
            if re.search(r"\b(?:" + _JOIN + r")\b", between) and not re.search(r"[;]|\band\b|\bor\b|\bto\b", between):
                return f"one product cannot measure both '{text[s1:e1]}' and '{text[s2:s2 + 20]}'"
    square = re.search(r"\b(?:perfectly|exactly|completely) square\b|\bsquare[- ]shaped\b", text)
    if square:
        for m in re.finditer(r"(\d+(?:\.\d+)?)\s*x\s*(\d+(?:\.\d+)?)", text):
            if float(m.group(1)) != float(m.group(2)):
                return f"'{m.group(0)}' is not square"
    return None


def _counts(text: str) -> tuple[set[float], set[float]]:
    """Pack sizes the request names (and their products) and item totals it states another way."""
    tables = _tables()["count_re"]
    packs: set[float] = set()
    for m in tables["pack"].finditer(text):
        packs.add(_value(next(g for g in m.groups() if g)))
    totals: set[float] = set()
    for m in tables["pack_of"].finditer(text):
        n, k = _value(m.group(1)), _value(m.group(2))
        totals.add(n * k)
        packs.discard(k)
        packs.discard(n)
    for m in tables["total"].finditer(text):
        number = next((g for g in m.groups() if g), None)
        totals.add(_value(number) if number else 1.0)
    products = {a * b for a in packs for b in packs if a != b}
    return packs | products, totals


def count_conflict(text: str) -> str | None:
    """A pack size and a count of what is in it that disagree ("the pack of 5 holding seven of them")."""
    packs, totals = _counts(text)
    if packs and totals and not totals & packs:
        return (f"a pack of {', '.join(f'{p:g}' for p in sorted(packs))} cannot hold "
                f"{', '.join(f'{t:g}' for t in sorted(totals))}")
    return None


def unit_price_conflict(text: str, cap: float | None) -> str | None:
    """A floor on the price of each item times the items in the pack, above the budget for the whole."""
    if cap is None:
        return None
    number = r"\$\s*(\d+(?:\.\d+)?)|(\d+(?:\.\d+)?)\s*(?:dollars?|bucks)"
    per = re.search(r"(?:at least|no less than|minimum of|min)\s+(?:" + number + r")\s+(?:apiece|each|a \w+|per \w+)"
                    r"|(?:" + number + r")\s+or more\s+(?:apiece|each|a \w+|per \w+)", text)
    if per is None:
        return None
    floor = float(next(g for g in per.groups() if g))
    packs, _ = _counts(text)
    n = max(packs, default=1.0)
    if floor * n > cap:
        return f"{n:g} items at {floor:.2f} dollars or more each cost more than {cap:.2f} dollars"
    return None
