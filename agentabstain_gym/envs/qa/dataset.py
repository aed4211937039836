"""The public entry point of AbstainQA-v0's data: world, corpus and questions for one seed, built in well under 2 s.

:func:`build_dataset` is cached per process, so every env over the same seed shares one dataset (and, through
:meth:`QADataset.documents`, one search index). Same seed -> byte-identical passages and tasks in any process
(:meth:`QADataset.fingerprint` checks it).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from functools import lru_cache

from agentabstain_gym.core.task import Task
from agentabstain_gym.envs.qa.corpus import Corpus, Passage, render_corpus
from agentabstain_gym.envs.qa.knowledge import Entity, KnowledgeBase, generate_kb
from agentabstain_gym.envs.qa.questions import CATEGORIES, make_tasks

__all__ = ["CATEGORIES", "Passage", "QADataset", "build_dataset"]

#: Entities per question pair below which the default world size (2,400) grows, so pairs never run out.
_ENTITIES_PER_PAIR = 4.8


class QADataset:
    """The generated world (``entities``), its passages and its tasks; ``facts`` maps a doc id to the
    (entity id, attribute) facts that passage states (for tests and reports, never shown to agents)."""

    def __init__(self, seed: int, kb: KnowledgeBase, corpus: Corpus, tasks: tuple[Task, ...]) -> None:
        self.seed = seed
        self.kb = kb
        self.entities: Mapping[str, Entity] = kb.entities
        self.passages: tuple[Passage, ...] = corpus.passages
        self.facts = corpus.facts
        self.tasks = tasks
        self._documents: list[str] | None = None

    def documents(self) -> list[str]:
        """What gets indexed: ``title + " " + text`` per passage, index-aligned with :attr:`passages`."""
        if self._documents is None:
            self._documents = [f"{p.title} {p.text}" for p in self.passages]
        return list(self._documents)

    def canonical(self) -> str:
        """A canonical JSON serialisation of passages and tasks (what the fingerprint hashes)."""
        passages = [[p.doc_id, p.title, p.text, list(p.entity_ids)] for p in self.passages]
        tasks = [[t.task_id, t.instruction, t.should_abstain, t.category, t.split, t.pair_id, t.w, t.evidence,
                  t.payload] for t in self.tasks]
        return json.dumps({"seed": self.seed, "passages": passages, "tasks": tasks}, sort_keys=True,
                          ensure_ascii=False, separators=(",", ":"))

    def fingerprint(self) -> str:
        """sha256 of :meth:`canonical`: equal datasets in any process have equal fingerprints."""
        return hashlib.sha256(self.canonical().encode("utf-8")).hexdigest()

    def task(self, task_id: str) -> Task:
        """The task with this id (``KeyError`` if there is none)."""
        for t in self.tasks:
            if t.task_id == task_id:
                return t
        raise KeyError(task_id)

    def __repr__(self) -> str:
        return (f"QADataset(seed={self.seed}, entities={len(self.entities)}, passages={len(self.passages)}, "
                f"tasks={len(self.tasks)})")


@lru_cache(maxsize=8)
def build_dataset(seed: int = 0, n_pairs: int = 500) -> QADataset:
    """World, corpus and ``2 * n_pairs`` tasks for ``seed`` (cached: the same object for the same arguments)."""
    if n_pairs < 1:
        raise ValueError(f"n_pairs must be at least 1, got {n_pairs}")
    n_entities = max(2400, int(_ENTITIES_PER_PAIR * n_pairs))
    n_collisions = max(110, n_pairs // len(CATEGORIES) + 10)
    kb = generate_kb(seed, n_entities=n_entities, n_collisions=n_collisions)
    corpus = render_corpus(kb, seed, mentions_per_entity=1.25)
    return QADataset(seed, kb, corpus, make_tasks(kb, corpus, seed, n_pairs))
