"""The label-reading oracle of AbstainQA-v0 (tests only): the shortest correct action sequence for each task.

It reads the task's label and payload, so it is never an agent; it shows that every task can be done in the turns
its ``w`` promises: answerable -> one search and the gold answer; w = 1 -> abstain at once; w = 2 -> one search
that shows the evidence, then abstain.
"""

from __future__ import annotations

from agentabstain_gym.core.task import Task
from agentabstain_gym.envs.qa.dataset import QADataset
from agentabstain_gym.envs.qa.knowledge import attribute_spec

_REASONS = {
    "answer_unknown": "the passages about this entity do not give that fact",
    "false_premise": "the question rests on something that cannot be true",
    "subjective": "this asks for a judgement, not a fact",
    "underspecified_context": "two entities share this name and the question does not say which",
    "underspecified_intent": "the question does not say which fact it wants",
}


def search_query(task: Task, dataset: QADataset) -> str:
    """A query that surfaces what the task needs: name (+ disambiguator) + attribute keyword, or the bare name."""
    entity = dataset.entities[task.payload["entity_ids"][0]]
    if task.should_abstain:
        return str(task.payload["name"])
    keyword = attribute_spec(entity.kind, task.payload["attribute"])["keyword"]
    name = entity.title.replace("(", "").replace(")", "")
    return f"{name} {keyword}"


def oracle_actions(task: Task, dataset: QADataset) -> list[str]:
    """The actions of a perfect agent: search and answer, abstain at once (w = 1), or search then abstain (w =
    2).
    """
    if not task.should_abstain:
        return [f"search[{search_query(task, dataset)}]", f"answer[{task.payload['answers'][0]}]"]
    reason = _REASONS.get(task.category, "this cannot be answered as asked")
    if task.w == 1:
        return [f"abstain[{reason}]"]
    return [f"search[{search_query(task, dataset)}]", f"abstain[{reason}]"]
