"""The scripted shopper of AbstainWebShop-v0: reads the instruction, searches, compares, checks, buys.

It sees only what any agent sees (the page and ``info``), never the task's label or goal. It knows the store's
vocabulary (product types, attribute phrases, option values), as a shopper knows what a shop sells. It abstains
(when ``abstain=True``) on cues it reads in the instruction: no product type named, a taste word, a price window
that is empty, an option no product of the type has, a property denied by another part of the request; and after
searching, when no product it checks meets the request. It is a good baseline, not an oracle: its cue lists are
its own and miss some wordings, and it checks at most a few products.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from agentabstain_gym.envs.web.pages import SEP, extract_text
from agentabstain_gym.envs.web.vocab import ProductType, product_types

_ASIN = re.compile(r"\AB0[0-9A-Z]{8}\Z")
_PRICE = re.compile(r"\A\$([0-9]+(?:\.[0-9]+)?)\Z")
_CAP = re.compile(r"(?:lower than|less than|under|below|budget is)\s+\$?([0-9]+(?:\.[0-9]+)?)")
_FLOOR = re.compile(r"(?:above|at least|more than|over)\s+\$?([0-9]+(?:\.[0-9]+)?)")
#: Words of taste: no page can say whether a product has them.
_TASTE = re.compile(r"\b(would love|really love|compliment\w*|impress\w*|charming|classy|cool|luxur\w*|stylish|"
                    r"personality|my style|happy|nicest|prettiest|elegant|feels? right|flashy|first impression|"
                    r"gorgeous|beautiful|vibe)\b")
#: "X free" denied by X elsewhere in the request, and a few properties that exclude each other.
_OPPOSITES = ((r"\bsleeveless\b|\bshort sleeve\b", r"\blong sleeves?\b"), (r"\bvegan\b", r"\b(beeswax|honey|milk|gelatin)\b"),
              (r"\borganic\b", r"\bpesticides?\b"), (r"\bwaterproof\b", r"\bpaper\b"), (r"\bfat free\b", r"\b(cream|butter)\b"),
              (r"\blightweight\b", r"\bpounds\b"), (r"\bdecaf\b", r"\bcaffeine\b"), (r"\bfragrance free\b", r"\bperfume\b"),
              (r"\boil free\b", r"\boil\b.*\boil\b"), (r"\bunscented\b", r"\bsmell\b"))
_NAV = {"back to search", "< prev", "next >", "description", "features", "reviews", "buy now", "search"}


@lru_cache(maxsize=65_536)
def _bounded(phrase: str, before: str = r"(?<!\w)", after: str = r"(?!\w)") -> re.Pattern[str]:
    """``phrase`` as a whole-word pattern, compiled once (hundreds of product types overflow ``re``'s own cache, so
    searching with pattern strings recompiled them on every request)."""
    return re.compile(before + re.escape(phrase) + after)


def _text(observation: str) -> str:
    if observation.lstrip().startswith("<!DOCTYPE") or observation.lstrip().startswith("<html"):
        return extract_text(observation)
    return re.sub(r"\[/?(?:clicked )?button_?\] ?| ?\[(?:clicked )?button_\]", "", observation)


class HeuristicWebSolver:
    """Search, compare, check, buy; abstain on request cues and when checked products fall short."""

    name = "heuristic"

    def __init__(self, abstain: bool = True, max_checks: int = 3) -> None:
        self.abstain_enabled = abstain
        self.max_checks = max_checks
        self._types = sorted(product_types(), key=lambda t: -len(t.name))
        # a tuple, longest first: the abstain reason names the first foreign value found, and iterating a set of
        # strings would make that depend on the process's hash seed (records differed between --workers 1 and 2)
        self._all_values = tuple(sorted({v for t in self._types for vs in t.values for v in vs},
                                        key=lambda v: (-len(v), v)))
        self._digit_values = tuple(v for v in self._all_values if any(c.isdigit() for c in v))
        self.reset()

    def reset(self) -> None:
        self.instruction = ""
        self.ptype: ProductType | None = None
        self.attrs: list[str] = []
        self.options: list[str] = []
        self.cap: float | None = None
        self.tried: set[str] = set()
        self.current: str | None = None
        self.picked: list[str] = []
        self.confirmed: set[str] = set()
        self.rejected = False
        self.checked_features = False
        self.searched = False

    # ----- reading the request -----------------------------------------------------------------------------------
    def read(self, instruction: str) -> None:
        text = instruction.lower()
        self.instruction = text
        self.ptype = next((t for t in self._types if t.name in text and _bounded(t.name, r"\b", r"\b").search(text)),
                          None)
        caps = [float(m) for m in _CAP.findall(text)]
        self.cap = min(caps) if caps else None
        if self.ptype is not None:
            self.attrs = [a for a in self.ptype.attributes if a in text and _bounded(a).search(text)]
            values = sorted((v for vs in self.ptype.values for v in vs), key=len, reverse=True)
            rest = text
            for a in self.attrs:  # "clear back" is an attribute, not the colour "clear"
                rest = rest.replace(a, " ")
            for v in values:
                if v in rest and _bounded(v, r"(?<![\w.])", r"(?![\w.])").search(rest):
                    self.options.append(v)
                    rest = rest.replace(v, " ")

    def request_cue(self) -> str | None:
        """Why the request alone cannot be served, or None."""
        text = self.instruction
        if self.ptype is None:
            return "the request does not say what kind of product to buy"
        if _TASTE.search(text):
            return "the request turns on personal taste that no product page can confirm"
        floors = [float(m) for m in _FLOOR.findall(text)]
        if floors and self.cap is not None and max(floors) >= self.cap:
            return f"no price is above {max(floors):.2f} and below {self.cap:.2f} dollars"
        own = {v for vs in self.ptype.values for v in vs}
        foreign = [v for v in self._digit_values if v not in own and v in text
                   and _bounded(v, r"(?<![\w.])", r"(?![\w.])").search(text)]
        if foreign and not any(v in o for v in foreign for o in self.options):
            return f"a {self.ptype.name} does not come as {foreign[0]}"
        for m in re.finditer(r"\b(\w+) free\b", text):
            if re.search(rf"\b{m.group(1)}\b", text[: m.start()] + text[m.end():]):
                return f"'{m.group(0)}' is denied elsewhere in the request"
        for first, second in _OPPOSITES:
            if re.search(first, text) and re.search(second, text):
                return "two parts of the request exclude each other"
        return None

    # ----- acting ------------------------------------------------------------------------------------------------
    def _stop(self, reason: str, fallback: str) -> str:
        return f"abstain[{reason}]" if self.abstain_enabled else fallback

    def act(self, observation: str, info: dict[str, Any]) -> str:
        if not self.instruction:
            self.read(str(info.get("instruction", "")))
            cue = self.request_cue()
            if cue is not None and self.abstain_enabled:
                return f"abstain[{cue}]"
        parts = _text(observation).split(SEP)
        available = info.get("available_actions") or {}
        clickables = list(available.get("clickables", []))
        left = int(info.get("max_turns", 10)) - int(info.get("turn", 0))
        if available.get("has_search_bar"):
            if self.searched:
                return self._stop("no product in the store meets the request", "search[" + self._query() + "]")
            self.searched = True
            return f"search[{self._query()}]"
        if "buy now" in clickables:
            return self._on_item(parts, clickables, left)
        if self.current and set(clickables) <= {"back to search", "< prev"}:
            return self._on_features(parts)
        return self._on_results(parts, clickables, left)

    def _query(self) -> str:
        if self.ptype is None:
            return re.sub(r"[^\w\s.]", " ", self.instruction)[:200]
        return " ".join([self.ptype.name, *self.attrs, *self.options])

    def _on_results(self, parts: list[str], clickables: list[str], left: int) -> str:
        best: tuple[float, int, str] | None = None
        for k, part in enumerate(parts):
            asin = part.strip()
            if not _ASIN.match(asin) or asin.lower() in self.tried or k + 2 >= len(parts):
                continue
            title, price = parts[k + 1].lower(), _PRICE.match(parts[k + 2].strip())
            score = self._title_score(title)
            if price and self.cap is not None and float(price.group(1)) > self.cap:
                score -= 10
            if best is None or (score, -k) > (best[0], -best[1]):
                best = (score, k, asin.lower())
        if best is None or best[0] < 0 or len(self.tried) >= self.max_checks:
            if "next >" in clickables and best is None and left > 4:
                return "click[next >]"
            return self._stop("no product in the results meets the request",
                              f"click[{best[2]}]" if best else "click[back to search]")
        self.current = best[2]
        self.picked, self.confirmed = [], set()
        self.rejected = self.checked_features = False
        return f"click[{best[2]}]"

    def _title_score(self, title: str) -> float:
        score = 0.0
        if self.ptype is not None and any(n.lower() in title for n in self.ptype.nouns):
            score += 3
        score += sum(1 for a in self.attrs if a in title)
        return score

    def _on_item(self, parts: list[str], clickables: list[str], left: int) -> str:
        body = [p.strip() for p in parts]
        start = body.index("< Prev") + 1 if "< Prev" in body else 0
        end = next((i for i, p in enumerate(body) if p.startswith("Price: $")), len(body))
        title = body[end - 1].lower() if end > start else ""
        price = float(body[end][8:]) if end < len(body) else 0.0
        self.confirmed |= {a for a in self.attrs if a in title}
        values = [c for c in clickables if c not in _NAV]
        missing_opts = [o for o in self.options if o not in values]
        bad = bool(missing_opts) or (self.cap is not None and price > self.cap) or self.rejected
        if bad:
            self.tried.add(self.current or "")
            if left <= 2 or len(self.tried) >= self.max_checks:
                return self._stop("the products that come closest do not meet the request", "click[buy now]")
            return "click[< prev]"
        unconfirmed = [a for a in self.attrs if a not in self.confirmed]
        to_pick = [o for o in self.options if o not in self.picked]
        if unconfirmed and not self.checked_features and left > len(to_pick) + 3:
            self.checked_features = True
            return "click[features]"
        if to_pick:
            self.picked.append(to_pick[0])
            return f"click[{to_pick[0]}]"
        return "click[buy now]"

    def _on_features(self, parts: list[str]) -> str:
        body = [p.strip() for p in parts]
        text = " ".join(body[body.index("< Prev") + 1:] if "< Prev" in body else body).lower()
        self.confirmed |= {a for a in self.attrs if a in text}
        if any(a not in self.confirmed for a in self.attrs):
            self.rejected = True
        return "click[< prev]"
