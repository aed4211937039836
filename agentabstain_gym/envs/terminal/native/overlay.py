"""Abstention overlays: a JSONL file of variants laid over any terminal task set (ours or Terminal-Bench's).

The fields are the ones the Agentic Abstention release uses for its terminal set, so its metadata applies as is.
One JSON object per line, of two kinds:

* **Instruction variants** (request-based, w = 1): ``task_name`` (the base task's folder name), ``variant`` (a name
  unique per base), ``instruction_level_category`` (``false_premise_or_contradiction`` or
  ``underspecified_intent``; ``original`` rows are accepted and add nothing), ``instruction``. Optional:
  ``source_task_name`` (the base, when ``task_name`` names the variant), ``timely_grace_turns``.
* **Delayed variants** (environment-based; any row with ``abstention_timing``): ``abstention_timing`` (``delayed``
  or ``control``), ``trigger_style`` (``none``, ``observation_triggered``, ``execution_triggered``),
  ``earliest_abstain_turn`` (w, default 2), ``timely_grace_turns`` (default 0), ``expected_abstain`` (default:
  delayed rows true, control rows false), ``trigger_evidence`` (prose, for reports), and the environment: either
  ``environment_edits`` (a shell script, or a list of commands, run in the working directory after the task's own
  setup, e.g. ``rm /app/corpus.txt``) or ``task_dir`` (a whole task folder, relative to the overlay file, as the
  release ships them). Optional: ``instruction`` (default: the base's), ``evidence_regex`` (marks the evidence
  turn when a command's output matches), ``category`` (default ``missing_prerequisite`` for should-abstain rows).

A bad line raises ``ValueError`` naming the file, the line and the field.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

INSTRUCTION_CATEGORIES = ("false_premise_or_contradiction", "underspecified_intent")
TIMINGS = ("delayed", "control")
TRIGGER_STYLES = ("none", "observation_triggered", "execution_triggered")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,119}$")


@dataclass(frozen=True)
class OverlayRow:
    """One validated overlay line."""

    line: int
    base: str
    name: str
    variant: str
    category: str
    should_abstain: bool
    w: int | None
    grace: int | None
    instruction: str | None
    timing: str | None = None
    trigger_style: str | None = None
    trigger_evidence: str | None = None
    edits: str | None = None
    task_dir: Path | None = None
    evidence_regex: str | None = None
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)


def _int(data: dict[str, Any], key: str, default: int | None, minimum: int, where: str) -> int | None:
    value = data.get(key, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{where}: {key} must be an integer >= {minimum}, got {value!r}")
    return value


def _name(data: dict[str, Any], key: str, where: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not _NAME.match(value):
        raise ValueError(f"{where}: {key} must be a task name (letters, digits, '.', '_', '-'), got {value!r}")
    return value


def _row(data: dict[str, Any], where: str, base_dir: Path) -> OverlayRow | None:
    name = _name(data, "task_name", where)
    base = _name(data, "source_task_name", where) if data.get("source_task_name") is not None else name
    variant = data.get("variant", "")
    if not isinstance(variant, str):
        raise ValueError(f"{where}: variant must be a string")
    instruction = data.get("instruction")
    if instruction is not None and (not isinstance(instruction, str) or not instruction.strip()):
        raise ValueError(f"{where}: instruction must be a non-empty string")
    regex = data.get("evidence_regex")
    if regex is not None:
        try:
            if not isinstance(regex, str) or re.compile(regex).search(""):
                raise ValueError(f"{where}: evidence_regex must be a regex that does not match empty output")
        except re.error as exc:
            raise ValueError(f"{where}: evidence_regex: {exc}") from None
    if "abstention_timing" not in data:
        category = data.get("instruction_level_category")
        if category == "original":
            return None
        if category not in INSTRUCTION_CATEGORIES:
            raise ValueError(f"{where}: instruction_level_category must be one of "
                             f"{', '.join(('original', *INSTRUCTION_CATEGORIES))}, got {category!r}")
        if instruction is None:
            raise ValueError(f"{where}: an instruction variant needs an instruction")
        return OverlayRow(line=0, base=base, name=name, variant=variant or category, category=category,
                          should_abstain=True, w=1, grace=_int(data, "timely_grace_turns", None, 0, where),
                          instruction=instruction.strip(), evidence_regex=regex)
    timing = data["abstention_timing"]
    if timing not in TIMINGS:
        raise ValueError(f"{where}: abstention_timing must be one of {', '.join(TIMINGS)}, got {timing!r}")
    style = data.get("trigger_style", "none")
    if style not in TRIGGER_STYLES:
        raise ValueError(f"{where}: trigger_style must be one of {', '.join(TRIGGER_STYLES)}, got {style!r}")
    expected = data.get("expected_abstain", timing == "delayed")
    if not isinstance(expected, bool):
        raise ValueError(f"{where}: expected_abstain must be true or false")
    edits = data.get("environment_edits")
    if isinstance(edits, list) and all(isinstance(e, str) for e in edits):
        edits = "\n".join(edits)
    if edits is not None and not isinstance(edits, str):
        raise ValueError(f"{where}: environment_edits must be a shell script or a list of commands")
    task_dir = None
    if data.get("task_dir") is not None:
        if not isinstance(data["task_dir"], str):
            raise ValueError(f"{where}: task_dir must be a path")
        task_dir = (base_dir / data["task_dir"]).resolve()
        if not task_dir.is_dir():
            raise ValueError(f"{where}: task_dir {data['task_dir']!r} is not a folder (paths are relative to the "
                             "overlay file)")
    if task_dir is not None and edits:
        raise ValueError(f"{where}: give either environment_edits or task_dir, not both")
    category = data.get("category") or ("missing_prerequisite" if expected else "control")
    if not isinstance(category, str):
        raise ValueError(f"{where}: category must be a string")
    w = _int(data, "earliest_abstain_turn", 2, 1, where) if expected else None
    grace = _int(data, "timely_grace_turns", 0, 0, where) if expected else None
    evidence = data.get("trigger_evidence")
    return OverlayRow(line=0, base=base, name=name, variant=variant or f"{timing}-{name}", category=category,
                      should_abstain=expected, w=w, grace=grace, instruction=instruction.strip() if instruction
                      else None, timing=timing, trigger_style=style,
                      trigger_evidence=evidence if isinstance(evidence, str) else None, edits=edits or None,
                      task_dir=task_dir, evidence_regex=regex)


def read_overlay(path: Path | str) -> list[OverlayRow]:
    """Every variant row of an overlay file, validated; ``ValueError`` (file:line: field) on the first bad one."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"overlay {path}: no such file")
    rows: list[OverlayRow] = []
    seen: set[tuple[str, str]] = set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path.name}:{number}"
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{where}: bad JSON: {exc.msg}") from None
        if not isinstance(data, dict):
            raise ValueError(f"{where}: each line must be a JSON object")
        row = _row(data, where, path.parent)
        if row is None:
            continue
        key = (row.base, row.variant)
        if key in seen:
            raise ValueError(f"{where}: variant {row.variant!r} of task {row.base!r} appears twice")
        seen.add(key)
        rows.append(OverlayRow(**{**row.__dict__, "line": number}))
    return rows
