"""Driving one episode through function calls: the code the Inspect and verifiers integrations share.

A harness hands us tool calls (name + arguments) or plain text; :class:`Episode` turns each into one env action with
the same tool definitions the suite's LLM agent uses (``data/llm/tools.json`` for the family's own actions, each
sandbox's schemas from ``info["tools"]``), steps the env, and returns the text the model should see next. The env is
wrapped in :class:`~agentabstain_gym.wrappers.reward.AbstentionReward`, so the episode's return is the project's
shaped abstention reward; the record is ``info["abstention"]`` of the last step.

Nothing here reads a task's label before the episode ends except :func:`task_rows`, which is for the harness's own
bookkeeping (sample metadata), never for the model's input.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from string import Template
from typing import Any

import gymnasium as gym

import agentabstain_gym  # noqa: F401 - registers the ids
from agentabstain_gym.agents import env_family
from agentabstain_gym.agents.llm import Tool, family_table, load_text
from agentabstain_gym.core.task import SPLITS
from agentabstain_gym.wrappers.reward import AbstentionReward

#: The env each family's integration runs by default (tool sandboxes: every sandbox; pass ``env_id`` for one).
FAMILY_ENV_IDS = {"web": "AbstainWebShop-v1", "qa": "AbstainQA-v0", "terminal": "AbstainTerminal-v1",
                  "tools": "AbstainTools-v0"}
#: What a second (or later) tool call of one reply gets back: one action per turn, as for the LLM agent.
NOT_RUN = "Not executed: one action per turn, and only the first tool call of a reply is run."


class IntegrationError(ValueError):
    """Bad arguments to an integration (unknown family, split or env id), with a one-line message."""


def resolve_env_id(family: str | None = None, env_id: str | None = None) -> tuple[str, str]:
    """``(family, env_id)`` from either, checked against each other and the registry."""
    if env_id is None:
        if family not in FAMILY_ENV_IDS:
            raise IntegrationError(f"unknown family {family!r}; known: {', '.join(FAMILY_ENV_IDS)}")
        return family, FAMILY_ENV_IDS[family]
    if env_id not in gym.registry:
        raise IntegrationError(f"unknown env id {env_id!r}; see agentabstain_gym.ENV_IDS")
    try:
        actual = env_family(env_id)
    except AttributeError:
        raise IntegrationError(f"{env_id!r} is a numeric RL form, not a text env with tool calls") from None
    if family is not None and family != actual:
        raise IntegrationError(f"{env_id!r} belongs to family {actual!r}, not {family!r}")
    return actual, env_id


@dataclass(frozen=True)
class TaskRow:
    """One task of a split: what the model may see (``instruction``) and the label, for the harness only."""

    task_id: str
    env_id: str
    family: str
    instruction: str
    split: str
    category: str
    should_abstain: bool
    w: int | None
    pair_id: str | None
    scenario: str | None

    def metadata(self) -> dict[str, Any]:
        """The row as a plain ``dict``, for a harness's sample metadata."""
        return asdict(self)


def task_rows(family: str | None = None, split: str = "test", *, env_id: str | None = None,
              limit: int | None = None, env_kwargs: Mapping[str, Any] | None = None) -> list[TaskRow]:
    """The tasks of ``split`` in the env's stable order (the first ``limit`` of them when given)."""
    family, env_id = resolve_env_id(family, env_id)
    if split not in SPLITS:
        raise IntegrationError(f"unknown split {split!r}; valid splits are {list(SPLITS)}")
    if limit is not None and (not isinstance(limit, int) or limit < 1):
        raise IntegrationError(f"limit must be a positive integer, got {limit!r}")
    env = gym.make(env_id, **dict(env_kwargs or {}))
    try:
        tasks = env.unwrapped.tasks(split=split)
    finally:
        env.close()
    return [TaskRow(task_id=t.task_id, env_id=env_id, family=family, instruction=t.instruction, split=t.split,
                    category=t.category, should_abstain=bool(t.should_abstain), w=t.w, pair_id=t.pair_id,
                    scenario=t.scenario)
            for t in tasks[:limit]]


def system_prompt(family: str, max_turns: int) -> str:
    """The LLM agent's system prompt in tool-calling mode (``data/llm/system.md``), so every harness asks alike."""
    return Template(load_text("system.md")).safe_substitute(
        max_turns=max_turns, guide=family_table(family)["guide"],
        action_help=load_text("action_help_tools.md").strip()).strip()


def observation_text(observation: str, info: Mapping[str, Any], *, first: bool = False) -> str:
    """What the model reads for an observation: the instruction up front if the page lacks it, and the web page's
    clickables (which the text observation does not list), as the LLM agent shows them."""
    text = observation
    instruction = str(info.get("instruction") or "")
    if first and instruction and instruction not in observation:
        text = f"Instruction: {instruction}\n\n{observation}"
    available = info.get("available_actions")
    if isinstance(available, Mapping) and available.get("clickables"):
        text += "\n\nClickable: " + ", ".join(map(str, available["clickables"]))
    return text


def _tools_for(family: str, info: Mapping[str, Any]) -> list[Tool]:
    """The family's own actions plus, for a tool sandbox, the sandbox's tools (its names win no clash: ours do)."""
    builtin = [Tool(t["name"], t["description"], t["parameters"], t["action"]) for t in family_table(family)["tools"]]
    names = {t.name for t in builtin}
    sandbox = []
    for item in info.get("tools") or []:
        fn = item.get("function", item) if isinstance(item, Mapping) else None
        if isinstance(fn, Mapping) and isinstance(fn.get("name"), str) and fn["name"] not in names:
            sandbox.append(Tool(fn["name"], str(fn.get("description", "")),
                                dict(fn.get("parameters") or {"type": "object", "properties": {}}), None))
    return sandbox + builtin


class Episode:
    """One env, one episode at a time, driven by tool calls or text.

    ``env_kwargs`` go to ``gym.make`` (e.g. ``backend="bwrap"`` for the terminal); ``reward_kwargs`` to
    :class:`AbstentionReward` (its defaults: +w/tau for a justified ABSTAIN, -0.5 premature, -1 over-abstention, the
    task reward otherwise).
    """

    def __init__(self, env_id: str, *, env_kwargs: Mapping[str, Any] | None = None,
                 reward_kwargs: Mapping[str, Any] | None = None) -> None:
        self.family, self.env_id = resolve_env_id(None, env_id)
        self.env = AbstentionReward(gym.make(env_id, **dict(env_kwargs or {})), **dict(reward_kwargs or {}))
        self.tools: list[Tool] = []
        self.record: dict[str, Any] | None = None
        self.total_reward = 0.0
        self.done = True
        self.max_turns = int(self.env.unwrapped.max_turns)

    def start(self, task_id: str, *, seed: int | None = None) -> str:
        """Reset to ``task_id`` and return the first observation as the model should read it."""
        observation, info = self.env.reset(seed=seed, options={"task_id": task_id})
        self.tools = _tools_for(self.family, info)
        self.record, self.total_reward, self.done = None, 0.0, False
        self.max_turns = int(info.get("max_turns") or self.max_turns)
        return observation_text(observation, info, first=True)

    def system_prompt(self) -> str:
        """The system prompt the LLM agent would get for this family and budget."""
        return system_prompt(self.family, self.max_turns)

    def schemas(self) -> list[dict[str, Any]]:
        """The OpenAI function schemas of this episode's tools (built-in actions last)."""
        return [t.schema() for t in self.tools]

    def action_for_call(self, name: str, arguments: Mapping[str, Any] | str | None) -> str:
        """The env action a call becomes; a call naming no tool or with unusable arguments is sent as
        ``name(arguments)``, which the env refuses, so it costs the turn as it would for the LLM agent."""
        # A harness passes whatever its model produced: arguments that are no JSON (a set, bytes, non-string keys),
        # nested past the encoder or holding an integer too long to print cost the turn like any unusable call,
        # they do not raise out of the harness's loop.
        try:
            raw = arguments if isinstance(arguments, str) else json.dumps(arguments or {}, sort_keys=True)
        except (TypeError, ValueError, RecursionError):
            raw, arguments = "<arguments that are not JSON>", None
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except (ValueError, RecursionError):
                arguments = None
        tool = next((t for t in self.tools if t.name == name), None)
        action = None
        if tool is not None and isinstance(arguments, Mapping):
            try:
                action = tool.to_action(dict(arguments))
            except (TypeError, ValueError, RecursionError):
                action = None
        return action if action is not None else f"{name}({raw})"

    def call(self, name: str, arguments: Mapping[str, Any] | str | None) -> str:
        """Carry out one tool call as one env step and return the observation text."""
        return self.send(self.action_for_call(name, arguments))

    def send(self, action: str) -> str:
        """Step the env with ``action`` (a reply without tool calls is sent as its text, as the LLM agent does)."""
        if self.done:
            raise RuntimeError("the episode has ended; call start() first")
        observation, reward, terminated, truncated, info = self.env.step(action)
        self.total_reward += float(reward)
        if terminated or truncated:
            self.done = True
            self.record = dict(info["abstention"])
        return observation_text(observation, info)

    def abort(self, reason: str) -> dict[str, Any]:
        """End a running episode the harness could not finish (model error, limit) as an agent error, and return
        its record: a failure on either side, with ``reason`` under ``extras["error"]``."""
        if self.done:
            assert self.record is not None
            return self.record
        self.record = dict(self.env.unwrapped.abort(reason, kind="agent"))
        self.total_reward += self.env.shaped(self.record)
        self.done = True
        return self.record

    def shaped_reward(self) -> float:
        """The episode's return under :class:`AbstentionReward` (per-step costs plus the final shaped reward)."""
        return self.total_reward

    def close(self) -> None:
        """Close the env (stops a terminal sandbox)."""
        self.env.close()
