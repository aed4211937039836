"""The prompts of ``abstain-gym gen`` (shipped as data in ``agentabstain_gym/data/gen``) and the views of sandboxes,
pairs and replays they are filled with.

The format reference in the prompts is the tool family's own authoring guide (``data/tools/AUTHORING.md``), cut
into the sections each stage needs, so the actor reads the same rules the validator enforces.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from importlib import resources
from string import Template
from typing import Any

import yaml

from agentabstain_gym.envs.tools import catalog
from agentabstain_gym.envs.tools.engine import CallRecord
from agentabstain_gym.envs.tools.spec import SandboxSpec, read_yaml

#: Characters of one tool result shown to the critic (results of list tools can be long).
RESULT_CHARS = 700
#: Characters of one record shown in a sandbox view.
RECORD_CHARS = 400


def load_prompt(name: str) -> str:
    return resources.files("agentabstain_gym").joinpath("data", "gen", name).read_text(encoding="utf-8")


def render(prompt: str, /, **values: Any) -> str:
    """A prompt file with its ``$placeholders`` filled (every placeholder must be given)."""
    return Template(load_prompt(prompt)).substitute({k: str(v) for k, v in values.items()}).strip()


def snippet(path: str, /, **values: Any) -> str:
    """A piece of a prompt from ``data/gen/snippets.yaml`` (``path`` like ``check.operational``), filled."""
    node: Any = _snippets()
    for part in path.split("."):
        node = node[part]
    return Template(str(node)).substitute({k: str(v) for k, v in values.items()}).strip()


@cache
def _snippets() -> dict[str, Any]:
    return dict(yaml.safe_load(load_prompt("snippets.yaml")))


@cache
def scenarios() -> dict[str, dict[str, Any]]:
    """Scenario -> {name, operators, text}, from ``data/gen/scenarios.yaml``."""
    return dict(yaml.safe_load(load_prompt("scenarios.yaml")))


@cache
def guide_section(number: int) -> str:
    """Section ``number`` of the authoring guide, without its heading."""
    text = (catalog.DATA_DIR / "AUTHORING.md").read_text(encoding="utf-8")
    match = re.search(rf"^## {number}\. [^\n]*\n(.*?)(?=^## \d+\. |\Z)", text, re.DOTALL | re.MULTILINE)
    if match is None:
        raise KeyError(f"the authoring guide has no section {number}")
    return match.group(1).strip()


def example_sandbox() -> str:
    """The shipped UserProfile spec: a small, complete sandbox without custom tools."""
    return (catalog.SANDBOX_DIR / "user_profile.yaml").read_text(encoding="utf-8").strip()


def _short(value: Any, limit: int) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def describe_tools(spec: SandboxSpec, names: Iterable[str] | None = None) -> str:
    lines = []
    for tool in spec.tools.values():
        if names is not None and tool.name not in names:
            continue
        params = "; ".join(f"{p.name} ({p.type}{', required' if p.required else ''}"
                           f"{', one of ' + '/'.join(map(str, p.enum)) if p.enum else ''}): {p.description}"
                           for p in tool.params.values()) or "no parameters"
        lines.append(f"- {tool.name} [{tool.kind}, {tool.op or tool.custom}]: {tool.description} "
                     f"Parameters: {params}")
    return "\n".join(lines)


def describe_collections(spec: SandboxSpec, per_collection: int) -> str:
    parts = []
    for name, coll in spec.collections.items():
        fields = ", ".join(f"{f.name}: {f.type}{' (hidden)' if f.hidden else ''}"
                           f"{' one of ' + '/'.join(map(str, f.enum)) if f.enum else ''}" for f in coll.fields.values())
        records = spec.snapshot.collections.get(name, {})
        shown = [records[k] for k in sorted(records)[:per_collection]]
        more = f" (first {len(shown)} of {len(records)})" if len(records) > len(shown) else ""
        parts.append(f"{name} (key {coll.key}; {len(records)} records{more})\n  fields: {fields}\n"
                     + "\n".join(f"  - {_short(r, RECORD_CHARS)}" for r in shown))
    return "\n".join(parts)


def curated_examples(sandbox: str, scenario: str, limit: int = 2) -> list[dict[str, Any]]:
    """Curated pair entries of ``scenario`` (this sandbox's first, then others'), read as written."""
    files = catalog.pair_files()
    order = ([sandbox] if sandbox in files else []) + [n for n in files if n != sandbox]
    out: list[dict[str, Any]] = []
    for name in order:
        data = read_yaml(files[name])
        for entry in (data or {}).get("pairs") or []:
            deltas = entry.get("deltas") or [entry.get("delta")]
            chosen = [d for d in deltas if isinstance(d, Mapping) and d.get("scenario") == scenario]
            if chosen:
                example = {k: v for k, v in entry.items() if k not in ("delta", "deltas")}
                out.append({"sandbox": name, **example, "delta": chosen[0]})
            if len(out) == limit:
                return out
    return out


def curated_instructions(sandbox: str) -> list[str]:
    """The T+ requests of the curated pairs of ``sandbox`` (none for a generated sandbox)."""
    path = catalog.pair_files().get(sandbox)
    if path is None or sandbox not in catalog.builtin_sandbox_names():
        return []
    return [str(e.get("instruction", "")) for e in (read_yaml(path) or {}).get("pairs") or []]


def trace_text(records: Sequence[CallRecord]) -> str:
    lines = []
    for i, r in enumerate(records, start=1):
        shown = r.result if r.ok else {"error": r.error}
        lines.append(f"{i}. {r.tool} {_short(r.arguments, 300)} -> {_short(shown, RESULT_CHARS)}")
    return "\n".join(lines) or "(no calls)"
