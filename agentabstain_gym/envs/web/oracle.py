"""The label-reading oracle of AbstainWebShop-v1 (tests only): the shortest action plan for each task.

It reads the task's label and goal, so it is never an agent. It shows that every task can be done in the turns its
``w`` promises: a solvable goal -> one search, paging to the first product that earns 1.0, its options, buy;
w = 1 -> abstain at once; Missing Target -> one search (the evidence), then abstain.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentabstain_gym.core.search_index import SearchIndex
from agentabstain_gym.core.task import Task
from agentabstain_gym.envs.web.dataset import WebDataset
from agentabstain_gym.envs.web.goals import join_phrases
from agentabstain_gym.envs.web.matching import Goal
from agentabstain_gym.envs.web.pages import RESULTS_PER_PAGE

TOP_RESULTS = 50


@dataclass(frozen=True)
class Plan:
    actions: list[str]
    query: str
    rank: int | None  # position of the bought product in the results (None when nothing is bought)


def queries(task: Task, goal: Goal) -> list[str]:
    """What the oracle tries, in order: the instruction itself, then the goal's words."""
    words = f"{goal.product_type} {join_phrases(goal.attributes)} {' '.join(v for _, v in goal.options)}"
    return [task.instruction, words]


def search(dataset: WebDataset, index: SearchIndex, query: str, hidden: frozenset[int]) -> list[int]:
    hits = index.search(query, k=TOP_RESULTS + len(hidden))
    return [pos for pos, _ in hits if pos not in hidden][:TOP_RESULTS]


def plan(task: Task, dataset: WebDataset, index: SearchIndex, max_turns: int = 10) -> Plan:
    goal = dataset.goal(task)
    if task.should_abstain:
        reason = task.evidence or "this request cannot be served as asked"
        reason = reason.replace("[", "(").replace("]", ")")
        if task.w == 1 or goal is None:
            return Plan([f"abstain[{reason}]"], "", None)
        return Plan([f"search[{task.instruction}]", f"abstain[{reason}]"], task.instruction, None)
    assert goal is not None, f"solvable task {task.task_id} has no goal"
    best: Plan | None = None
    for query in queries(task, goal):
        hits = search(dataset, index, query, frozenset())
        for rank, pos in enumerate(hits):
            product = dataset.catalogue.product(pos)
            reward, choice = product.best_reward(goal)
            if reward < 1.0:
                continue
            actions = [f"search[{query}]", *["click[next >]"] * (rank // RESULTS_PER_PAGE),
                       f"click[{product.asin.lower()}]", *[f"click[{v}]" for v in choice.values()], "click[buy now]"]
            if len(actions) <= max_turns and (best is None or len(actions) < len(best.actions)):
                best = Plan(actions, query, rank)
            break
        if best is not None and best.query == task.instruction:
            break
    if best is None:
        raise LookupError(f"task {task.task_id}: no product earning 1.0 is reachable within {max_turns} turns")
    return best


def oracle_actions(task: Task, dataset: WebDataset, index: SearchIndex, max_turns: int = 10) -> list[str]:
    return plan(task, dataset, index, max_turns).actions
