"""Agents that the runner can evaluate: baselines, the stopping-rules agent and each family's heuristic.

``make_agent(name, env_id)`` builds one by name; a user's own agent is any object with ``name``, ``reset()`` and
``act(observation, info) -> str`` (see :class:`agentabstain_gym.agents.base.Agent`).
"""

from __future__ import annotations

import importlib

import gymnasium as gym

from agentabstain_gym.agents.base import Agent
from agentabstain_gym.agents.baselines import AlwaysAbstainAgent, RandomAgent
from agentabstain_gym.agents.rules import RulesAgent

AGENT_NAMES = ("random", "always-abstain", "never-abstain", "rules", "heuristic", "llm")

#: family -> "module:Class" of its scripted solver; the class takes ``abstain: bool`` (False = never stops).
SOLVERS = {
    "qa": "agentabstain_gym.envs.qa.solver:HeuristicQASolver",
    "terminal": "agentabstain_gym.envs.terminal.solver:HeuristicTerminalSolver",
    "tools": "agentabstain_gym.envs.tools.solver:HeuristicToolSolver",
    "web": "agentabstain_gym.envs.web.solver:HeuristicWebSolver",
}
#: family -> actions the random agent picks from (families with clickables use those instead).
RANDOM_ACTIONS = {
    "qa": ["search[history]", "search[founded]", "answer[1900]", "answer[yes]", "abstain[]"],
    "terminal": ["ls -la", "cat *.txt | head", "make", "submit", "abstain[]"],
    "tools": ['{"tool": "list_events", "arguments": {"date_from": "2025-03-10"}}', "respond[Done.]", "abstain[]"],
    "web": ["search[cotton t-shirt]", "search[organic coffee]", "click[back to search]", "abstain[]"],
}


def env_family(env_id: str) -> str:
    """The family of a registered id, read from its entry point class (no env is built)."""
    module, _, cls = str(gym.spec(env_id).entry_point).partition(":")
    return getattr(importlib.import_module(module), cls).family


def _solver(family: str, *, abstain: bool) -> Agent:
    module, _, cls = SOLVERS[family].partition(":")
    return getattr(importlib.import_module(module), cls)(abstain=abstain)


class _Named:
    """Gives a solver the runner-facing name it is evaluated under."""

    def __init__(self, inner: Agent, name: str) -> None:
        self.inner, self.name = inner, name

    def reset(self) -> None:
        self.inner.reset()

    def act(self, observation: str, info: dict) -> str:
        return self.inner.act(observation, info)


def make_agent(name: str, env_id: str, *, seed: int = 0) -> Agent:
    """The agent called ``name`` for ``env_id`` (raises ``KeyError`` listing the valid names)."""
    if name.startswith("sb3:"):  # a saved SB3 stopping policy (agents/sb3.py; needs the `rl` extra)
        return importlib.import_module("agentabstain_gym.agents.sb3").from_spec(name, env_id)
    if name not in AGENT_NAMES:
        raise KeyError(f"unknown agent {name!r}; valid agents: {', '.join(AGENT_NAMES)}")
    family = env_family(env_id)
    if name == "llm":  # configured from $ABSTAIN_GYM_LLM_* (see agentabstain_gym.agents.llm)
        return importlib.import_module("agentabstain_gym.agents.llm").LLMAgent(family=family)
    if name == "always-abstain":
        return AlwaysAbstainAgent()
    if name == "random":
        return RandomAgent(RANDOM_ACTIONS[family], seed=seed)
    if name == "never-abstain":
        return _Named(_solver(family, abstain=False), "never-abstain")
    if name == "rules":
        return RulesAgent(_solver(family, abstain=False))
    return _Named(_solver(family, abstain=True), "heuristic")


__all__ = ["AGENT_NAMES", "Agent", "AlwaysAbstainAgent", "RandomAgent", "RulesAgent", "make_agent"]
