"""The scripted shopper of AbstainWebShop-v1: reads the instruction, searches, compares, checks, buys.

It sees only what any agent sees (the page and ``info``), never the task's label or goal. It knows the store's
vocabulary (product types, attribute phrases, option values), as a shopper knows what a shop sells, and reads
requests with :mod:`agentabstain_gym.envs.web.reading`: a product it does not know is searched for like any other.
It abstains (when ``abstain=True``) on what the request itself shows (requirements that exclude each other, an empty
price window, a size or price no such product has, taste, context only the shopper knows, no product named at all)
and, after searching, when no product it checks meets the request. It is a good baseline, not an oracle: its cue
lists are its own and miss some wordings, and it checks at most a few products.
"""

from __future__ import annotations

import re
from typing import Any

from agentabstain_gym.envs.web.pages import SEP, extract_text
from agentabstain_gym.envs.web.reading import Reading, read_request
from agentabstain_gym.envs.web.vocab import ProductType

_ASIN = re.compile(r"\AB0[0-9A-Z]{8}\Z")
_PRICE = re.compile(r"\A\$([0-9]+(?:\.[0-9]+)?)\Z")
_MONEY = re.compile(r"\$\s*\d[\d,]*(?:\.\d+)?|\d[\d,]*(?:\.\d+)?\s*(?:dollars?|bucks|usd)\b")
_NAV = {"back to search", "< prev", "next >", "description", "features", "reviews", "buy now", "search"}
_ARTICLES = frozenset({"a", "an", "the", "some"})


def _text(observation: str) -> str:
    if observation.lstrip().startswith("<!DOCTYPE") or observation.lstrip().startswith("<html"):
        return extract_text(observation)
    return re.sub(r"\[/?(?:clicked )?button_?\] ?| ?\[(?:clicked )?button_\]", "", observation)


def _mentions(text: str, phrase: str) -> bool:
    phrase = phrase.lower()
    return phrase in text and re.search(r"(?<![\w.])" + re.escape(phrase) + r"(?![\w.])", text) is not None


class HeuristicWebSolver:
    """Search, compare, check, buy; abstain on request cues and when checked products fall short."""

    name = "heuristic"

    def __init__(self, abstain: bool = True, max_checks: int = 3) -> None:
        self.abstain_enabled = abstain
        self.max_checks = max_checks
        self.reset()

    def reset(self) -> None:
        self.instruction = ""
        self.reading: Reading | None = None
        self.ptype: ProductType | None = None
        self.attrs: list[str] = []
        self.options: list[str] = []
        self.cap: float | None = None
        self.words: list[str] = []
        self.tried: set[str] = set()
        self.current: str | None = None
        self.picked: list[str] = []
        self.confirmed: set[str] = set()
        self.rejected = False
        self.checked_features = False
        self.searched = False

    # ----- reading the request -----------------------------------------------------------------------------------
    def read(self, instruction: str) -> None:
        self.reading = read_request(instruction)
        self.instruction = self.reading.text
        self.ptype = self.reading.ptype
        self.attrs = list(self.reading.attrs)
        self.options = list(self.reading.options)
        self.cap = self.reading.cap
        # the product's own words, for telling its results from others' when the store's types do not name it
        self.words = [w for w in re.findall(r"[a-z0-9']+", self.reading.phrase) if w not in _ARTICLES]

    def request_cue(self) -> str | None:
        """Why the request alone cannot be served, or None."""
        return self.reading.cue if self.reading is not None else None

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
        if self.ptype is None:  # the request in its own words, without the budget
            return " ".join(re.sub(r"[^\w\s.'-]", " ", _MONEY.sub(" ", self.instruction)).split())[:200]
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
        """Is this result the kind of product asked for? Among those, the search's own order (it ranks by every
        word of the query, attributes and options included) beats counting attributes in titles, which show few."""
        score = 0.0
        if self.ptype is not None and any(n.lower() in title for n in self.ptype.nouns):
            score += 3
        elif self.ptype is None and self.words:  # its head word (without it, another product), then its others
            head = re.search(rf"\b{re.escape(self.words[-1])}", title) is not None
            score += (3 if head else -5) + sum(w in title for w in self.words[:-1]) / len(self.words)
        return score

    def _on_item(self, parts: list[str], clickables: list[str], left: int) -> str:
        body = [p.strip() for p in parts]
        start = body.index("< Prev") + 1 if "< Prev" in body else 0
        end = next((i for i, p in enumerate(body) if p.startswith("Price: $")), len(body))
        title = body[end - 1].lower() if end > start else ""
        price = float(body[end][8:]) if end < len(body) else 0.0
        self.confirmed |= {a for a in self.attrs if a in title}
        values = [c for c in clickables if c not in _NAV]
        if self.ptype is None and not self.picked:  # the product's own options that the request names
            self.options = [v for v in values if _mentions(self.instruction, v)]
        missing_opts = [o for o in self.options if o not in values]
        bad = bool(missing_opts) or (self.cap is not None and price > self.cap) or self.rejected
        if bad:
            self.tried.add(self.current or "")
            if left <= 2 or len(self.tried) >= self.max_checks:
                return self._stop("the products that come closest do not meet the request", "click[buy now]")
            return "click[< prev]"
        unconfirmed = [a for a in self.attrs if a not in self.confirmed]
        to_pick = [o for o in self.options if o not in self.picked]
        if unconfirmed and not self.checked_features:
            if left >= len(to_pick) + 3:  # features, back, the options, buy
                self.checked_features = True
                return "click[features]"
            # no turns left to check what the title does not show: after other products fell short, a product that
            # may fall short too is no purchase; as the first one checked, it is the store's best guess
            if self.tried:
                return self._stop("no product checked in time meets every requirement", f"click[{to_pick[0]}]"
                                  if to_pick else "click[buy now]")
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
