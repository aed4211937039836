"""The CONVOLVE playbook (docs/design.md, section 8): sections of stopping lessons, each optionally carrying a machine-readable trigger.

One playbook serves two consumers: :meth:`Playbook.render` turns it into prompt text for an LLM, and the triggers
drive executable stops (:mod:`.stops`) for any agent. Bullets render as ``[<id>] helpful=<n> harmful=<n> ::
<lesson>``. The JSON form is versioned (``format``) and canonical (sorted keys), so a saved playbook is
byte-for-byte reproducible.
"""

from __future__ import annotations

import copy
import json
import os
import re
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

FORMAT = "agentabstain-playbook/1"
#: Section key -> heading shown in prompts, in the order they are rendered.
SECTIONS: dict[str, str] = {
    "early_abstain": "Early-abstain signals (the request alone shows the task cannot be done)",
    "late_abstain": "Late-abstain signals (an observation shows the task has become impossible)",
    "over_abstention": "Over-abstention warnings (cues that do NOT justify stopping)",
    "general": "General lessons",
}
TRIGGER_SOURCES = ("instruction", "observation")
#: Longest trigger pattern accepted (patterns may come from a model; long ones are refused, not run).
MAX_PATTERN_CHARS = 300
#: Text scanned by a trigger; longer observations are cut, which bounds matching time.
MAX_MATCH_CHARS = 20_000
_BULLET_LINE = re.compile(r"^\[(?P<id>[^\]]+)\] helpful=(?P<h>\d+) harmful=(?P<x>\d+) :: (?P<lesson>.*)$")


class PlaybookError(ValueError):
    """A playbook file or bullet that cannot be used (bad JSON, unknown section, invalid trigger)."""


@lru_cache(maxsize=4096)
def _compile(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


@dataclass(frozen=True)
class Trigger:
    """When a lesson fires: ``pattern`` (a regex, case-insensitive) found in the ``on`` text, for ``family`` (None =
    any), from turn ``min_turn`` on (the turn whose action the ABSTAIN replaces; 1 = before the first action)."""

    pattern: str
    on: str = "observation"
    family: str | None = None
    min_turn: int = 1

    def __post_init__(self) -> None:
        if self.on not in TRIGGER_SOURCES:
            raise PlaybookError(f"trigger 'on' must be one of {TRIGGER_SOURCES}, got {self.on!r}")
        if not isinstance(self.pattern, str) or not self.pattern or len(self.pattern) > MAX_PATTERN_CHARS:
            raise PlaybookError(f"trigger pattern must be a non-empty string of at most {MAX_PATTERN_CHARS} chars")
        if isinstance(self.min_turn, bool) or not isinstance(self.min_turn, int) or self.min_turn < 1:
            raise PlaybookError(f"trigger min_turn must be an int >= 1, got {self.min_turn!r}")
        try:
            _compile(self.pattern)
        except re.error as exc:
            raise PlaybookError(f"trigger pattern {self.pattern!r} is not a valid regex: {exc}") from None

    def matches(self, text: str, *, family: str | None, turn: int) -> bool:
        """Whether this trigger fires on ``text`` at ``turn`` in ``family``."""
        if self.family is not None and family is not None and self.family != family:
            return False
        if turn < self.min_turn:
            return False
        return _compile(self.pattern).search(text[:MAX_MATCH_CHARS]) is not None

    def to_dict(self) -> dict[str, Any]:
        """The trigger as a plain ``dict`` (JSON)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Any) -> Trigger:
        """A trigger from its JSON form; unknown fields are a :class:`PlaybookError`."""
        if not isinstance(data, dict):
            raise PlaybookError(f"a trigger is a JSON object, got {type(data).__name__}")
        unknown = set(data) - {"pattern", "on", "family", "min_turn"}
        if unknown:
            raise PlaybookError(f"unknown trigger field(s) {sorted(unknown)}")
        return cls(**data)


@dataclass
class Bullet:
    """One lesson. ``sources`` are the training task ids it was learned from (for audit, never held-out ids)."""

    id: str
    section: str
    lesson: str
    helpful: int = 0
    harmful: int = 0
    trigger: Trigger | None = None
    sources: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.section not in SECTIONS:
            raise PlaybookError(f"unknown section {self.section!r}; sections are {list(SECTIONS)}")
        self.lesson = " ".join(str(self.lesson).split())
        if not self.lesson:
            raise PlaybookError(f"bullet {self.id!r} has an empty lesson")

    @property
    def score(self) -> int:
        """helpful minus harmful: when the playbook is over budget, the lowest score is evicted first."""
        return self.helpful - self.harmful

    def render(self) -> str:
        """The bullet's one-line text form, ``[id] helpful=n harmful=n :: lesson``."""
        return f"[{self.id}] helpful={self.helpful} harmful={self.harmful} :: {self.lesson}"

    def to_dict(self) -> dict[str, Any]:
        """The bullet as a plain ``dict`` (JSON), trigger included."""
        data = asdict(self)
        data["trigger"] = self.trigger.to_dict() if self.trigger else None
        return data

    @classmethod
    def from_dict(cls, data: Any) -> Bullet:
        """A bullet from its JSON form; bad fields are a :class:`PlaybookError`."""
        if not isinstance(data, dict):
            raise PlaybookError(f"a bullet is a JSON object, got {type(data).__name__}")
        data = dict(data)
        trigger = data.pop("trigger", None)
        try:
            return cls(trigger=Trigger.from_dict(trigger) if trigger else None, **data)
        except TypeError as exc:
            raise PlaybookError(f"bad bullet {data.get('id')!r}: {exc}") from None


def parse_bullet_line(line: str) -> tuple[str, int, int, str] | None:
    """(id, helpful, harmful, lesson) from a rendered bullet line, or None (for reading a playbook back from text)."""
    m = _BULLET_LINE.match(line.strip())
    return (m["id"], int(m["h"]), int(m["x"]), m["lesson"]) if m else None


@dataclass
class Playbook:
    """Bullets in insertion order; ``version`` counts updates; ``next_id`` makes ids deterministic (no uuid)."""

    bullets: list[Bullet] = field(default_factory=list)
    version: int = 0
    next_id: int = 1
    meta: dict[str, Any] = field(default_factory=dict)

    # ----- access ---------------------------------------------------------------------------------------------------
    def get(self, bullet_id: str) -> Bullet | None:
        """The bullet with this id, or None."""
        for b in self.bullets:
            if b.id == bullet_id:
                return b
        return None

    def section(self, name: str) -> list[Bullet]:
        """The bullets of one section, in playbook order."""
        return [b for b in self.bullets if b.section == name]

    def triggered(self, family: str | None = None) -> list[Bullet]:
        """Bullets with a trigger that applies to ``family``, in order."""
        return [b for b in self.bullets if b.trigger is not None
                and (family is None or b.trigger.family in (None, family))]

    def new_id(self, section: str) -> str:
        """The next bullet id for ``section`` (a counter, never random, so runs repeat)."""
        prefix = {"early_abstain": "early", "late_abstain": "late", "over_abstention": "over"}.get(section, "gen")
        bullet_id = f"{prefix}-{self.next_id:04d}"
        self.next_id += 1
        return bullet_id

    def copy(self) -> Playbook:
        """An independent deep copy (updates never change the playbook they start from)."""
        return copy.deepcopy(self)

    def __len__(self) -> int:
        return len(self.bullets)

    # ----- text for prompts ---------------------------------------------------------------------------------------
    def render(self, family: str | None = None, *, triggers: bool = False) -> str:
        """The playbook as prompt text: one heading per non-empty section, one line per bullet. Bullets whose trigger
        is for another family are left out; ``triggers=True`` appends each trigger in words."""
        parts: list[str] = []
        for key, heading in SECTIONS.items():
            lines = []
            for b in self.section(key):
                if family is not None and b.trigger is not None and b.trigger.family not in (None, family):
                    continue
                line = b.render()
                if triggers and b.trigger is not None:
                    line += f" (fires when the {b.trigger.on} matches /{b.trigger.pattern}/" + (
                        f", from turn {b.trigger.min_turn}" if b.trigger.min_turn > 1 else "") + ")"
                lines.append(line)
            if lines:
                parts.append(f"## {heading}\n" + "\n".join(lines))
        return "\n\n".join(parts)

    # ----- JSON ---------------------------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The playbook as its JSON file form (format, version, next id, meta, bullets)."""
        return {"format": FORMAT, "version": self.version, "next_id": self.next_id, "meta": self.meta,
                "bullets": [b.to_dict() for b in self.bullets]}

    def to_json(self) -> str:
        """Canonical JSON (sorted keys, fixed separators): equal playbooks give equal bytes."""
        return json.dumps(self.to_dict(), sort_keys=True, indent=2, ensure_ascii=False) + "\n"

    @classmethod
    def from_dict(cls, data: Any) -> Playbook:
        """A playbook from its JSON form; a wrong format or duplicate ids are a :class:`PlaybookError`."""
        if not isinstance(data, dict):
            raise PlaybookError("a playbook is a JSON object")
        if data.get("format") != FORMAT:
            raise PlaybookError(f"unsupported playbook format {data.get('format')!r}; expected {FORMAT!r}")
        bullets = [Bullet.from_dict(b) for b in data.get("bullets", [])]
        ids = [b.id for b in bullets]
        if len(set(ids)) != len(ids):
            raise PlaybookError("duplicate bullet ids")
        return cls(bullets=bullets, version=int(data.get("version", 0)), next_id=int(data.get("next_id", 1)),
                   meta=dict(data.get("meta") or {}))

    @classmethod
    def from_json(cls, text: str) -> Playbook:
        """A playbook from JSON text; invalid JSON is a :class:`PlaybookError`."""
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise PlaybookError(f"playbook is not valid JSON: {exc}") from None
        return cls.from_dict(data)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write atomically (temp file + rename), so a crash never leaves half a playbook."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(self.to_json(), encoding="utf-8")
        os.replace(tmp, path)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Playbook:
        """A playbook from a JSON file."""
        return cls.from_json(Path(path).read_text(encoding="utf-8"))
