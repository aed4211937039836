"""Gymnasium's conventions for published environments, checked over every registered id and every wrapper.

* ``gym.make(wrapped.spec)`` rebuilds any wrapper stack of the package (``RecordConstructorArgs`` on every wrapper);
* ``spec.max_episode_steps`` is the family's default turn budget, and the env's own budget stays authoritative: the
  registered horizon never cuts an episode short, never marks a record as ``truncated_by: time_limit`` and never
  loses the record;
* ``nondeterministic`` is set exactly where episodes depend on more than the seed and the actions (the terminal);
* every registered class documents itself with Gymnasium's eight docstring sections.
"""

from __future__ import annotations

import ast
import json
import shutil
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from conftest import require_backend
from gymnasium.envs.registration import load_env_creator
from gymnasium.wrappers import TimeLimit

import agentabstain_gym
from agentabstain_gym.agents import make_agent
from agentabstain_gym.agents.playbook import Operation, Playbook, Reflection, Trigger, update
from agentabstain_gym.agents.playbook.stops import PlaybookStopWrapper
from agentabstain_gym.core.stopping_rules import StoppingRules
from agentabstain_gym.registration import FAMILY_MAX_TURNS, family_id
from agentabstain_gym.wrappers import AbstentionReward, KeepRecordOnTimeLimit, StoppingRulesWrapper
from agentabstain_gym.wrappers.rl.discrete import DiscreteActions, HashedTextObservation

ALL_IDS = agentabstain_gym.ENV_IDS + agentabstain_gym.SB3_ENV_IDS
PACKAGE = Path(agentabstain_gym.__file__).parent
SECTIONS = ("Description", "Action Space", "Observation Space", "Rewards", "Starting State", "Episode End",
            "Arguments", "Version History")
#: An action of each family that never ends an episode (an empty search, an unknown tool, a no-op command).
BUSY = {"AbstainQA-v0": "search[zzqx]", "AbstainWebShop-v1": "search[zzqx]", "AbstainTools-v0": "lookup[x]",
        "AbstainTerminal-v1": "true"}


def _needs(env_id: str) -> None:
    if family_id(env_id) == "AbstainTerminal-v1":
        require_backend("bwrap")


def _busy(env_id: str) -> Any:
    if env_id in agentabstain_gym.SB3_ENV_IDS:
        return 0 if "-Stop-" in env_id else 1  # Stop: send the solver's proposal; Discrete: slot 1 searches
    return BUSY[family_id(env_id)]


def _abstain_task(env: gym.Env) -> str:
    return next(t.task_id for t in env.unwrapped.tasks() if t.should_abstain)


def _run_to_end(env: gym.Env, env_id: str, cap: int) -> tuple[int, bool, dict[str, Any]]:
    env.reset(seed=3, options={"task_id": _abstain_task(env)})
    for turn in range(1, cap + 1):
        _, _, terminated, truncated, info = env.step(_busy(env_id))
        if terminated or truncated:
            return turn, truncated, info
    raise AssertionError(f"{env_id}: no end within {cap} steps")


# ----- the registered horizon ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("env_id", ALL_IDS)
def test_registered_horizon_is_the_longest_default_episode(env_id: str) -> None:
    spec = gym.spec(env_id)
    family = gym.make(family_id(env_id))
    try:
        bound = family.unwrapped.max_turns_bound  # the default max_turns, or the largest budget a shipped task sets
    finally:
        family.close()
    assert spec.max_episode_steps == FAMILY_MAX_TURNS[family_id(env_id)] == bound
    assert spec.nondeterministic == (family_id(env_id) == "AbstainTerminal-v1")


@pytest.mark.parametrize("env_id", ALL_IDS)
def test_truncation_at_the_registered_horizon_keeps_an_untagged_record(env_id: str) -> None:
    """Default ``gym.make``: the episode ends on the env's own budget with its whole record, not a time limit's."""
    _needs(env_id)
    env = gym.make(env_id)
    horizon = gym.spec(env_id).max_episode_steps
    try:
        assert env.spec.max_episode_steps == horizon  # the TimeLimit is in the stack and agrees with the env
        turn, truncated, info = _run_to_end(env, env_id, horizon + 2)
        record = info["abstention"]
        assert "truncated_by" not in record["extras"]
        assert record["turns"] == turn and record["task_id"] == _abstain_task(env)
        if truncated:  # on the task's own budget: the horizon, or less for a terminal task that sets a smaller one
            assert turn == record["max_turns"] <= horizon and record["tau"] is None
        else:  # only a Stop form's solver may end the episode by itself (it answers or buys)
            assert "-Stop-" in env_id
    finally:
        env.close()


@pytest.mark.parametrize("env_id", ["AbstainQA-v0", "AbstainWebShop-v1", "AbstainTools-v0",
                                    "AbstainWebShop-Discrete-v1"])
def test_a_budget_above_the_registered_horizon_is_obeyed(env_id: str) -> None:
    budget = gym.spec(env_id).max_episode_steps + 3
    kwargs = {"max_turns": budget} if env_id in agentabstain_gym.ENV_IDS else {"env_kwargs": {"max_turns": budget}}
    env = gym.make(env_id, **kwargs)
    try:
        assert env.spec.max_episode_steps is None and not _has_time_limit(env)
        turn, truncated, info = _run_to_end(env, env_id, budget + 2)
        record = info["abstention"]
        assert (turn, truncated, record["max_turns"]) == (budget, True, budget)
        assert "truncated_by" not in record["extras"]
        again = gym.make(env.spec)  # the rebuilt env keeps the budget and still has no registered TimeLimit
        assert again.unwrapped.max_turns_bound == budget and not _has_time_limit(again)
        again.close()
    finally:
        env.close()


def test_an_explicit_limit_equal_to_the_budget_is_not_a_time_limit() -> None:
    env = gym.make("AbstainQA-v0", max_turns=4, max_episode_steps=4)
    turn, truncated, info = _run_to_end(env, "AbstainQA-v0", 6)
    assert (turn, truncated) == (4, True) and "truncated_by" not in info["abstention"]["extras"]
    env.close()


def test_terminal_tasks_with_a_longer_budget_run_to_it(tmp_path: Path) -> None:
    """Terminal tasks set their own budget; a folder of tasks with 34 turns is not cut at the registered 30."""
    require_backend("bwrap")
    source = PACKAGE / "data" / "terminal" / "tasks" / "count-extensions"
    target = tmp_path / "count-extensions"
    shutil.copytree(source, target)
    manifest = json.loads((target / "task.json").read_text(encoding="utf-8"))
    manifest["limits"]["max_turns"] = 34
    (target / "task.json").write_text(json.dumps(manifest), encoding="utf-8")
    env = gym.make("AbstainTerminal-v1", tasks_dir=str(tmp_path), reset_quantum=0)
    try:
        assert env.unwrapped.max_turns_bound == 34 and not _has_time_limit(env)
        turn, truncated, info = _run_to_end(env, "AbstainTerminal-v1", 40)
        assert (turn, truncated, info["abstention"]["max_turns"]) == (34, True, 34)
        assert "truncated_by" not in info["abstention"]["extras"]
    finally:
        env.close()


def _has_time_limit(env: gym.Env) -> bool:
    while isinstance(env, gym.Wrapper):
        if isinstance(env, TimeLimit):
            return True
        env = env.env
    return False


# ----- rebuilding wrappers from their spec --------------------------------------------------------------------------
def _playbook() -> Playbook:
    ops = [Operation("add", section="late_abstain", lesson="Stop after empty searches.",
                     trigger=Trigger("no results", "observation", None, 2))]
    return update(Playbook(), None, Reflection("t", operations=ops)).playbook


def _wrapped(name: str) -> tuple[gym.Env, list[Any]]:
    """A wrapper of the package around a registered env, and actions to compare the original and the rebuild."""
    qa, qa_actions = gym.make("AbstainQA-v0"), ["search[founded]", "search[zzqx]", "answer[1999]"]
    if name == "AbstentionReward":
        return AbstentionReward(qa, premature=-0.25, step_cost=-0.01), qa_actions
    if name == "StoppingRulesWrapper":
        return StoppingRulesWrapper(qa, StoppingRules(max_retries=2, timeout_seconds=0), mode="enforce"), \
            ["search[zzqx]"] * 4
    if name == "PlaybookStopWrapper":
        return PlaybookStopWrapper(qa, _playbook()), qa_actions
    if name == "KeepRecordOnTimeLimit":
        return KeepRecordOnTimeLimit(TimeLimit(qa, 2)), qa_actions[:2]
    qa.close()
    web = gym.make("AbstainWebShop-v1")
    if name == "DiscreteActions":
        return DiscreteActions(web, n_actions=6, solver=make_agent("never-abstain", "AbstainWebShop-v1")), [1, 2, 0]
    if name == "HashedTextObservation":
        return HashedTextObservation(web, dim=16), ["search[shirt]", "abstain[x]"]
    raise KeyError(name)


WRAPPERS = ("AbstentionReward", "StoppingRulesWrapper", "PlaybookStopWrapper", "KeepRecordOnTimeLimit",
            "DiscreteActions", "HashedTextObservation")


def _package_wrappers() -> set[str]:
    """Every class in the package that subclasses a Gymnasium wrapper (found in the source, imports not needed)."""
    found = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and any("Wrapper" in ast.unparse(b) and "gym." in ast.unparse(b)
                                                      for b in node.bases):
                found.add(node.name)
    return found


def test_every_wrapper_of_the_package_is_rebuilt_below() -> None:
    assert _package_wrappers() == set(WRAPPERS)


@pytest.mark.parametrize("name", WRAPPERS)
def test_make_from_a_wrapped_spec_rebuilds_the_same_env(name: str) -> None:
    wrapped, actions = _wrapped(name)
    assert isinstance(wrapped, gym.utils.RecordConstructorArgs)
    rebuilt = gym.make(wrapped.spec)
    try:
        assert rebuilt.spec.max_episode_steps == wrapped.spec.max_episode_steps
        if name != "KeepRecordOnTimeLimit":  # Gymnasium rebuilds a TimeLimit below every wrapper of the spec
            assert str(rebuilt) == str(wrapped) and _shape(rebuilt.spec) == _shape(wrapped.spec)
        for env in (wrapped, rebuilt):
            env.reset(seed=5, options={"task_id": _abstain_task(env)})
        for action in actions:
            one, two = wrapped.step(action), rebuilt.step(action)
            assert np.array_equal(np.asarray(one[0]), np.asarray(two[0])) and one[1:4] == two[1:4]
            assert one[4].get("abstention") == two[4].get("abstention")
            if one[2] or one[3]:
                break
    finally:
        wrapped.close()
        rebuilt.close()


def _shape(spec: gym.envs.registration.EnvSpec) -> tuple[Any, ...]:
    """A spec without its wrappers' argument values (Gymnasium deep-copies objects such as a solver)."""
    return (spec.id, spec.entry_point, spec.kwargs, spec.max_episode_steps,
            [(w.name, w.entry_point, sorted(w.kwargs or {})) for w in spec.additional_wrappers])


def test_rebuilt_stopping_rules_are_their_own() -> None:
    """The spec holds the rules' settings, so two rebuilt envs never share one episode's counters."""
    rules = StoppingRules(max_retries=2, enabled=("no-progress",))
    wrapped = StoppingRulesWrapper(gym.make("AbstainQA-v0"), rules, mode="advise")
    first, second = gym.make(wrapped.spec), gym.make(wrapped.spec)
    assert wrapped.rules is rules and len({id(first.rules), id(second.rules), id(rules)}) == 3
    assert first.rules.settings() == second.rules.settings() == rules.settings() and first.mode == "advise"
    for env in (wrapped, first, second):
        env.close()


# ----- documentation -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("entry_point", sorted({gym.spec(i).entry_point for i in ALL_IDS}))
def test_every_registered_class_has_the_eight_docstring_sections(entry_point: str) -> None:
    doc = load_env_creator(entry_point).__doc__ or ""
    missing = [s for s in SECTIONS if f"## {s}\n" not in doc]
    assert not missing, f"{entry_point} lacks the docstring section(s) {missing}"
    positions = [doc.index(f"## {s}\n") for s in SECTIONS]
    assert positions == sorted(positions), f"{entry_point}: the sections are out of Gymnasium's order"
