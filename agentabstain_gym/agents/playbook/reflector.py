"""The LLM-backed reflector and curator of CONVOLVE, prompts shipped in ``data/playbook``.

The reflector reads a finished training trajectory (with its label: this is the learning step) and says where
abstention became warranted, the evidence and the lesson; the curator turns that into add / update / merge /
delete operations. Both answer in JSON. Model output is untrusted: JSON is dug out of code fences and chatter,
every field is checked, invalid operations and triggers are dropped with a note in ``Reflection.errors``, and a
failed request yields an empty reflection rather than an exception, so one bad reply never ends a training run.
The deterministic updater then applies whatever survived.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from importlib import resources
from string import Template
from typing import Any

from agentabstain_gym.agents.llm_client import ChatCaller, LLMError
from agentabstain_gym.agents.playbook.book import SECTIONS, Playbook, PlaybookError, Trigger
from agentabstain_gym.agents.playbook.miner import record_instruction
from agentabstain_gym.agents.playbook.updater import DEFAULT_MAX_BULLETS, Operation, Reflection

OBSERVATION_CHARS = 1200
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


def load_prompt(name: str) -> Template:
    """A shipped prompt template of ``data/playbook``."""
    return Template(resources.files("agentabstain_gym").joinpath("data", "playbook", name).read_text("utf-8"))


def extract_json(text: str) -> dict[str, Any]:
    """The first JSON object in a model reply (inside a code fence or not); raises ``ValueError`` if none."""
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    for candidate in candidates:
        start, end = candidate.find("{"), candidate.rfind("}")
        if start < 0 or end <= start:
            continue
        try:
            data = json.loads(candidate[start:end + 1])
        except ValueError:
            continue
        if isinstance(data, dict):
            return data
    raise ValueError("no JSON object in the reply")


def format_trajectory(record: Mapping[str, Any], limit: int = OBSERVATION_CHARS) -> str:
    """A record's steps as text for the reflector, each observation cut to ``limit`` characters."""
    lines = []
    for step in record.get("steps") or []:
        obs = str(step.get("observation", ""))
        if len(obs) > limit:
            obs = obs[:limit] + f"... [{len(obs) - limit} more characters]"
        lines.append(f"turn {step.get('turn')}: action {step.get('action')!s}\n  observation: {obs}")
    return "\n".join(lines) or "(no actions)"


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class LLMReflector:
    """Reflector + curator over an OpenAI-compatible server (the same client and retry policy as the LLM agent).

    ``calls`` keeps every request's transcript entry (prompts are ``messages`` there) for audit.
    """

    name = "llm"

    def __init__(self, *, family: str | None = None, max_bullets: int = DEFAULT_MAX_BULLETS,
                 **client: Any) -> None:
        self.family = family
        self.max_bullets = max_bullets
        self.caller = ChatCaller(**client)
        self.calls: list[dict[str, Any]] = []

    def observe(self, record: Mapping[str, Any]) -> None:
        """Nothing to remember between episodes: the playbook is the memory."""

    def _ask(self, prompt: str, errors: list[str], what: str) -> dict[str, Any]:
        messages = [{"role": "user", "content": prompt}]
        try:
            response = self.caller.complete(messages)
        except LLMError as exc:
            errors.append(f"{what}: request failed: {exc}")
            return {}
        finally:
            if self.caller.calls:
                entry = dict(self.caller.calls[-1])
                entry["messages"] = messages
                self.calls.append(entry)
            self.caller.calls = []
        content = str(((response.get("choices") or [{}])[0].get("message") or {}).get("content") or "")
        try:
            return extract_json(content)
        except ValueError as exc:
            errors.append(f"{what}: {exc}: {content[:200]!r}")
            return {}

    def reflect(self, record: Mapping[str, Any], playbook: Playbook) -> Reflection:
        """Reflect on one training record, then curate; always returns a :class:`Reflection`."""
        errors: list[str] = []
        book_text = playbook.render(self.family, triggers=True) or "(empty)"
        prompt = load_prompt("reflector.md").safe_substitute(
            family=self.family or record.get("family") or "agent", instruction=record_instruction(record),
            should_abstain=str(bool(record.get("should_abstain"))).lower(), category=record.get("category"),
            w=record.get("w"), evidence_turn=record.get("evidence_turn"), tau=record.get("tau"),
            outcome=record.get("outcome"), trajectory=format_trajectory(record), playbook=book_text)
        found = self._ask(prompt, errors, "reflector")
        tags = found.get("bullet_tags") if isinstance(found.get("bullet_tags"), dict) else {}
        reflection = Reflection(
            task_id=str(record.get("task_id")), diagnosis=str(found.get("diagnosis") or "")[:1000],
            warranted_turn=_int_or_none(found.get("warranted_turn")),
            evidence_turn=_int_or_none(found.get("evidence_turn")), evidence=str(found.get("evidence") or "")[:400],
            tags={str(k): str(v) for k, v in tags.items() if v in ("helpful", "harmful") and playbook.get(str(k))},
            source="llm", errors=errors)
        if not found:
            return reflection
        summary = {k: found.get(k) for k in ("diagnosis", "warranted_turn", "evidence_turn", "evidence", "lesson",
                                             "trigger")}
        prompt = load_prompt("curator.md").safe_substitute(
            family=self.family or record.get("family") or "agent", max_bullets=self.max_bullets,
            playbook=book_text, task_id=record.get("task_id"), reflection=json.dumps(summary, indent=2))
        curated = self._ask(prompt, errors, "curator")
        ops = curated.get("operations")
        if curated and not isinstance(ops, list):
            errors.append("curator: 'operations' is not a list")
            ops = []
        for raw in ops or []:
            try:
                op = Operation.from_dict(self._clean(raw, record))
            except (PlaybookError, TypeError) as exc:
                errors.append(f"curator: dropped operation {str(raw)[:120]}: {exc}")
                continue
            reflection.operations.append(op)
        return reflection

    def _clean(self, raw: Any, record: Mapping[str, Any]) -> Any:
        """Fill what a model usually leaves out (family, sources, default min_turn) before validation."""
        if not isinstance(raw, dict):
            return raw
        op = dict(raw)
        trigger = op.get("trigger")
        if isinstance(trigger, dict):
            trigger = {k: v for k, v in trigger.items() if k in ("pattern", "on", "family", "min_turn")}
            trigger.setdefault("family", self.family)
            if trigger.get("min_turn") is None:
                trigger["min_turn"] = 1
            op["trigger"] = trigger
            Trigger.from_dict(trigger)  # raise here, with the reason, if the model wrote an unusable trigger
        if op.get("op") == "add":
            op.setdefault("sources", [str(record.get("task_id"))])
            if op.get("section") not in SECTIONS:
                raise PlaybookError(f"unknown section {op.get('section')!r}")
        return op
