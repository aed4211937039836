"""Inspect (``inspect_ai``) tasks: one per family, the env driven through the model's tool calls.

Run from a clone::

    inspect eval agentabstain_gym/integrations/inspect_tasks.py@abstain_qa --model openai/gpt-4o-mini -T split=test

or, once the package declares its ``inspect_ai`` entry point, from anywhere as ``agentabstain_gym/abstain_qa``.

* **Dataset**: the tasks of a split; a sample's input is the task's instruction, its id the task id; its metadata
  holds the label (``should_abstain``, ``category``, ``w``, ``pair_id``...), which Inspect never shows the model.
* **Solver** (:func:`abstain_agent`): resets the env to the sample's task, puts the LLM agent's system prompt and the
  first observation in the conversation, offers the family's actions (and a sandbox's own tools) as tools, and makes
  each reply one env step: the first tool call is the action (others are answered "not executed"), a reply without
  a tool call is sent as its text. The loop ends when the env ends the episode (ABSTAIN, the completing action, or
  the turn budget). A model error or an Inspect limit ends the episode as an agent error (a failure on either side).
* **Scorer** (:func:`abstention_scorer`): value 1 when this side was handled correctly (a justified ABSTAIN, or the
  task passed), ``answer`` the outcome (timely, late, premature, missed, over_abstain, success, failure),
  ``metadata["abstention"]`` the whole episode record and ``metadata["shaped_reward"]`` the AbstentionReward return.
  Metrics: ``accuracy``, ``stderr`` and :func:`abstention_metrics` (AbsRec@K, SPL, over-abstention... computed by
  ``agentabstain_gym.core.metrics.summarize`` over the records; an undefined metric is left out, never 0).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import (
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    get_model,
)
from inspect_ai.scorer import (
    Metric,
    SampleScore,
    Score,
    Scorer,
    Target,
    accuracy,
    metric,
    scorer,
    stderr,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import ToolInfo, ToolParams

from agentabstain_gym.core.metrics import summarize
from agentabstain_gym.integrations.episode import NOT_RUN, Episode, task_rows

#: The aggregates :func:`abstention_metrics` reports (keys of ``core.metrics.summarize``).
METRIC_KEYS = ("absrec@1", "absrec@3", "absrec@5", "overall_recall", "spl", "premature_rate",
               "over_abstention_rate", "success_rate", "mean_task_reward", "paired_accuracy", "car")
#: Where the solver leaves the episode record for the scorer (``TaskState.store``).
STORE_RECORD = "abstention"
STORE_REWARD = "abstention_shaped_reward"


def tool_info(schema: Mapping[str, Any]) -> ToolInfo:
    """An OpenAI function schema (as the LLM agent sends it) as Inspect's ToolInfo, unchanged in content."""
    fn = schema.get("function", schema)
    params = ToolParams.model_validate(dict(fn.get("parameters") or {"type": "object", "properties": {}}))
    return ToolInfo(name=fn["name"], description=str(fn.get("description") or fn["name"]), parameters=params)


def dataset(family: str | None = None, split: str = "test", *, env_id: str | None = None, limit: int | None = None,
            env_kwargs: Mapping[str, Any] | None = None) -> MemoryDataset:
    """The tasks of a split as Inspect samples (input: the instruction; metadata: id and label, harness only)."""
    rows = task_rows(family, split, env_id=env_id, limit=limit, env_kwargs=env_kwargs)
    name = rows[0].env_id if rows else (env_id or family or "abstain")
    return MemoryDataset([Sample(input=r.instruction, id=r.task_id, metadata=r.metadata()) for r in rows],
                         name=f"{name}:{split}")


@solver
def abstain_agent(env_kwargs: Mapping[str, Any] | None = None,
                  reward_kwargs: Mapping[str, Any] | None = None) -> Solver:
    """The tool-calling loop that plays the sample's task in its env (see the module docstring)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        episode = Episode(str(state.metadata["env_id"]), env_kwargs=env_kwargs, reward_kwargs=reward_kwargs)
        try:
            first = episode.start(str(state.metadata["task_id"]))
            state.messages = [ChatMessageSystem(content=episode.system_prompt()), ChatMessageUser(content=first)]
            tools = [tool_info(s) for s in episode.schemas()]
            model = get_model()
            while not episode.done:
                output = await model.generate(state.messages, tools=tools)
                state.output = output
                state.messages.append(output.message)
                calls = output.message.tool_calls or []
                if calls:
                    call = calls[0]
                    arguments: Any = call.arguments if call.parse_error is None else str(call.parse_error)
                    text = episode.call(call.function, arguments)
                    state.messages.append(ChatMessageTool(content=text, tool_call_id=call.id, function=call.function))
                    state.messages.extend(ChatMessageTool(content=NOT_RUN, tool_call_id=c.id, function=c.function)
                                          for c in calls[1:])
                else:
                    state.messages.append(ChatMessageUser(content=episode.send(output.message.text)))
        except BaseException as exc:  # a model error, an Inspect limit or a cancellation: the episode still has a record
            if episode.record is None and not episode.done:
                episode.abort(f"{type(exc).__name__}: {exc}"[:500])
            raise
        finally:
            if episode.record is not None:
                state.store.set(STORE_RECORD, episode.record)
                state.store.set(STORE_REWARD, episode.shaped_reward())
            episode.close()
        return state

    return solve


@metric
def abstention_metrics() -> Metric:
    """The project's aggregates over the samples' episode records (``core.metrics.summarize``, no bootstrap)."""

    def compute(scores: list[SampleScore]) -> dict[str, float | None]:
        records = [s.score.metadata["abstention"] for s in scores
                   if s.score.metadata and isinstance(s.score.metadata.get("abstention"), Mapping)]
        if not records:
            return {}
        summary = summarize(records, bootstrap=0)
        out: dict[str, float | None] = {k: summary.get(k) for k in METRIC_KEYS}
        out["n_abstain"], out["n_solvable"] = summary["n_abstain"], summary["n_solvable"]
        return out

    return compute


@scorer(metrics=[accuracy(), stderr(), abstention_metrics()])
def abstention_scorer() -> Scorer:
    """1 when the sample's side was handled correctly; the record and the shaped reward in the metadata."""

    async def score(state: TaskState, target: Target) -> Score:
        record = state.store.get(STORE_RECORD)
        if record is None:
            return Score(value=0.0, answer="no_record", explanation="the episode left no record (it never started)")
        extras = record.get("extras") or {}
        error = extras.get("error") or extras.get("env_error")
        explanation = (f"outcome {record['outcome']}: should_abstain={record['should_abstain']}, w={record['w']}, "
                       f"tau={record['tau']}, turns={record['turns']}" + (f"; error: {error}" if error else ""))
        return Score(value=1.0 if record["success"] else 0.0, answer=str(record["outcome"]), explanation=explanation,
                     metadata={"abstention": record, "shaped_reward": state.store.get(STORE_REWARD)})

    return score


def abstain_task(family: str | None = None, *, split: str = "test", env_id: str | None = None,
                 limit: int | None = None, env_kwargs: Mapping[str, Any] | None = None,
                 reward_kwargs: Mapping[str, Any] | None = None) -> Task:
    """An Inspect task over one family's (or one env id's) tasks of ``split``."""
    env_kwargs = dict(env_kwargs or {})
    return Task(dataset=dataset(family, split, env_id=env_id, limit=limit, env_kwargs=env_kwargs),
                solver=abstain_agent(env_kwargs=env_kwargs, reward_kwargs=reward_kwargs),
                scorer=abstention_scorer())


@task
def abstain_web(split: str = "test", limit: int | None = None, env_kwargs: dict[str, Any] | None = None) -> Task:
    """AbstainWebShop-v1: shop by search / click, or abstain."""
    return abstain_task("web", split=split, limit=limit, env_kwargs=env_kwargs)


@task
def abstain_qa(split: str = "test", limit: int | None = None, env_kwargs: dict[str, Any] | None = None) -> Task:
    """AbstainQA-v0: search the knowledge base, answer, or abstain."""
    return abstain_task("qa", split=split, limit=limit, env_kwargs=env_kwargs)


@task
def abstain_terminal(split: str = "test", limit: int | None = None,
                     env_kwargs: dict[str, Any] | None = None) -> Task:
    """AbstainTerminal-v1: shell commands in a sandbox, submit, or abstain (needs bubblewrap or Docker)."""
    return abstain_task("terminal", split=split, limit=limit, env_kwargs=env_kwargs)


@task
def abstain_tools(split: str = "test", limit: int | None = None, env_id: str | None = None,
                  env_kwargs: dict[str, Any] | None = None) -> Task:
    """AbstainTools-v0 (or one sandbox: ``-T env_id=AbstainTools/Calendar-v0``): the sandbox's tools, respond,
    or abstain."""
    return abstain_task("tools" if env_id is None else None, split=split, env_id=env_id, limit=limit,
                        env_kwargs=env_kwargs)


__all__ = ["abstain_agent", "abstain_qa", "abstain_task", "abstain_terminal", "abstain_tools", "abstain_web",
           "abstention_metrics", "abstention_scorer", "dataset", "tool_info"]
