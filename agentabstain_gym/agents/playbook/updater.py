"""The deterministic updater U(playbook, trajectory, reflection) of CONVOLVE.

A reflector (the model-free miner or an LLM reflector + curator) proposes operations; U applies them the same way
whoever proposed them, so a playbook's history is reproducible from its inputs:

* **counts** from the trajectory itself: the bullet whose stop ended the episode (read from the ABSTAIN reason) is
  *helpful* if the episode should have been abstained and the ABSTAIN came at or after w, else *harmful*
  (premature, or a task that could have been done). A reflection's ``tags`` credit bullets that did not fire
  (prompt-only lessons an LLM says it used).
* **operations**: ``add`` (a duplicate of an existing lesson or trigger is skipped), ``update`` (new lesson text,
  trigger or sources), ``merge`` (two bullets become one: patterns joined as alternatives, counts summed),
  ``delete``.
* **prune**: a bullet with a trigger that did at least as much harm as good (harmful >= helpful, harmful > 0) is
  removed: a wrong stop costs a task that could have been done, so a coin-flip stop is not worth keeping.
* **budget**: at most ``max_bullets`` bullets and ``max_chars`` rendered characters; the lowest-scoring bullets go
  first (ties: the newest first, so established lessons stay).

Invalid operations are skipped and reported in the returned :class:`UpdateResult`, never raised: a curator's
mistake must not end a training run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from agentabstain_gym.agents.playbook.book import SECTIONS, Bullet, Playbook, PlaybookError, Trigger
from agentabstain_gym.agents.playbook.stops import fired_bullet

OPS = ("add", "update", "merge", "delete")
DEFAULT_MAX_BULLETS = 40
DEFAULT_MAX_CHARS = 6000


@dataclass(frozen=True)
class Operation:
    """One curator edit. ``add`` needs ``section`` and ``lesson``; ``update``/``delete`` need ``bullet_id``;
    ``merge`` needs ``bullet_id`` (kept) and ``other_id`` (absorbed)."""

    op: str
    bullet_id: str | None = None
    other_id: str | None = None
    section: str | None = None
    lesson: str | None = None
    trigger: Trigger | None = None
    sources: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The operation as a plain ``dict`` (JSON)."""
        return {"op": self.op, "bullet_id": self.bullet_id, "other_id": self.other_id, "section": self.section,
                "lesson": self.lesson, "trigger": self.trigger.to_dict() if self.trigger else None,
                "sources": list(self.sources)}

    @classmethod
    def from_dict(cls, data: Any) -> Operation:
        """Build from JSON (e.g. a curator's reply); raises :class:`PlaybookError` on anything malformed."""
        if not isinstance(data, Mapping):
            raise PlaybookError("an operation is a JSON object")
        op = str(data.get("op", "")).lower()
        if op not in OPS:
            raise PlaybookError(f"unknown operation {data.get('op')!r}; operations are {OPS}")
        trigger = data.get("trigger")
        sources = data.get("sources") or ()
        if not isinstance(sources, list | tuple) or not all(isinstance(s, str) for s in sources):
            raise PlaybookError("sources must be a list of task ids")

        def text(key: str) -> str | None:
            value = data.get(key)
            return None if value is None else str(value)

        return cls(op=op, bullet_id=text("bullet_id"), other_id=text("other_id"), section=text("section"),
                   lesson=text("lesson"), trigger=Trigger.from_dict(trigger) if trigger else None,
                   sources=tuple(sources))


@dataclass
class Reflection:
    """What a reflector concluded about one trajectory: where abstention became warranted, the evidence, and the
    proposed operations. ``tags`` maps bullet ids to ``"helpful"``/``"harmful"`` for bullets that did not fire."""

    task_id: str
    diagnosis: str = ""
    warranted_turn: int | None = None
    evidence_turn: int | None = None
    evidence: str = ""
    operations: list[Operation] = field(default_factory=list)
    tags: dict[str, str] = field(default_factory=dict)
    source: str = "miner"
    errors: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The reflection as a plain ``dict`` (JSON), tags sorted."""
        return {"task_id": self.task_id, "diagnosis": self.diagnosis, "warranted_turn": self.warranted_turn,
                "evidence_turn": self.evidence_turn, "evidence": self.evidence,
                "operations": [o.to_dict() for o in self.operations], "tags": dict(sorted(self.tags.items())),
                "source": self.source, "errors": list(self.errors)}


@dataclass
class UpdateResult:
    """The new playbook and a log of what U did (applied operations, skipped ones with the reason, evictions)."""

    playbook: Playbook
    applied: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def credit(trajectory: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """(bullet id, "helpful" | "harmful") for the bullet whose stop ended ``trajectory``, or (None, None)."""
    bullet_id = fired_bullet(trajectory)
    if bullet_id is None:
        return None, None
    tau, w = trajectory.get("tau"), trajectory.get("w")
    good = bool(trajectory.get("should_abstain")) and tau is not None and w is not None and tau >= w
    return bullet_id, "helpful" if good else "harmful"


def _duplicate(playbook: Playbook, op: Operation) -> Bullet | None:
    lesson = " ".join(str(op.lesson).split()).casefold()
    for b in playbook.bullets:
        if b.section == op.section and b.lesson.casefold() == lesson:
            return b
        if op.trigger is not None and b.trigger is not None and b.trigger.pattern == op.trigger.pattern \
                and b.trigger.on == op.trigger.on:
            return b
    return None


def _merged_trigger(a: Trigger | None, b: Trigger | None) -> Trigger | None:
    if a is None or b is None:
        return a or b
    if a.on != b.on:
        raise PlaybookError("cannot merge triggers that read different texts")
    pattern = a.pattern if a.pattern == b.pattern else f"(?:{a.pattern})|(?:{b.pattern})"
    family = a.family if a.family == b.family else None
    return Trigger(pattern=pattern, on=a.on, family=family, min_turn=min(a.min_turn, b.min_turn))


def _apply(book: Playbook, op: Operation) -> str:
    """Apply one operation in place; returns a log line, raises PlaybookError when it cannot be applied."""
    if op.op == "add":
        if op.section not in SECTIONS or not op.lesson or not op.lesson.strip():
            raise PlaybookError(f"add needs a known section and a lesson (section {op.section!r})")
        dup = _duplicate(book, op)
        if dup is not None:
            dup.sources = sorted(set(dup.sources) | set(op.sources))
            return f"add skipped: duplicate of {dup.id}"
        bullet = Bullet(id=book.new_id(op.section), section=op.section, lesson=op.lesson, trigger=op.trigger,
                        sources=sorted(set(op.sources)))
        book.bullets.append(bullet)
        return f"add {bullet.id}"
    target = book.get(op.bullet_id or "")
    if target is None:
        raise PlaybookError(f"{op.op}: no bullet {op.bullet_id!r}")
    if op.op == "delete":
        book.bullets.remove(target)
        return f"delete {target.id}"
    if op.op == "update":
        if op.lesson is not None and op.lesson.strip():
            target.lesson = " ".join(op.lesson.split())
        if op.trigger is not None:
            target.trigger = op.trigger
        if op.section is not None:
            if op.section not in SECTIONS:
                raise PlaybookError(f"update: unknown section {op.section!r}")
            target.section = op.section
        target.sources = sorted(set(target.sources) | set(op.sources))
        return f"update {target.id}"
    other = book.get(op.other_id or "")
    if other is None or other is target:
        raise PlaybookError(f"merge: no second bullet {op.other_id!r}")
    target.trigger = _merged_trigger(target.trigger, other.trigger)
    target.helpful += other.helpful
    target.harmful += other.harmful
    target.sources = sorted(set(target.sources) | set(other.sources) | set(op.sources))
    if op.lesson is not None and op.lesson.strip():
        target.lesson = " ".join(op.lesson.split())
    book.bullets.remove(other)
    return f"merge {other.id} into {target.id}"


def _evict_order(book: Playbook) -> list[Bullet]:
    """Bullets in the order the budget removes them: lowest score, then fewest helpful, then newest."""
    index = {b.id: i for i, b in enumerate(book.bullets)}
    return sorted(book.bullets, key=lambda b: (b.score, b.helpful, -index[b.id]))


def update(playbook: Playbook, trajectory: Mapping[str, Any] | None, reflection: Reflection | None, *,
           max_bullets: int = DEFAULT_MAX_BULLETS, max_chars: int = DEFAULT_MAX_CHARS,
           prune: bool = True) -> UpdateResult:
    """U(c, trajectory, reflection): a new playbook (the input is not modified) with ``version`` + 1."""
    if max_bullets < 0 or max_chars < 0:
        raise ValueError("max_bullets and max_chars must be >= 0")
    book = playbook.copy()
    result = UpdateResult(book)
    fired = None
    if trajectory is not None:
        fired, verdict = credit(trajectory)
        bullet = book.get(fired) if fired else None
        if bullet is not None:
            if verdict == "helpful":
                bullet.helpful += 1
            else:
                bullet.harmful += 1
            result.applied.append(f"{verdict} {bullet.id}")
    if reflection is not None:
        for bullet_id, tag in sorted(reflection.tags.items()):
            bullet = book.get(bullet_id)
            if bullet is None or bullet_id == fired or tag not in ("helpful", "harmful"):
                result.skipped.append(f"tag {bullet_id}={tag}")
                continue
            setattr(bullet, tag, getattr(bullet, tag) + 1)
            result.applied.append(f"{tag} {bullet_id}")
        for op in reflection.operations:
            try:
                result.applied.append(_apply(book, op))
            except PlaybookError as exc:
                result.skipped.append(f"{op.op}: {exc}")
    if prune:
        for bullet in [b for b in book.bullets if b.trigger is not None and 0 < b.harmful >= b.helpful]:
            book.bullets.remove(bullet)
            result.applied.append(f"prune {bullet.id} (harmful {bullet.harmful} >= helpful {bullet.helpful})")
    for bullet in _evict_order(book):
        if len(book.bullets) <= max_bullets and len(book.render()) <= max_chars:
            break
        book.bullets.remove(bullet)
        result.applied.append(f"evict {bullet.id} (budget)")
    book.version = playbook.version + 1
    return result
