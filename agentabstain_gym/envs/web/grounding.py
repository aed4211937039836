"""Goal-grounded task files: every request gets a store in which its goal can be met, and near misses beside it.

A row's request (attributes, options, price cap, and a product type, phrase or ASIN) becomes a goal on a product
type: the row's ASIN's type, a shipped type the row or its instruction names, or a type made from the product
phrase (:mod:`.taxonomy`). Rows of one pair (``pair_id`` / the paper's ``source_id``) share their original's goal,
as a rewrite or a Missing Target twin is scored against the goal it was made from.

The store is then stocked per goal, the same way whatever the row's label, so the store itself says nothing about
which rows should be abstained on: when no product can earn 1.0 for a goal, a target product is made from it; and
every goal gets near misses of its type (each fails one requirement: an attribute, an option, the price). Missing
Target rows then hide what :class:`~.dataset.WebDataset` says (every product that could earn 1.0, or in ``paper``
mode only the target). The grounded dataset is cached on the base dataset by a hash of the rows' content, never by
task id.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections.abc import Sequence

import numpy as np

from agentabstain_gym.core.task import Task
from agentabstain_gym.envs.web.catalogue import Catalogue, GeneratedCatalogue, Product, render_product
from agentabstain_gym.envs.web.custom import NO_CAP
from agentabstain_gym.envs.web.dataset import WebDataset, check_mode, digest
from agentabstain_gym.envs.web.goals import goal_from_dict, goal_to_dict
from agentabstain_gym.envs.web.matching import Goal, attribute_matches, normalise
from agentabstain_gym.envs.web.taxonomy import phrase_type, product_phrase, resolve_type, store_category
from agentabstain_gym.envs.web.vocab import CATEGORIES, ProductType, load_data, make_type, type_by_name

#: Near misses made per goal (at most; one per requirement that can be missed).
NEAR_MISSES = 4
_B36 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_SIZE = re.compile(r"^(?:x{0,3}-?(?:small|large)|small|medium|large|one size|petite|plus|\d+x?l|[0-9./]+(?:\s*[a-z\"']+"
                   r".*)?|.*\b(?:pack|count|oz|ounce|ml|inch|lb|pound|gram|liter|feet|ft|cm|mm|pcs|piece)s?\b.*)$")


class ExtendedCatalogue(Catalogue):
    """A base catalogue plus products stocked for a task file's goals (positions after the base's)."""

    def __init__(self, base: Catalogue, extras: Sequence[Product]) -> None:
        self.base, self.extras = base, tuple(extras)
        self.name = f"{base.name}+goals"
        self._n = len(base)
        self._by_asin = {p.asin.upper(): p.index for p in self.extras}
        self._by_type: dict[str, list[int]] = {}
        for p in self.extras:
            self._by_type.setdefault(p.product_type, []).append(p.index)

    def __len__(self) -> int:
        return self._n + len(self.extras)

    def product(self, index: int) -> Product:
        return self.base.product(index) if index < self._n else self.extras[index - self._n]

    def document(self, index: int) -> str:
        return self.base.document(index) if index < self._n else super().document(index)

    def index_of(self, asin: str) -> int | None:
        found = self.base.index_of(asin)
        return found if found is not None else self._by_asin.get(asin.strip().upper())

    def candidates(self, goal: Goal) -> np.ndarray:
        own = np.asarray(self._by_type.get(goal.product_type, []), dtype=np.int64)
        return np.concatenate([self.base.candidates(goal), own])

    def satisfying(self, goal: Goal) -> np.ndarray:
        hits = [i for i in self._by_type.get(goal.product_type, []) if self.product(i).best_reward(goal)[0] >= 1.0]
        return np.concatenate([self.base.satisfying(goal), np.asarray(hits, dtype=np.int64)])


# ----- from a request to a goal ---------------------------------------------------------------------------------

def _type_of_product(product: Product) -> ProductType:
    """A stocking type for a product of a loaded store (its type is its category path)."""
    shipped = type_by_name().get(product.product_type)
    if shipped is not None:
        return shipped
    category = store_category(product.category, product.product_category) or "home"
    spec = {"name": product.product_type, "path": ["More", product.product_type[-60:] or "Item"],
            "nouns": [product.title.split(",")[0][:60] or "Item"], "price": [1, max(2.0, product.price * 2)],
            "attributes": list(product.attributes)[:64], "options": {g: list(v) for g, v in product.options.items()}}
    return make_type(-1, category, product.category or category, spec)


def _group_of(value: str, ptype: ProductType) -> str:
    for group, values in zip(ptype.groups, ptype.values, strict=True):
        if any(normalise(v) == normalise(value) for v in values):
            return group
    low = normalise(value)
    if _SIZE.match(low):
        return "size"
    if set(low.replace("-", " ").split()) & set(load_data("requests")["colour_words"]):
        return "color"
    return "style"


def goal_options(options: Sequence[Sequence[str | None]], ptype: ProductType) -> tuple[tuple[str, str], ...]:
    """(group, value) pairs, each value in a group of its own so one product can offer all of them at once."""
    out: list[tuple[str, str]] = []
    used: set[str] = set()
    for group, value in options:
        g = str(group).lower() if group else _group_of(str(value), ptype)
        if g in used:
            spare = (*load_data("requests")["spare_groups"], *(f"option {k}" for k in range(2, 99)))
            g = next(s for s in spare if s not in used)
        used.add(g)
        out.append((g, str(value)))
    return tuple(out)


def resolve(request: dict, instruction: str, catalogue: Catalogue) -> tuple[Goal, ProductType, int | None]:
    """The goal of a request, the type to stock it with, and the position of the row's own ASIN in the store."""
    index = catalogue.index_of(request["asin"]) if request.get("asin") else None
    hint = request.get("category")
    attributes = tuple(dict.fromkeys(a.lower() for a in request.get("attributes", [])))
    values = [str(v) for _, v in request.get("options", [])]
    cap = request.get("price_upper")
    if index is not None:
        product = catalogue.product(index)
        ptype, category = _type_of_product(product), product.category
    else:
        named = request.get("product_type") or request.get("product")
        if named:
            ptype = type_by_name().get(named) or resolve_type(named, hint, strict=True) or phrase_type(
                named, category=hint, product_category=request.get("product_category"), attributes=attributes,
                price_cap=cap)
        else:
            text = instruction.lower()
            for phrase in sorted([*attributes, *values], key=len, reverse=True):
                text = re.sub(rf"(?<!\w){re.escape(phrase.lower())}(?!\w)", " ", text)
            ptype = resolve_type(text, hint) or phrase_type(
                product_phrase(instruction, attributes, values), category=hint,
                product_category=request.get("product_category"), attributes=attributes, price_cap=cap)
        category = ptype.category
    goal = Goal(product_type=ptype.name, category=category, attributes=attributes,
                options=goal_options(request.get("options", []), ptype),
                price_upper=float(cap) if cap is not None else NO_CAP)
    return goal, ptype, index


# ----- stocking the store ---------------------------------------------------------------------------------------

def _stock_type(goal: Goal, ptype: ProductType) -> ProductType:
    """``ptype`` with the goal's attributes and option values added, so products of it can show them."""
    wanted = list(goal.attributes)
    own = [a for a in ptype.attributes if not any(attribute_matches(w, a) or attribute_matches(a, w) for w in wanted)]
    own_options = {g: list(v) for g, v in zip(ptype.groups, ptype.values, strict=True)}
    options: dict[str, list[str]] = {}
    for group, value in goal.options:  # the goal's groups first: they must survive the cap on groups
        others = [v for v in own_options.get(group, []) if normalise(v) != normalise(value)]
        options[group] = [value, *others]
    for group, values in own_options.items():
        options.setdefault(group, values)
    spec = {"name": ptype.name, "path": list(ptype.path) or ["More"], "nouns": list(ptype.nouns) or [ptype.name],
            "price": list(ptype.price), "attributes": (wanted + own)[:64],
            "options": {g: v[:64] for g, v in list(options.items())[:8]}}
    return make_type(-1, ptype.category, ptype.category_label, spec)


def _price(rng: np.random.Generator, lo: float, hi: float) -> float:
    dollars = float(np.floor(rng.uniform(lo, max(lo, hi))))
    cents = (0.99, 0.49, 0.95, 0.0, 0.79)[int(rng.integers(5))]
    return round(max(0.99, dollars + cents), 2)


def _full_match(goal: Goal, stock: ProductType, rng: np.random.Generator) -> dict:
    """One product that meets the goal, with its own other attributes, other option values and price."""
    wanted = list(goal.attributes)
    spare = [a for a in stock.attributes if a not in wanted]
    extra = [spare[int(j)] for j in rng.permutation(len(spare))[: int(rng.integers(1, 3))]] if spare else []
    chosen = dict(goal.options)
    options: dict[str, list[str]] = {}
    for group, values in zip(stock.groups, stock.values, strict=True):
        rest = [v for v in values if normalise(v) != normalise(chosen.get(group, "\0"))]
        keep = [rest[int(j)] for j in rng.permutation(len(rest))[: int(rng.integers(0 if group in chosen else 1, 4))]]
        offered = ([chosen[group]] if group in chosen else []) + keep
        options[group] = [v for v in values if v in offered]
    cap = goal.price_upper
    lo, hi = stock.price
    price = _price(rng, min(lo, cap * 0.6), min(hi, cap * 0.97)) if cap < NO_CAP else _price(rng, lo, hi)
    if cap < NO_CAP and price > cap:
        price = round(max(0.01, np.floor(cap) - 0.01), 2)
    return {"attributes": wanted + extra, "options": options, "price": price, "spare": spare}


def _specs(goal: Goal, stock: ProductType, rng: np.random.Generator, with_target: bool) -> list[dict]:
    """Attribute lists, options and prices of the target (first, when made) and its near misses: each near miss is
    a product of its own that fails one requirement (a wanted attribute, a wanted option value, the price)."""
    out = [_full_match(goal, stock, rng)] if with_target else []
    for a in [goal.attributes[int(j)] for j in rng.permutation(len(goal.attributes))[:2]]:
        spec = _full_match(goal, stock, rng)
        swap = [x for x in spec["spare"] if x not in spec["attributes"]][:1]
        out.append({**spec, "attributes": [x for x in spec["attributes"] if x != a] + swap})
    for group, value in goal.options[:1]:
        spec = _full_match(goal, stock, rng)
        others = [v for v in stock.values[stock.groups.index(group)] if v != value]
        if others:
            picked = [others[int(j)] for j in rng.permutation(len(others))[: int(rng.integers(1, 3))]]
            out.append({**spec, "options": {**spec["options"], group: picked}})
    if goal.price_upper < NO_CAP:
        out.append({**_full_match(goal, stock, rng), "price": round(goal.price_upper * float(rng.uniform(1.08, 1.5)),
                                                                    2)})
    return out[: int(with_target) + NEAR_MISSES]


def _asin(base: Catalogue, position: int, taken: set[str], salt: str) -> str:
    """An ASIN no product of the store has, shaped like every other one."""
    if isinstance(base, GeneratedCatalogue):
        asin = base.asin(position)  # the generator's bijection: never one of the base's
    else:
        x = int(hashlib.sha256(f"{salt}:{position}".encode()).hexdigest(), 16)
        asin = "B0" + "".join(_B36[(x >> (6 * k)) % 36] for k in range(8))
    while asin.upper() in taken or base.index_of(asin) is not None:
        asin = "B0" + asin[3:] + asin[2]
    taken.add(asin.upper())
    return asin


def _stock(goal: Goal, ptype: ProductType, base: Catalogue, extras: list[Product], with_target: bool,
           taken: set[str], salt: str) -> str | None:
    """Append the goal's target (when asked) and near misses to ``extras``; the target's ASIN, if made."""
    key = json.dumps(goal_to_dict(goal), sort_keys=True)
    rng = np.random.default_rng(int(digest("stock", key), 16))
    stock = _stock_type(goal, ptype)
    text = load_data("text")["brands"][stock.category]
    brands = [p + s for p in text["prefix"] for s in text["suffix"]]
    target_asin = None
    for k, spec in enumerate(_specs(goal, stock, rng, with_target)):
        position = len(base) + len(extras)
        product = render_product(
            index=position, asin=_asin(base, position, taken, salt), ptype=stock,
            brand=brands[int(rng.integers(len(brands)))], seed=int(rng.integers(1 << 32)),
            attributes=tuple(spec["attributes"][int(j)] for j in rng.permutation(len(spec["attributes"]))),
            options={g: tuple(v) for g, v in spec["options"].items()}, price=float(spec["price"]),
            rating=int(rng.integers(36, 51)))
        reward = product.best_reward(goal)[0]
        if with_target and k == 0:
            if reward < 1.0:
                raise RuntimeError(f"a product made for goal {key} earns {reward}, not 1.0")
            target_asin = product.asin
        elif reward >= 1.0:
            continue  # a near miss that text made a full match: leave it out
        extras.append(product)
    return target_asin


# ----- the grounded dataset -------------------------------------------------------------------------------------

def rows_key(tasks: Sequence[Task]) -> str:
    """A content hash of task rows: what a grounded dataset is cached by (ids alone say nothing of content)."""
    rows = [[t.task_id, t.instruction, t.should_abstain, t.category, t.split, t.pair_id, t.w, t.evidence, t.payload]
            for t in tasks]
    return hashlib.sha256(json.dumps(rows, sort_keys=True, default=str).encode()).hexdigest()


def ground(base: WebDataset, tasks: Sequence[Task], missing_target: str = "strict") -> WebDataset:
    """A dataset of ``tasks`` on ``base``'s store, stocked for their goals (cached on ``base`` by content)."""
    key = f"{rows_key(tasks)}:{check_mode(missing_target)}"
    cache = base.__dict__.setdefault("_grounded", {})
    if key not in cache:
        if len(cache) >= 8:
            cache.pop(next(iter(cache)))
        cache[key] = _ground(base, tasks, missing_target)
    return cache[key]


def _ground(base: WebDataset, tasks: Sequence[Task], missing_target: str) -> WebDataset:
    catalogue = base.catalogue
    originals: dict[str, Task] = {}
    for t in tasks:
        if t.pair_id is not None and not t.should_abstain and (t.payload.get("request") or t.payload.get("goal")):
            originals.setdefault(t.pair_id, t)
    resolved: dict[str, tuple[Goal, str | None]] = {}  # goal json -> (goal, target asin)
    extras: list[Product] = []
    taken: set[str] = set()
    out = []
    for t in tasks:
        source = originals.get(t.pair_id or "") if t.should_abstain else None
        row = source if source is not None else t
        if row.payload.get("goal"):
            goal, ptype, index = goal_from_dict(row.payload["goal"]), type_by_name().get(
                row.payload["goal"]["product_type"]), None
        elif row.payload.get("request"):
            goal, ptype, index = resolve(row.payload["request"], row.instruction, catalogue)
        else:
            out.append(t)
            continue
        gkey = json.dumps(goal_to_dict(goal), sort_keys=True)
        if gkey not in resolved:
            if ptype is None:
                ptype = phrase_type(goal.product_type, category=goal.category if goal.category in CATEGORIES
                                    else None, attributes=goal.attributes, price_cap=goal.price_upper)
            had = catalogue.satisfying(goal)
            made = _stock(goal, ptype, catalogue, extras, with_target=len(had) == 0, taken=taken,
                          salt=rows_key(tasks)[:16])
            # the target: the row's own product, else the one made for the goal, else the store's first match
            target = index if index is not None else (int(min(had)) if len(had) else None)
            asin = catalogue.product(target).asin if target is not None else made
            resolved[gkey] = (goal, asin)
        goal, asin = resolved[gkey]
        payload = {**t.payload, "goal": goal_to_dict(goal)}
        if asin is not None:
            payload["source_asin"] = asin
        out.append(dataclasses.replace(t, payload=payload))
    store = ExtendedCatalogue(catalogue, extras) if extras else catalogue
    return WebDataset(store, out, seed=base.seed, missing_target=missing_target)
