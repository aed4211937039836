"""Run AbstainQA on AbstentionBench-style records with a corpus supplied by the user.

Records are JSON lines (or one JSON list) of ``{"question", "reference_answers", "should_abstain", "metadata"}``;
the corpus is JSON lines of ``{"id", "title", "text"}`` (``title`` optional) or a plain-text file, one passage per
line. Errors name the file, the record and the field, because these files are written by hand.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentabstain_gym.core.task import SPLITS, Task
from agentabstain_gym.envs.qa.dataset import Passage

#: Categories whose trigger shows only after a search (one probe), so w = 2; every other abstain category is w = 1.
SEARCH_REVEALED_CATEGORIES = frozenset({"answer_unknown"})


@dataclass(frozen=True)
class LoadedQADataset:
    """Same shape as the generated dataset (``passages``, ``tasks``, ``documents()``), read from files."""

    passages: tuple[Passage, ...]
    tasks: tuple[Task, ...]

    def documents(self) -> list[str]:
        """What the index holds per passage: title and text."""
        return [f"{p.title} {p.text}".strip() for p in self.passages]


def _read_json_records(path: Path) -> list[Any]:
    text = path.read_text(encoding="utf-8")
    if text.lstrip().startswith("["):
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise ValueError(f"{path}: not valid JSON ({exc})") from None
        return list(data)
    records = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                records.append(json.loads(line))
            except ValueError as exc:
                raise ValueError(f"{path}:{lineno}: not valid JSON ({exc})") from None
    return records


def load_corpus(path: str | Path) -> tuple[Passage, ...]:
    """Passages from a JSONL/JSON file of ``{id, title, text}`` or a plain-text file (one passage a line)."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"corpus file {path} does not exist")
    if path.suffix not in (".jsonl", ".json"):
        lines = [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        return tuple(Passage(doc_id=f"P{i:06d}", title="", text=line, entity_ids=()) for i, line in enumerate(lines))
    passages = []
    for i, rec in enumerate(_read_json_records(path), start=1):
        if not isinstance(rec, dict) or not isinstance(rec.get("text"), str):
            raise ValueError(f"{path}: record {i}: field 'text' (a string) is missing")
        passages.append(Passage(doc_id=str(rec.get("id", f"P{i - 1:06d}")), title=str(rec.get("title", "")),
                                text=rec["text"], entity_ids=()))
    return tuple(passages)


def load_abstentionbench(questions: str | Path, corpus: str | Path) -> LoadedQADataset:
    """Tasks from AbstentionBench-format records; splits come from ``metadata["split"]`` or default to test."""
    path = Path(questions)
    if not path.exists():
        raise FileNotFoundError(f"questions file {path} does not exist")
    tasks = []
    for i, rec in enumerate(_read_json_records(path), start=1):
        where = f"{path}: record {i}"
        if not isinstance(rec, dict):
            raise ValueError(f"{where}: expected a JSON object")
        question = rec.get("question")
        if not isinstance(question, str) or not question.strip():
            raise ValueError(f"{where}: field 'question' must be a non-empty string")
        should_abstain = rec.get("should_abstain")
        if not isinstance(should_abstain, bool):
            raise ValueError(f"{where}: field 'should_abstain' must be true or false")
        answers = rec.get("reference_answers") or []
        if not isinstance(answers, list) or not all(isinstance(a, str) for a in answers):
            raise ValueError(f"{where}: field 'reference_answers' must be a list of strings or null")
        if not should_abstain and not answers:
            raise ValueError(f"{where}: an answerable record needs 'reference_answers'")
        meta = rec.get("metadata") or {}
        if not isinstance(meta, dict):
            raise ValueError(f"{where}: field 'metadata' must be an object")
        category = str(meta.get("category") or ("abstain" if should_abstain else "answerable"))
        split = str(meta.get("split", "test"))
        if split not in SPLITS:
            raise ValueError(f"{where}: metadata.split {split!r} is not one of {SPLITS}")
        w = None
        if should_abstain:
            w = int(meta.get("w") or (2 if category in SEARCH_REVEALED_CATEGORIES else 1))
        digest = hashlib.sha256(f"{path.name}:{i}:{question}".encode()).hexdigest()[:10]
        tasks.append(Task(task_id=f"qa-{digest}", family="qa", instruction=question.strip(),
                          should_abstain=should_abstain, category=category, split=split,
                          pair_id=meta.get("pair_id"), w=w, evidence=str(meta.get("evidence", "")),
                          payload={"answers": answers, "evidence_entities": [], "metadata": meta}))
    if not tasks:
        raise ValueError(f"{path}: no records")
    return LoadedQADataset(passages=load_corpus(corpus), tasks=tuple(tasks))
