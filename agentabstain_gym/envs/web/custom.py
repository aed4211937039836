"""Users' own tasks against the store: one from reset options, or many from a file, in three row formats.

* Ours: ``{"instruction": str, "should_abstain": bool}`` with optional ``category``, ``w`` (default 2 for
  ``missing_target``, else 1, on should-abstain tasks), ``task_id``, ``split``, ``pair_id``, ``evidence``, and what a
  purchase is scored against: either ``goal`` (``product_type``, ``attributes``, ``options``, ``price_upper``) or a
  WebShop-style request (``instruction_attributes``, ``instruction_options``, ``price_upper``, optional
  ``product_type`` naming a shipped type, ``product`` phrase, ``asin``).
* The Agentic Abstention paper's instruction-set rows: ``instruction``, ``instruction_attributes``,
  ``instruction_options``, ``category`` (null / ``subjective`` / ``underspecified_intent`` / ``false_premises``),
  ``variant_type`` (``original`` / ``rewrite`` / ``missing_target``), ``should_abstain_expected``, ``source_id``
  (the pair key), ``env_variant``.
* WebShop's goals: human-instruction records (``asin``, ``instruction``, ``instruction_attributes``,
  ``instruction_options``...) and the goal dicts its env builds (``instruction_text``, ``attributes``,
  ``goal_options``, ``price_upper``, ``query``, ``product_category``, ``category``...): solvable tasks.

A file is JSONL (one row a line), a JSON list of rows, or WebShop's ``items_human_ins.json`` shape (asin -> list of
records). Rows with a request are grounded in the store when the env loads them (:mod:`.grounding`). Errors name
the file, the line (or record) and the field, because these files are written by hand.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentabstain_gym.core.task import SPLITS, Task
from agentabstain_gym.envs.web.dataset import MISSING_TARGET, SOLVABLE, digest
from agentabstain_gym.envs.web.goals import goal_from_dict, goal_to_dict
from agentabstain_gym.envs.web.reading import read_money
from agentabstain_gym.envs.web.taxonomy import store_category

CUSTOM_KEYS = ("instruction", "should_abstain", "category", "w", "goal")
REQUEST_KEYS = ("instruction_attributes", "instruction_options", "price_upper", "product_type", "product", "asin",
                "product_category")
FILE_KEYS = (*CUSTOM_KEYS, "task_id", "split", "pair_id", "evidence", *REQUEST_KEYS)
PAPER_KEYS = ("variant_type", "should_abstain_expected", "source_id", "env_variant")
WEBSHOP_KEYS = ("instruction_text", "goal_options", "query", "name", "weight")
VARIANTS = ("original", "rewrite", "missing_target")
#: The paper's category names -> ours.
PAPER_CATEGORIES = {"subjective": "subjective", "underspecified_intent": "underspecified_intent",
                    "false_premises": "false_premise", "false_premise": "false_premise"}
#: "no cap" as WebShop writes it.
NO_CAP = 1_000_000.0


def price_cap_in(instruction: str) -> float | None:
    """The price cap a request states, in any of the ways people state one ("price lower than 40.00 dollars",
    "under $25", "$30 tops", "budget 40 dollars", "between $20 and $35"), or None."""
    return read_money(" ".join(instruction.lower().split()))[0]


def dialect(data: Mapping[str, Any]) -> str:
    """``paper``, ``webshop`` or ``ours``: which format a row is in, from the fields only that format has."""
    if any(k in data for k in PAPER_KEYS):
        return "paper"
    if "should_abstain" not in data and (any(k in data for k in WEBSHOP_KEYS) or "instruction_attributes" in data
                                          or "asin" in data):
        return "webshop"
    return "ours"


def _strings(value: Any, where: str, field: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{where}: field {field!r} must be a list of strings")
    return [" ".join(v.split()) for v in value if v.strip()]


def _request(data: Mapping[str, Any], kind: str, where: str) -> dict[str, Any] | None:
    """The WebShop-style goal a row asks for, unresolved (None when the row has none)."""
    attrs_field = "instruction_attributes" if "instruction_attributes" in data or kind != "webshop" else "attributes"
    opts_field = "instruction_options" if "instruction_options" in data else "goal_options"
    phrase_field = "product" if "product" in data else "query"
    fields = {"attributes": data.get(attrs_field), "options": data.get(opts_field),
              "price_upper": data.get("price_upper"), "product_type": data.get("product_type"),
              "product": data.get(phrase_field), "asin": data.get("asin")}
    if all(v is None for v in fields.values()):
        return None
    attributes = _strings(fields["attributes"] or [], where, attrs_field)
    raw = fields["options"] or []
    if isinstance(raw, Mapping):
        if not all(isinstance(g, str) and isinstance(v, str) for g, v in raw.items()):
            raise ValueError(f"{where}: field {opts_field!r} must map option groups to values (strings)")
        options = [[g.lower(), " ".join(v.split())] for g, v in raw.items() if v.strip()]
    else:  # WebShop's human records list the target's options as "group: value": they name the groups
        seen = data.get("options") if kind == "webshop" and isinstance(data.get("options"), list) else []
        groups = {" ".join(o.split(":", 1)[1].split()).lower(): o.split(":", 1)[0].strip().lower()
                  for o in seen if isinstance(o, str) and ":" in o}
        options = [[groups.get(v.lower()), v] for v in _strings(raw, where, opts_field)]
    price = fields["price_upper"]
    if price is not None and (isinstance(price, bool) or not isinstance(price, (int, float)) or price <= 0):
        raise ValueError(f"{where}: field 'price_upper' must be a positive number")
    for field in ("product_type", "product", "asin"):
        value = fields[field]
        if value is not None and (not isinstance(value, str) or not value.strip()):
            name = phrase_field if field == "product" else field
            raise ValueError(f"{where}: field {name!r} must be a non-empty string")
    hint = data.get("category") if kind == "webshop" else None
    path = data.get("product_category")
    return {"attributes": [a.lower() for a in attributes], "options": options,
            "price_upper": float(price) if price is not None else None,
            "product_type": fields["product_type"].strip().lower() if fields["product_type"] else None,
            "product": " ".join(fields["product"].lower().split()) if fields["product"] else None,
            "asin": fields["asin"].strip() if fields["asin"] else None,
            "category": store_category(hint, path), "product_category": path if isinstance(path, str) else None}


def _label(data: Mapping[str, Any], kind: str, where: str) -> tuple[bool, str, str]:
    """(should_abstain, category, variant) of a row in its own format's terms."""
    if kind == "webshop":
        return False, SOLVABLE, "original"
    if kind == "ours":
        should_abstain = data.get("should_abstain")
        if not isinstance(should_abstain, bool):
            raise ValueError(f"{where}: field 'should_abstain' must be true or false")
        category = data.get("category")
        category = category if category is not None else ("custom_abstain" if should_abstain else SOLVABLE)
        if not isinstance(category, str) or not category:
            raise ValueError(f"{where}: field 'category' must be a non-empty string")
        return should_abstain, category, "custom"
    variant = data.get("variant_type")
    expected = data.get("should_abstain_expected")
    if expected is not None and not isinstance(expected, bool):
        raise ValueError(f"{where}: field 'should_abstain_expected' must be true or false")
    if variant is None:
        variant = "original" if expected is False else None
    if variant not in VARIANTS:
        raise ValueError(f"{where}: field 'variant_type' must be one of {list(VARIANTS)}")
    should_abstain = variant != "original"
    if expected is not None and expected != should_abstain:
        raise ValueError(f"{where}: field 'should_abstain_expected' is {str(expected).lower()} but variant_type "
                         f"is {variant!r}")
    raw = data.get("category")
    if variant == "missing_target":
        return True, MISSING_TARGET, variant
    if variant == "original":
        return False, SOLVABLE, variant
    if raw not in PAPER_CATEGORIES:
        raise ValueError(f"{where}: field 'category' of a rewrite must be one of {sorted(PAPER_CATEGORIES)}")
    return True, PAPER_CATEGORIES[raw], variant


def custom_task(data: Mapping[str, Any], where: str = "reset options", occurrence: int = 0) -> Task:
    """A task from a user's dict; raises ``ValueError`` naming ``where`` and the field at fault. ``occurrence``
    counts earlier rows of a file with the same default id, so that rows alike still get distinct ids."""
    kind = dialect(data)
    text_field = "instruction" if "instruction" in data or kind != "webshop" else "instruction_text"
    instruction = data.get(text_field)
    if not isinstance(instruction, str) or not instruction.strip():
        raise ValueError(f"{where}: field {text_field!r} must be a non-empty string")
    instruction = " ".join(instruction.split())
    should_abstain, category, variant = _label(data, kind, where)
    w = data.get("w")
    if should_abstain:
        w = (2 if category == MISSING_TARGET else 1) if w is None else w
        if isinstance(w, bool) or not isinstance(w, int) or w < 1:
            raise ValueError(f"{where}: field 'w' must be a positive integer")
    elif w is not None:
        raise ValueError(f"{where}: field 'w' is only for should-abstain tasks")
    payload: dict[str, Any] = {"variant": variant}
    goal = data.get("goal")
    request = _request(data, kind, where)
    if goal is not None and request is not None:
        raise ValueError(f"{where}: give either 'goal' or WebShop-style fields ({', '.join(REQUEST_KEYS[:3])}...), "
                         "not both")
    if goal is not None:
        payload["goal"] = goal_to_dict(goal_from_dict(goal, f"{where}: field 'goal'"))
    if request is not None:
        if request["price_upper"] is None:
            request["price_upper"] = price_cap_in(instruction)
        payload["request"] = request
    if kind == "paper" and data.get("env_variant") is not None:
        payload["env_variant"] = str(data["env_variant"])
    split = data.get("split", "test")
    if split not in SPLITS:
        raise ValueError(f"{where}: field 'split' must be one of {list(SPLITS)}")
    pair_id = data.get("source_id") if kind == "paper" else data.get("pair_id")
    if isinstance(pair_id, int) and not isinstance(pair_id, bool):
        pair_id = str(pair_id)
    if pair_id is not None and not isinstance(pair_id, str):
        raise ValueError(f"{where}: field {'source_id' if kind == 'paper' else 'pair_id'!r} must be a string")
    task_id = data.get("task_id", data.get("id") if kind != "ours" else None)
    if isinstance(task_id, int) and not isinstance(task_id, bool):
        task_id = str(task_id)
    if task_id is None:
        key = json.dumps([instruction, should_abstain, category, w, payload.get("goal"), request], sort_keys=True)
        if occurrence:
            key += f"#{occurrence}"
        task_id = f"ws-custom-{digest('custom', key)}"
    if not isinstance(task_id, str) or not task_id:
        raise ValueError(f"{where}: field 'task_id' must be a non-empty string")
    return Task(task_id=task_id, family="web", instruction=instruction, should_abstain=should_abstain,
                category=category, split=split, pair_id=pair_id, w=w if should_abstain else None,
                evidence=str(data.get("evidence", "")), payload=payload)


def read_rows(path: Path) -> list[tuple[str, Any]]:
    """(where, row) for every row of a tasks file: JSONL, a JSON list, or WebShop's asin -> records object."""
    text = path.read_text(encoding="utf-8")
    try:
        whole = json.loads(text)
    except ValueError:
        whole = None
    if isinstance(whole, list):
        return [(f"{path}: record {k}", row) for k, row in enumerate(whole)]
    if isinstance(whole, dict) and whole and all(isinstance(v, list) for v in whole.values()):
        return [(f"{path}: record {asin!r} goal {k}", {"asin": asin, **rec} if isinstance(rec, dict) else rec)
                for asin, recs in whole.items() for k, rec in enumerate(recs)]
    rows = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append((f"{path}: line {lineno}", json.loads(line)))
        except ValueError as exc:
            raise ValueError(f"{path}: line {lineno}: not valid JSON ({exc})") from None
    return rows


def load_tasks_file(path: str | Path) -> list[Task]:
    """Tasks from a file of rows in any of the three formats (blank lines skipped)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"tasks file {path} {'is a folder' if path.is_dir() else 'does not exist'}")
    tasks: list[Task] = []
    seen: dict[str, int] = {}  # default id -> rows that had it so far
    for where, data in read_rows(path):
        if not isinstance(data, dict):
            raise ValueError(f"{where}: expected a JSON object")
        if dialect(data) == "ours":
            unknown = sorted(set(data) - set(FILE_KEYS))
            if unknown:
                raise ValueError(f"{where}: unknown field(s) {unknown}; known fields are {list(FILE_KEYS)}")
        task = custom_task(data, where)
        if data.get("task_id", data.get("id")) is None:  # rows alike get ids alike: number the repeats
            repeat = seen.get(task.task_id, 0)
            seen[task.task_id] = repeat + 1
            task = custom_task(data, where, occurrence=repeat) if repeat else task
        tasks.append(task)
    if not tasks:
        raise ValueError(f"{path}: no tasks")
    duplicate = next((i for i, n in Counter(t.task_id for t in tasks).items() if n > 1), None)
    if duplicate is not None:
        raise ValueError(f"{path}: task_id {duplicate!r} occurs more than once")
    return tasks
