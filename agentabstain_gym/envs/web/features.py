"""AbstainWebShop-v1's feature hook for the stopping-policy env: what a shopper can tell from the page in front of it.

The generic features (:mod:`agentabstain_gym.wrappers.rl.features`) know nothing of shops. This hook reads the
request with the family solver's own reading (product type, attributes, options, price cap; and whether that reading
finds a problem in the request itself) and the current page with the store's grammar (result lines ``ASIN [SEP]
title [SEP] $price``, item pages with option buttons and ``Price: $x``), and returns values in [0, 1]. It sees
exactly what an agent sees: the observation and ``info`` (instruction, available actions); never a task or a label.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from agentabstain_gym.envs.web.pages import SEP, extract_text
from agentabstain_gym.envs.web.solver import HeuristicWebSolver

FEATURE_NAMES: tuple[str, ...] = (
    "type_named", "request_problem", "n_attributes", "n_options", "has_cap",
    "page_search", "page_results", "page_item", "page_detail", "page_other",
    "results_on_page", "type_share", "best_attribute_share", "price_ok_share", "full_title_match",
    "item_type_match", "item_attribute_share", "item_options_offered", "item_price_ok", "item_falls_short",
    "detail_attribute_share", "detail_falls_short",
)
#: Summed over the episode by the generic layer: how many product pages checked so far fell short of the request.
CUMULATIVE: tuple[str, ...] = ("item_falls_short", "detail_falls_short")
_ASIN = re.compile(r"\AB0[0-9A-Z]{8}\Z")
_PRICE = re.compile(r"\A\$([0-9]+(?:\.[0-9]+)?)\Z")
_ITEM_PRICE = re.compile(r"Price: \$([0-9]+(?:\.[0-9]+)?)")
_RICH = re.compile(r"\[/?(?:clicked )?button_?\] ?| ?\[(?:clicked )?button_\]")
_NAV = {"back to search", "< prev", "next >", "description", "features", "reviews", "buy now", "search"}


@dataclass(frozen=True)
class Request:
    """The solver's reading of an instruction (no label: the same reading the heuristic agent acts on)."""

    nouns: tuple[str, ...]
    attributes: tuple[str, ...]
    options: tuple[str, ...]
    cap: float | None
    problem: bool


@lru_cache(maxsize=1)
def _reader() -> HeuristicWebSolver:
    return HeuristicWebSolver(abstain=True)


@lru_cache(maxsize=4096)
def read_request(instruction: str) -> Request:
    reader = _reader()
    reader.reset()
    reader.read(instruction)
    nouns = tuple(n.lower() for n in reader.ptype.nouns) if reader.ptype is not None else ()
    return Request(nouns=nouns, attributes=tuple(reader.attrs), options=tuple(reader.options), cap=reader.cap,
                   problem=reader.request_cue() is not None)


def _parts(observation: str) -> list[str]:
    text = observation
    if text.lstrip().startswith(("<!DOCTYPE", "<html")):
        text = extract_text(text)
    return [p.strip() for p in _RICH.sub("", text).split(SEP.strip())]


def _share(wanted: tuple[str, ...], text: str) -> float:
    return sum(1 for w in wanted if w in text) / len(wanted) if wanted else 1.0


def _page(info: Mapping[str, Any], parts: list[str]) -> str:
    available = info.get("available_actions") or {}
    clickables = [str(c).lower() for c in available.get("clickables") or []]
    if available.get("has_search_bar"):
        return "search"
    if "buy now" in clickables:
        return "item"
    if any(_ASIN.match(p) for p in parts):
        return "results"
    if "< prev" in clickables:
        return "detail"
    return "other"


def features(observation: str, info: Mapping[str, Any]) -> dict[str, float]:
    request = read_request(str(info.get("instruction", "")))
    parts = _parts(observation)
    page = _page(info, parts)
    out = {
        "type_named": float(bool(request.nouns)), "request_problem": float(request.problem),
        "n_attributes": min(1.0, len(request.attributes) / 4), "n_options": min(1.0, len(request.options) / 3),
        "has_cap": float(request.cap is not None), **{f"page_{k}": float(page == k) for k in
                                                      ("search", "results", "item", "detail", "other")},
    }
    if page == "results":
        rows = []
        for k, part in enumerate(parts[:-2]):
            if _ASIN.match(part):
                title, price = parts[k + 1].lower(), _PRICE.match(parts[k + 2])
                typed = any(n in title for n in request.nouns)
                cheap = price is not None and (request.cap is None or float(price.group(1)) <= request.cap)
                rows.append((typed, _share(request.attributes, title), cheap))
        if rows:
            out.update({
                "results_on_page": len(rows) / 10, "type_share": sum(r[0] for r in rows) / len(rows),
                "best_attribute_share": max(r[1] for r in rows if r[0]) if any(r[0] for r in rows) else 0.0,
                "price_ok_share": sum(r[2] for r in rows) / len(rows),
                "full_title_match": float(any(r[0] and r[1] == 1.0 and r[2] for r in rows)),
            })
    elif page == "item":
        available = info.get("available_actions") or {}
        values = {str(c).lower() for c in available.get("clickables") or []} - _NAV
        price = _ITEM_PRICE.search(observation)
        body = [p for p in parts if not p.lower().startswith("instruction")]
        title = next((body[i - 1].lower() for i, p in enumerate(body) if p.startswith("Price: $") and i), "")
        out.update({
            "item_type_match": float(any(n in title for n in request.nouns)),
            "item_attribute_share": _share(request.attributes, title),
            "item_options_offered": _share(request.options, " | ".join(sorted(values))),
            "item_price_ok": float(price is not None and (request.cap is None or float(price.group(1)) <= request.cap)),
        })
        out["item_falls_short"] = float(out["item_type_match"] < 1 or out["item_options_offered"] < 1
                                        or out["item_price_ok"] < 1)
    elif page == "detail":
        start = next((i for i, p in enumerate(parts) if p == "< Prev"), 0)
        out["detail_attribute_share"] = _share(request.attributes, " ".join(parts[start + 1:]).lower())
        out["detail_falls_short"] = float(out["detail_attribute_share"] < 1)
    return {name: float(min(1.0, max(0.0, out.get(name, 0.0)))) for name in FEATURE_NAMES}
