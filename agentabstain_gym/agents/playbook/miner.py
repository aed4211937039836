"""The deterministic trajectory miner: CONVOLVE's reflector and curator without a model.

From a finished *training* record it finds the turn where abstention became warranted (``w``) and the text that
revealed it (the instruction when ``evidence_turn`` is 0, else the observation of turn ``evidence_turn``), and
writes a lesson with a trigger. A lesson must generalise, so its trigger is a token n-gram that

* occurs in the evidence text of at least ``min_support`` training episodes (one episode's entity names never do),
* never occurs in a negative text: the instructions and observations of the solvable twins seen so far, the
  requests of every solvable task of the training split (when the protocol passes them in), and the observations
  an abstain episode showed *before* its evidence (stopping there would be premature).

Reading labels is what learning is; the miner only ever sees the training records the protocol gives it, never a
held-out task. Everything is ordered and tie-broken explicitly, so the same records give the same playbook.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from importlib import resources
from typing import Any

from agentabstain_gym.agents.playbook.book import Playbook, Trigger
from agentabstain_gym.agents.playbook.stops import fired_bullet
from agentabstain_gym.agents.playbook.updater import Operation, Reflection

_TOKEN = re.compile(r"[a-z0-9]+")


def _function_words() -> frozenset[str]:
    text = resources.files("agentabstain_gym").joinpath("data", "playbook", "function_words.txt").read_text("utf-8")
    return frozenset(w for line in text.splitlines() if not line.startswith("#") for w in line.split())


_STOP = _function_words()
MAX_TEXT_CHARS = 8000
NUM = "#"


def tokens(text: str) -> list[str]:
    """Lower-case alphanumeric tokens; numbers become ``#`` so a year in one task can match another's."""
    return [NUM if t.isdigit() else t for t in _TOKEN.findall(text[:MAX_TEXT_CHARS].lower())]


def ngrams(text: str, max_n: int = 3) -> set[tuple[str, ...]]:
    """Every 1..max_n-gram of the text's tokens that has at least one content word."""
    toks = tokens(text)
    out: set[tuple[str, ...]] = set()
    for n in range(1, max_n + 1):
        for i in range(len(toks) - n + 1):
            gram = tuple(toks[i:i + n])
            if any(t not in _STOP and t != NUM for t in gram):
                out.add(gram)
    return out


def pattern_for(gram: tuple[str, ...]) -> str:
    """A regex matching the n-gram in raw text (any non-word run between tokens, ``#`` = any number)."""
    parts = [r"\d+" if t == NUM else re.escape(t) for t in gram]
    return r"\b" + r"\W+".join(parts) + r"\b"


def phrase(gram: tuple[str, ...]) -> str:
    """An n-gram as the phrase it stands for."""
    return " ".join(gram)


def record_instruction(record: Mapping[str, Any]) -> str:
    """The instruction of a record (from ``extras``, where the env keeps it)."""
    extras = record.get("extras") or {}
    return str(extras.get("instruction") or record.get("instruction") or "")


def evidence_of(record: Mapping[str, Any]) -> tuple[str, str, int] | None:
    """(source, text, min_turn) that revealed infeasibility in a should-abstain record, or None if the trajectory
    never showed it. Source is ``instruction`` (evidence turn 0) or ``observation``."""
    ev = record.get("evidence_turn")
    steps = record.get("steps") or []
    if ev == 0:
        return "instruction", record_instruction(record), 1
    if isinstance(ev, int) and 1 <= ev <= len(steps):
        return "observation", str(steps[ev - 1].get("observation", "")), ev + 1
    return None


class TrajectoryMiner:
    """Reflects on one training record at a time and proposes add / update / merge / delete operations.

    It remembers the evidence n-grams of every abstain episode (positives) and the texts of every solvable one
    (negatives) it has been shown, which is how a lesson can be "shared by several episodes and absent from the
    twins". ``observe`` adds a record to that memory without proposing anything (e.g. validation twins).
    """

    name = "miner"

    def __init__(self, *, max_n: int = 3, min_support: int = 2, family: str | None = None) -> None:
        if max_n < 1 or min_support < 1:
            raise ValueError("max_n and min_support must be >= 1")
        self.max_n, self.min_support, self.family = max_n, min_support, family
        self.positives: dict[str, dict[str, set[tuple[str, ...]]]] = {"instruction": {}, "observation": {}}
        self.min_turns: dict[str, int] = {}
        self.categories: dict[str, str] = {}
        self.negatives: dict[str, set[tuple[str, ...]]] = {"instruction": set(), "observation": set()}

    # ----- memory ---------------------------------------------------------------------------------------------------
    def observe(self, record: Mapping[str, Any]) -> None:
        """Add a finished record's texts to the miner's memory."""
        steps = record.get("steps") or []
        if not record.get("should_abstain"):
            self.negatives["instruction"] |= ngrams(record_instruction(record), self.max_n)
            for step in steps:
                self.negatives["observation"] |= ngrams(str(step.get("observation", "")), self.max_n)
            return
        found = evidence_of(record)
        if found is None:
            return
        source, text, min_turn = found
        before: set[tuple[str, ...]] = set()
        for step in steps[: min_turn - 2] if source == "observation" else ():
            before |= ngrams(str(step.get("observation", "")), self.max_n)
        self.negatives["observation"] |= before
        task_id = str(record["task_id"])
        grams = ngrams(text, self.max_n) - before
        if source == "observation":  # what the agent's own action put there (an echoed query) is no evidence
            said = set(tokens(str(steps[min_turn - 2].get("action", "")))) - {NUM}
            grams = {g for g in grams if not said.intersection(g)}
        self.positives[source][task_id] = grams
        self.min_turns[task_id] = min_turn
        self.categories[task_id] = str(record.get("category"))

    def observe_solvable_requests(self, instructions: Iterable[str]) -> None:
        """Add requests of tasks known to be doable (e.g. every solvable task of the training split, no rollout
        needed) to the instruction negatives, so a trigger cannot be a phrase ordinary requests use too."""
        for text in instructions:
            self.negatives["instruction"] |= ngrams(text, self.max_n)

    def support(self, source: str, gram: tuple[str, ...]) -> list[str]:
        """Training task ids whose evidence contains ``gram``, sorted."""
        return sorted(t for t, grams in self.positives[source].items() if gram in grams)

    def candidates(self, source: str, task_id: str) -> list[tuple[tuple[str, ...], list[str]]]:
        """This episode's n-grams shared by enough positives and absent from every negative, best first."""
        neg = self.negatives[source]
        out = []
        for gram in self.positives[source].get(task_id, ()):
            if gram in neg:
                continue
            sup = self.support(source, gram)
            if len(sup) >= self.min_support:
                out.append((gram, sup))
        out.sort(key=lambda c: (-len(c[1]), -len(c[0]), c[0]))
        return out

    # ----- lessons ----------------------------------------------------------------------------------------------
    def _lesson(self, source: str, gram: tuple[str, ...], sources: list[str], min_turn: int) -> str:
        cats = sorted({self.categories.get(t, "?") for t in sources})
        if source == "instruction":
            return (f'Abstain before acting when the request contains "{phrase(gram)}": {len(sources)} training '
                    f"requests worded so could not be carried out ({', '.join(cats)}), and no doable twin used it.")
        return (f'Abstain as soon as an observation shows "{phrase(gram)}" (from turn {min_turn}): in '
                f"{len(sources)} training tasks ({', '.join(cats)}) it meant the goal could not be reached; "
                "more probing did not help.")

    def _gram_of(self, pattern: str) -> tuple[str, ...] | None:
        """The n-gram a miner-written pattern encodes (None for other patterns)."""
        if not (pattern.startswith(r"\b") and pattern.endswith(r"\b")):
            return None
        parts = pattern[2:-2].split(r"\W+")
        gram = tuple(NUM if p == r"\d+" else re.sub(r"\\(.)", r"\1", p) for p in parts)
        return gram if all(_TOKEN.fullmatch(t) or t == NUM for t in gram) else None

    def _refresh(self, book: Playbook, source: str, task_id: str) -> list[Operation]:
        """Update ops for miner bullets whose n-gram this episode also shows (support grew)."""
        ops = []
        grams = self.positives[source].get(task_id, set())
        for b in book.triggered():
            if b.trigger is None or b.trigger.on != source:
                continue
            gram = self._gram_of(b.trigger.pattern)
            if gram is None or gram not in grams or task_id in b.sources:
                continue
            sup = sorted(set(self.support(source, gram)) | set(b.sources))
            min_turn = min([b.trigger.min_turn] + [self.min_turns.get(t, b.trigger.min_turn) for t in sup])
            trigger = Trigger(b.trigger.pattern, source, b.trigger.family, min_turn)
            ops.append(Operation("update", bullet_id=b.id, lesson=self._lesson(source, gram, sup, min_turn),
                                 trigger=trigger, sources=tuple(sup)))
        return ops

    def _merges(self, book: Playbook, pending: Iterable[Operation]) -> list[Operation]:
        """Merge a trigger bullet into another of the same source whose sources include all of its own."""
        sources = {b.id: set(b.sources) for b in book.bullets}
        for op in pending:
            if op.op == "update" and op.bullet_id in sources:
                sources[op.bullet_id] |= set(op.sources)
        ops, gone = [], set()
        bullets = [(b, b.trigger.on) for b in book.triggered() if b.trigger is not None]
        for small, small_on in bullets:
            for big, big_on in bullets:
                if small is big or small.id in gone or big.id in gone or small_on != big_on:
                    continue
                a, b = sources[small.id], sources[big.id]
                if a and a <= b and (a < b or small.id > big.id):
                    ops.append(Operation("merge", bullet_id=big.id, other_id=small.id))
                    gone.add(small.id)
        return ops

    def _invalidated(self, book: Playbook) -> list[Operation]:
        """Delete ops for miner bullets whose n-gram a negative text has shown since they were written: the rule
        that admitted them ("absent from every solvable text") no longer holds."""
        ops = []
        for b in book.triggered():
            gram = self._gram_of(b.trigger.pattern) if b.trigger is not None else None
            if gram is not None and b.trigger is not None and gram in self.negatives[b.trigger.on]:
                ops.append(Operation("delete", bullet_id=b.id))
        return ops

    # ----- the reflector interface --------------------------------------------------------------------------------
    def reflect(self, record: Mapping[str, Any], playbook: Playbook) -> Reflection:
        """Learn from one finished training record; returns the diagnosis and the proposed operations."""
        self.observe(record)
        task_id = str(record["task_id"])
        fired = fired_bullet(record)
        invalid = self._invalidated(playbook)
        if not record.get("should_abstain"):
            ops = list(invalid)
            bullet = playbook.get(fired) if fired else None
            if bullet is not None and bullet.trigger is not None:
                ops.append(Operation(
                    "add", section="over_abstention", sources=(task_id,),
                    lesson=f'Do not abstain just because the {bullet.trigger.on} matches /{bullet.trigger.pattern}/ '
                           f"({bullet.id}): a task that could be done showed it too."))
            return Reflection(task_id, diagnosis="solvable task: its texts are negatives" + (
                f"; bullet {fired} stopped it wrongly" if fired else ""), operations=ops)
        found = evidence_of(record)
        w, tau = record.get("w"), record.get("tau")
        if found is None:
            return Reflection(task_id, diagnosis="the trajectory never showed the evidence; nothing to learn",
                              warranted_turn=w)
        source, text, min_turn = found
        refl = Reflection(task_id, warranted_turn=w, evidence_turn=record.get("evidence_turn"),
                          evidence=text[:400])
        if fired is not None and tau == w:
            refl.diagnosis = f"timely: bullet {fired} stopped at w={w}"
            return refl
        gone = {op.bullet_id for op in invalid}
        ops = invalid + [op for op in self._refresh(playbook, source, task_id) if op.bullet_id not in gone]
        covered = any(
            b.id not in gone and b.trigger is not None and b.trigger.on == source
            and b.trigger.matches(text, family=self.family, turn=max(min_turn, b.trigger.min_turn))
            for b in playbook.triggered(self.family))
        if not covered:
            found_gram = self.candidates(source, task_id)
            if found_gram:
                gram, sup = found_gram[0]
                turn = min(self.min_turns[t] for t in sup)
                ops.append(Operation("add", section="early_abstain" if source == "instruction" else "late_abstain",
                                     lesson=self._lesson(source, gram, sup, turn),
                                     trigger=Trigger(pattern_for(gram), source, self.family, turn),
                                     sources=tuple(sup)))
        ops.extend(self._merges(playbook, ops))
        late = "never abstained" if tau is None else f"abstained at turn {tau}"
        refl.diagnosis = (f"abstention was warranted at turn {w} ({source} evidence); the agent {late}; "
                          f"{len(ops)} operation(s) proposed")
        refl.operations = ops
        return refl
