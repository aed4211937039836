"""Run the store on WebShop's own data files, for users who have them (nothing is downloaded).

Reads the product file (``items_shuffle*.json``: a JSON list of products with ``asin``, ``name``,
``full_description``, ``small_description``, ``pricing``, ``customization_options``, ``category``,
``product_category``, ``average_rating``), the attribute file (``items_ins_v2*.json``: asin -> ``{"attributes":
[...], "instruction"?, "instruction_attributes"?, "instruction_options"?}``) and human goals (``items_human_ins.json``:
asin -> list of ``{"instruction", "instruction_attributes", "instruction_options"}``). Goals come from the human
goals, else from the attribute file's instructions; each gets an abstain twin as in the generated set. Price caps
are drawn with a seeded generator (WebShop drew them unseeded). Errors name the file, the record and the field.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np

from agentabstain_gym.envs.web.catalogue import Catalogue, Product
from agentabstain_gym.envs.web.dataset import WebDataset, make_tasks
from agentabstain_gym.envs.web.goals import GoalSpec
from agentabstain_gym.envs.web.matching import Goal
from agentabstain_gym.envs.web.vocab import ProductType

_PRICE = re.compile(r"\$\s*([0-9][0-9,]*(?:\.[0-9]+)?)")


class LoadedCatalogue(Catalogue):
    """Products read from WebShop files; ``product_type`` is the product's ``product_category`` path."""

    name = "webshop-files"

    def __init__(self, products: list[Product]) -> None:
        self._products = products
        self._by_asin = {p.asin.upper(): i for i, p in enumerate(products)}
        self._by_type: dict[str, list[int]] = {}
        for i, p in enumerate(products):
            self._by_type.setdefault(p.product_type, []).append(i)

    def __len__(self) -> int:
        return len(self._products)

    def product(self, index: int) -> Product:
        return self._products[index]

    def index_of(self, asin: str) -> int | None:
        return self._by_asin.get(asin.strip().upper())

    def candidates(self, goal: Goal) -> np.ndarray:
        return np.asarray(self._by_type.get(goal.product_type, []), dtype=np.int64)


def _read_json(path: Path, what: str) -> Any:
    if not path.is_file():
        raise FileNotFoundError(f"{what} file {path} does not exist")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ValueError(f"{path}: not valid JSON ({exc})") from None


def _string(record: dict, field: str, where: str, *, required: bool = True) -> str:
    value = record.get(field)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        raise ValueError(f"{where}: field {field!r} must be a non-empty string")
    return value.strip()


def parse_price(text: Any, where: str) -> float:
    """The first dollar amount of a WebShop ``pricing`` string ("$19.99" or the range "$19.99$27.99")."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return float(text)
    match = _PRICE.search(text) if isinstance(text, str) else None
    if match is None:
        raise ValueError(f"{where}: field 'pricing' must be a price such as \"$19.99\", got {text!r}")
    return float(match.group(1).replace(",", ""))


def _options(raw: Any, where: str) -> dict[str, tuple[str, ...]]:
    if raw in ("", None):
        return {}
    if not isinstance(raw, dict):
        raise ValueError(f"{where}: field 'customization_options' must be an object or \"\"")
    out = {}
    for group, values in raw.items():
        if not isinstance(values, list):
            raise ValueError(f"{where}: field 'customization_options' group {group!r} must be a list")
        names = [v.get("value") if isinstance(v, dict) else v for v in values]
        if not all(isinstance(n, str) for n in names):
            raise ValueError(f"{where}: field 'customization_options' group {group!r} needs string 'value's")
        out[str(group).lower()] = tuple(" ".join(n.split()) for n in names)
    return out


def _product(i: int, rec: Any, attributes: dict[str, list[str]], where: str) -> Product:
    if not isinstance(rec, dict):
        raise ValueError(f"{where}: expected a product object")
    asin = _string(rec, "asin", where)
    bullets = rec.get("small_description") or []
    if isinstance(bullets, str):
        bullets = [bullets]
    if not isinstance(bullets, list) or not all(isinstance(b, str) for b in bullets):
        raise ValueError(f"{where}: field 'small_description' must be a string or a list of strings")
    rating = rec.get("average_rating")
    try:
        rating_value = float(rating) if rating not in (None, "", "N.A.") else None
    except (TypeError, ValueError):
        raise ValueError(f"{where}: field 'average_rating' must be a number") from None
    path = _string(rec, "product_category", where, required=False)
    return Product(
        index=i, asin=asin, title=_string(rec, "name", where), price=parse_price(rec.get("pricing"), where),
        rating=rating_value, category=_string(rec, "category", where, required=False).lower(),
        product_type=path or _string(rec, "query", where, required=False), product_category=path,
        options=_options(rec.get("customization_options"), where), attributes=tuple(attributes.get(asin, [])),
        bullets=tuple(b.strip() for b in bullets if b.strip()),
        description=_string(rec, "full_description", where, required=False), reviews=())


def _attribute_file(path: Path) -> dict[str, dict]:
    data = _read_json(path, "attribute")
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected an object mapping asin -> {{\"attributes\": [...]}}")
    for asin, rec in data.items():
        attrs = rec.get("attributes") if isinstance(rec, dict) else None
        if not isinstance(attrs, list) or not all(isinstance(a, str) for a in attrs):
            raise ValueError(f"{path}: record {asin!r}: field 'attributes' must be a list of strings")
    return data


def _goal_records(path: Path | None, attrs: dict[str, dict]) -> list[tuple[str, dict, str]]:
    """(asin, goal record, where) from human goals, else from the attribute file's instructions."""
    out = []
    if path is not None:
        data = _read_json(path, "goals")
        if not isinstance(data, dict):
            raise ValueError(f"{path}: expected an object mapping asin -> list of goals")
        for asin, goals in data.items():
            if not isinstance(goals, list):
                raise ValueError(f"{path}: record {asin!r}: expected a list of goals")
            out += [(asin, g, f"{path}: record {asin!r} goal {k}") for k, g in enumerate(goals)]
    else:
        out = [(asin, rec, f"attribute file: record {asin!r}") for asin, rec in attrs.items()
               if isinstance(rec, dict) and rec.get("instruction")]
    return out


def _goal(product: Product, rec: Any, where: str, rng: np.random.Generator) -> GoalSpec:
    if not isinstance(rec, dict):
        raise ValueError(f"{where}: expected a goal object")
    instruction = _string(rec, "instruction", where).rstrip(".")
    attributes = rec.get("instruction_attributes", rec.get("attributes", []))
    if not isinstance(attributes, list) or not all(isinstance(a, str) for a in attributes):
        raise ValueError(f"{where}: field 'instruction_attributes' must be a list of strings")
    options = rec.get("instruction_options", rec.get("options", [])) or []
    if isinstance(options, dict):
        pairs = [(str(g).lower(), str(v)) for g, v in options.items()]
    elif isinstance(options, list) and all(isinstance(v, str) for v in options):
        groups = {v.lower(): g for g, vs in product.options.items() for v in vs}
        pairs = [(groups.get(v.lower(), "option"), v) for v in options]
    else:
        raise ValueError(f"{where}: field 'instruction_options' must be a list of strings or an object")
    raw = product.price * float(rng.uniform(1.0, 1.5))
    cap = float(math.ceil(raw / 10) * 10) if raw > 10 else float(math.ceil(raw))
    if "price lower than" not in instruction:
        instruction += f", and price lower than {cap:.2f} dollars"
    goal = Goal(product_type=product.product_type, category=product.category,
                attributes=tuple(a.lower() for a in attributes), options=tuple(pairs), price_upper=cap)
    return GoalSpec(goal=goal, source=product.index, instruction=instruction)


def _ptype(catalogue: LoadedCatalogue, spec: GoalSpec) -> ProductType:
    """What a rewrite needs to know of a loaded product's type: its name, category and option values."""
    product = catalogue.product(spec.source)
    leaf = (product.product_category.split("›")[-1].strip() or product.title.split(",")[0]).lower()
    groups = tuple(product.options)
    return ProductType(type_id=-1, category=product.category, category_label=product.category, name=leaf,
                       path=(), nouns=(), price=(0.0, 0.0), attributes=(), groups=groups,
                       values=tuple(product.options[g] for g in groups), attr_match=(), option_match=())


def load_webshop(products_file: str | Path, attributes_file: str | Path | None = None,
                 goals_file: str | Path | None = None, *, seed: int = 0, missing_target: str = "strict") -> WebDataset:
    """A dataset from WebShop files: their products, their goals as solvable tasks, and an abstain twin each."""
    path = Path(products_file)
    records = _read_json(path, "product")
    if not isinstance(records, list):
        raise ValueError(f"{path}: expected a JSON list of products")
    attrs = _attribute_file(Path(attributes_file)) if attributes_file is not None else {}
    attr_lists = {asin: rec["attributes"] for asin, rec in attrs.items()}
    products = [_product(i, rec, attr_lists, f"{path}: record {i}") for i, rec in enumerate(records)]
    catalogue = LoadedCatalogue(products)
    rng = np.random.default_rng([seed, 0x10AD])
    goals = []
    for asin, rec, where in _goal_records(Path(goals_file) if goals_file is not None else None, attrs):
        index = catalogue.index_of(asin)
        if index is None:
            raise ValueError(f"{where}: asin {asin!r} is not in the product file {path}")
        goals.append(_goal(catalogue.product(index), rec, where, rng))
    if len(goals) < 3:
        raise ValueError(f"{path}: need at least 3 goals (from a goals file or instructions in the attribute "
                         f"file), found {len(goals)}")
    return WebDataset(catalogue, make_tasks(catalogue, goals, seed, lambda s: _ptype(catalogue, s)), seed=seed,
                      missing_target=missing_target)
