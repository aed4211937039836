"""A verifiers multi-turn environment per family, scored by the project's shaped abstention reward.

``load_environment(family="qa", split="train")`` returns a :class:`AbstainGymEnv` (a ``verifiers.MultiTurnEnv``)
whose dataset is the split's tasks and whose rubric is :class:`~agentabstain_gym.wrappers.reward.AbstentionReward`'s
return, so GRPO-style trainers built on verifiers can fine-tune when an LLM stops.

* **Rollout**: ``setup_state`` resets a fresh env to the row's task, replaces the prompt's user message with the
  first observation and sets the episode's tools (the family's actions from ``data/llm/tools.json``, plus a tool
  sandbox's own schemas) as ``state["oai_tools"]``. ``env_response`` makes each assistant message one env step (the
  first tool call is the action, others are answered "not executed"; a message without tool calls is sent as its
  text) and answers with tool messages or a user message. When the env ends the episode, the last observation is
  the ``final_env_response`` and the rollout stops. A rollout stopped by verifiers for another reason (an error,
  a prompt too long) is closed as an agent error: a failure on either side.
* **Rubric**: ``abstention_reward`` (weight 1) = the episode's return under ``AbstentionReward(**reward_kwargs)``;
  metrics (weight 0) ``side_correct``, ``abstained``, ``timely``, ``premature``, ``over_abstained``,
  ``task_reward``, ``episode_turns``. ``state["abstention"]`` holds the episode record; :func:`summarize_states`
  gives the project's aggregates (AbsRec@K, SPL, over-abstention...) over finished rollouts.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import verifiers as vf
from datasets import Dataset

from agentabstain_gym.core import outcome as oc
from agentabstain_gym.core.metrics import summarize
from agentabstain_gym.integrations.episode import NOT_RUN, Episode, resolve_env_id, system_prompt, task_rows

_EPISODE = "abstain_episode"  # the live Episode in a rollout's state (dropped at cleanup)


class AbstainGymEnv(vf.MultiTurnEnv):
    """One family (or one env id) of the suite as a verifiers multi-turn tool-calling environment."""

    def __init__(self, family: str | None = None, split: str = "train", *, env_id: str | None = None,
                 limit: int | None = None, env_kwargs: Mapping[str, Any] | None = None,
                 reward_kwargs: Mapping[str, Any] | None = None, eval_split: str | None = None,
                 **kwargs: Any) -> None:
        self.family, self.abstain_env_id = resolve_env_id(family, env_id)
        self.env_kwargs = dict(env_kwargs or {})
        self.reward_kwargs = dict(reward_kwargs or {})
        probe = Episode(self.abstain_env_id, env_kwargs=self.env_kwargs, reward_kwargs=self.reward_kwargs)
        self.env_max_turns = probe.max_turns
        probe.close()
        dataset = self._dataset(split, limit)
        eval_dataset = self._dataset(eval_split, limit) if eval_split else None
        rubric = vf.Rubric(funcs=[abstention_reward], weights=[1.0])
        for fn in (side_correct, abstained, timely, premature, over_abstained, task_reward, episode_turns):
            rubric.add_metric(fn)
        # the env ends every episode itself; one spare turn lets its final observation arrive first
        super().__init__(dataset=dataset, eval_dataset=eval_dataset, rubric=rubric,
                         max_turns=self.env_max_turns + 1, env_id=f"agentabstain-{self.family}", **kwargs)

    def _dataset(self, split: str, limit: int | None) -> Dataset:
        rows = task_rows(self.family, split, env_id=self.abstain_env_id, limit=limit, env_kwargs=self.env_kwargs)
        prompt = system_prompt(self.family, self.env_max_turns)
        # info is a JSON string: tool schemas differ per sandbox, which one Arrow column type cannot hold
        return Dataset.from_list([
            {"prompt": [{"role": "system", "content": prompt}, {"role": "user", "content": r.instruction}],
             "answer": "", "task": self.family,
             "info": json.dumps({"task_id": r.task_id, "env_id": r.env_id})}
            for r in rows])

    async def setup_state(self, state: vf.State) -> vf.State:
        """Start the episode of the row's task and put its first observation in the prompt."""
        info = state["info"]
        episode = Episode(str(info.get("env_id") or self.abstain_env_id), env_kwargs=self.env_kwargs,
                          reward_kwargs=self.reward_kwargs)
        state[_EPISODE] = episode
        first = episode.start(str(info["task_id"]))
        prompt = [dict(m) for m in state["prompt"]]
        prompt = [m for m in prompt if m.get("role") == "system"] + [{"role": "user", "content": first}]
        state["prompt"] = prompt
        state["oai_tools"] = episode.schemas()
        state["abstention"] = None
        return state

    async def env_response(self, messages: vf.Messages, state: vf.State, **kwargs: Any) -> vf.Messages:
        """Carry out the model's tool call (or text) in the env and return what the env answers."""
        episode: Episode = state[_EPISODE]
        last = messages[-1] if isinstance(messages, list) and messages else {}
        calls = [c for c in (last.get("tool_calls") or []) if c]
        if calls:
            first, rest = _call_parts(calls[0]), calls[1:]
            text = episode.call(first[1], first[2])
            reply: list[dict[str, Any]] = [{"role": "tool", "tool_call_id": first[0], "content": text}]
            reply.extend({"role": "tool", "tool_call_id": _call_parts(c)[0], "content": NOT_RUN} for c in rest)
        else:
            content = last.get("content")
            reply = [{"role": "user", "content": episode.send(content if isinstance(content, str) else "")}]
        if episode.done:
            state["abstention"] = episode.record
            state["abstention_return"] = episode.shaped_reward()
            state["final_env_response"] = reply
        return reply  # type: ignore[return-value]

    @vf.cleanup
    async def close_episode(self, state: vf.State) -> None:
        """Close the env; a rollout verifiers stopped before the env did becomes an agent-error record."""
        episode: Episode | None = state.get(_EPISODE)
        if episode is None:
            return
        if not episode.done:
            episode.abort(f"rollout stopped by verifiers: {state.get('stop_condition') or 'unknown'}")
            state["abstention"] = episode.record
            state["abstention_return"] = episode.shaped_reward()
        episode.close()
        state[_EPISODE] = None


def _call_parts(call: Any) -> tuple[str, str, Any]:
    """(id, name, arguments) of a tool call given as a dict or as the openai client's object."""
    if isinstance(call, Mapping):
        fn = call.get("function") or {}
        return str(call.get("id") or ""), str(fn.get("name") or ""), fn.get("arguments")
    fn = getattr(call, "function", None)
    return str(getattr(call, "id", "") or ""), str(getattr(fn, "name", "") or ""), getattr(fn, "arguments", None)


def _record(state: vf.State) -> Mapping[str, Any]:
    record = state.get("abstention")
    if record is None:
        raise ValueError("the rollout has no episode record (it never started)")
    return record


async def abstention_reward(state: vf.State) -> float:
    """The episode's return under AbstentionReward: per-step costs plus the shaped final reward."""
    _record(state)
    return float(state.get("abstention_return") or 0.0)


async def side_correct(state: vf.State) -> float:
    """1 for a justified ABSTAIN on a should-abstain task or a passed task on a solvable one."""
    return float(bool(_record(state)["success"]))


async def abstained(state: vf.State) -> float:
    """1.0 if the episode ended in an ABSTAIN (a logged metric, weight 0)."""
    return float(_record(state)["tau"] is not None)


async def timely(state: vf.State) -> float:
    """1.0 if the ABSTAIN came on the earliest justified turn."""
    return float(_record(state)["outcome"] == oc.TIMELY)


async def premature(state: vf.State) -> float:
    """1.0 if the agent abstained before the evidence justified it."""
    return float(_record(state)["outcome"] == oc.PREMATURE)


async def over_abstained(state: vf.State) -> float:
    """1.0 if the agent abstained on a solvable task."""
    return float(_record(state)["outcome"] == oc.OVER_ABSTAIN)


async def task_reward(state: vf.State) -> float:
    """The family's own task reward of the episode."""
    return float(_record(state)["task_reward"] or 0.0)


async def episode_turns(state: vf.State) -> float:
    """The number of turns the episode took."""
    return float(_record(state)["turns"])


def summarize_states(states: list[Mapping[str, Any]], **kwargs: Any) -> dict[str, Any]:
    """``core.metrics.summarize`` over the records of finished rollouts (states or outputs with ``abstention``)."""
    records = [s["abstention"] for s in states if isinstance(s.get("abstention"), Mapping)]
    return summarize(records, **{"bootstrap": 0, **kwargs})


def load_environment(family: str = "qa", split: str = "train", *, env_id: str | None = None,
                     limit: int | None = None, env_kwargs: Mapping[str, Any] | None = None,
                     reward_kwargs: Mapping[str, Any] | None = None, eval_split: str | None = None,
                     **kwargs: Any) -> AbstainGymEnv:
    """The verifiers entry point: one family's tasks of ``split`` (``env_id`` picks one env, e.g. one sandbox)."""
    return AbstainGymEnv(family if env_id is None else None, split, env_id=env_id, limit=limit,
                         env_kwargs=env_kwargs, reward_kwargs=reward_kwargs, eval_split=eval_split, **kwargs)


__all__ = ["AbstainGymEnv", "load_environment", "summarize_states"]
