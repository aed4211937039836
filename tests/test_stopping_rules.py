"""Tests of the five stopping rules (engine) and of StoppingRulesWrapper; fake clocks only, never real time."""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence
from typing import Any

import gymnasium as gym
import pytest
from gymnasium.spaces import Text
from gymnasium.utils.env_checker import check_env
from hypothesis import given, settings
from hypothesis import strategies as st

from agentabstain_gym.core.stopping_rules import (
    DEFAULT_MAX_RETRIES,
    DEFAULT_TIMEOUT_SECONDS,
    RULE_NAMES,
    StopDecision,
    StoppingRules,
)
from agentabstain_gym.wrappers import StoppingRulesWrapper
from agentabstain_gym.wrappers.stopping_rules import ENFORCED_INFO_KEY, INFO_KEY

RECORD_KEYS = {"action", "rule", "reason", "steps_taken", "elapsed_seconds"}
CHARSET = "".join(chr(i) for i in range(32, 127)) + "\n\t"
ANY_TEXT = st.text(alphabet=st.characters(blacklist_categories=()), max_size=300)


class FakeClock:
    """A clock the test moves by hand."""

    def __init__(self, now: float = 0.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def list_clock(values: Iterable[float]) -> Any:
    """A clock that returns the given readings in order (fails loudly if read more often than expected)."""
    return iter(values).__next__


def rules(**kwargs: Any) -> StoppingRules:
    r = StoppingRules(clock=kwargs.pop("clock", FakeClock()), **kwargs)
    r.reset()
    return r


def feed(r: StoppingRules, observations: Sequence[str]) -> list[StopDecision | None]:
    return [r.observe("act[x]", obs) for obs in observations]


def evidence_in(decision: StopDecision, obs: str) -> bool:
    """The reason quotes the matched text, and that text comes from the observation."""
    quoted = decision.reason[decision.reason.index('"') + 1: decision.reason.rindex('"')]
    return bool(quoted) and quoted.lower() in obs.lower()


# -- the engine -----------------------------------------------------------------------------------------------------


def test_constants() -> None:
    assert DEFAULT_MAX_RETRIES == 3
    assert DEFAULT_TIMEOUT_SECONDS == 1800
    assert RULE_NAMES == ("empty-result-repetition", "resource-unavailable", "no-progress", "infeasibility-signal",
                          "timeout")


@pytest.mark.parametrize("empty", ["No results found.", "0 results", "found 0 files", "Nothing found", "[]", "{}",
                                   "null", "None", "", "   \n ", "no matching products",
                                   "Page 1 [SEP] Total results: 0"])
def test_empty_repetition_fires_on_second_identical_empty(empty: str) -> None:
    first, second = feed(rules(), [empty, empty])
    assert first is None
    assert second is not None and second.rule == "empty-result-repetition"
    assert second.steps_taken == 2


def test_empty_repetition_normalises_whitespace_and_case() -> None:
    decisions = feed(rules(), ["No  Results\n", "no results"])
    assert decisions[1] is not None and decisions[1].rule == "empty-result-repetition"


@pytest.mark.parametrize("script", [["no results"], ["no results", "[]"], ["no results", "3 items", "no results"],
                                    ["null", "nothing to see"], ["Total results: 10", "Total results: 10"]])
def test_empty_repetition_near_misses(script: list[str]) -> None:
    assert all(d is None for d in feed(rules(), script))


@pytest.mark.parametrize("obs", ["HTTP/1.1 404 Not Found", "502 Bad Gateway", "status: 503", "Error: connect ECONNREFUSED "
                                 "127.0.0.1:8080", "ENOENT: open 'a.txt'", "cat: x: No such file or directory",
                                 "bash: jq: command not found", "ping: db: Name or service not known",
                                 "Error: Not Found", "curl: (7) Connection refused", "(404)",
                                 "GET /api/items/999 -> 404 Not Found"])
def test_resource_unavailable_fires(obs: str) -> None:
    decision = rules().observe("act", obs)
    assert decision is not None and decision.rule == "resource-unavailable"
    assert decision.steps_taken == 1 and evidence_in(decision, obs)


@pytest.mark.parametrize("obs", ["item 4040 in stock", "price $404.00", "total: 404.99 USD", "order 15030 shipped",
                                 "SKU X404B", "room 5020", "1,404 reviews", "Search results: 10 items"])
def test_resource_unavailable_near_misses(obs: str) -> None:
    assert rules().observe("act", obs) is None


@pytest.mark.parametrize("obs", ["Error: size XXL not supported", "That product does not exist.", "Permission denied",
                                 "This cannot be done", "It can't be done today", "Refund is not possible",
                                 "Unable to locate the order", "Item no longer available", "Color: unavailable",
                                 "Sorry, out of stock", "Cancellation is not permitted"])
def test_infeasibility_signal_fires(obs: str) -> None:
    decision = rules().observe("act", obs)
    assert decision is not None and decision.rule == "infeasibility-signal"
    assert evidence_in(decision, obs)


@pytest.mark.parametrize("obs", ["Supported sizes: S, M, L", "Item added to cart", "Available colours: red",
                                 "The order exists and can be done"])
def test_infeasibility_near_misses(obs: str) -> None:
    assert rules().observe("act", obs) is None


def test_no_progress_fires_at_budget_not_below() -> None:
    r = rules()
    decisions = feed(r, ["page A"] * 4)
    assert decisions[:3] == [None, None, None]  # one repeated non-empty observation, below the budget
    last = decisions[3]
    assert last is not None and last.rule == "no-progress" and last.steps_taken == 4
    assert r.no_progress_steps == 3


def test_no_progress_catches_cycles_and_counts_reset_observation() -> None:
    decisions = feed(rules(), ["page A", "page B", "page A", "page B", "page A"])
    assert decisions[:4] == [None] * 4 and decisions[4] is not None and decisions[4].rule == "no-progress"
    r = StoppingRules(clock=FakeClock())
    r.reset("home page")
    decisions = feed(r, ["home page"] * 3)
    assert decisions[2] is not None and decisions[2].rule == "no-progress"


def test_no_progress_with_state() -> None:
    r = rules(max_retries=2)
    assert r.observe("a", "same", state=1) is None
    assert r.observe("a", "same", state=2) is None  # state changed: progress despite the identical observation
    assert r.observe("a", "new text", state=2) is None  # text is new but state is what counts
    decision = r.observe("a", "newer text", state=2)
    assert decision is not None and decision.rule == "no-progress" and "state unchanged" in decision.reason


def test_timeout_with_counter_clock() -> None:
    clock = FakeClock(100.0)
    r = StoppingRules(timeout_seconds=60, clock=clock)
    r.reset()
    clock.now = 160.0
    assert r.check_timeout() is None  # exactly at the budget: not over it
    assert r.observe("a", "page 1") is None
    clock.now = 160.5
    decision = r.check_timeout()
    assert decision is not None and decision.rule == "timeout"
    assert decision.elapsed_seconds == 60 and decision.steps_taken == 1


def test_timeout_with_list_clock_reads_once_per_call() -> None:
    r = StoppingRules(clock=list_clock([0.0, 10.0, 1799.0, 1801.9]))
    r.reset()
    assert r.observe("a", "page 1") is None
    assert r.observe("a", "page 2") is None
    decision = r.observe("a", "page 3")
    assert decision is not None and decision.to_record() == {
        "action": "ABSTAIN", "rule": "timeout", "reason": decision.reason, "steps_taken": 3, "elapsed_seconds": 1801,
    }


def test_precedence_follows_rule_order() -> None:
    clock = FakeClock()
    r = rules(clock=clock, max_retries=1)
    clock.now = 10_000.0  # timeout is over budget throughout, so every other rule must win over it
    script = [
        ("404: not supported", "resource-unavailable"),
        ("404: not supported", "resource-unavailable"),  # also no progress now
        ("sorry, not supported", "infeasibility-signal"),
        ("sorry, not supported", "no-progress"),  # no-progress is checked before infeasibility
        ("no results, not supported", "infeasibility-signal"),
        ("no results, not supported", "empty-result-repetition"),  # first rule beats no-progress + infeasibility
        ("all good", "timeout"),
    ]
    decisions = feed(r, [obs for obs, _ in script])
    assert [d.rule if d else None for d in decisions] == [rule for _, rule in script]


def test_enabled_subset_and_custom_patterns() -> None:
    r = rules(enabled=["infeasibility-signal"], infeasibility_patterns=[r"\bsold out\b"])
    assert r.observe("a", "HTTP 404") is None
    assert r.observe("a", "not supported") is None  # default list replaced
    decision = r.observe("a", "Sold Out!")
    assert decision is not None and decision.rule == "infeasibility-signal" and "Sold Out" in decision.reason


@pytest.mark.parametrize("kwargs", [{"max_retries": 0}, {"timeout_seconds": -1}, {"enabled": ["nope"]}])
def test_bad_arguments_raise(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        StoppingRules(**kwargs)


def test_reset_starts_a_new_episode() -> None:
    clock = FakeClock()
    r = rules(clock=clock)
    feed(r, ["no results", "page"])
    clock.now = 50.0
    r.reset()
    assert r.observe("a", "no results") is None  # the earlier empty result belongs to the old episode
    assert r.steps_taken == 1 and r.elapsed() == 0.0


def test_record_has_exactly_the_five_keys() -> None:
    decision = StopDecision(rule="resource-unavailable", reason='error signal "404"', steps_taken=2,
                            elapsed_seconds=7)
    assert decision.to_record() == {"action": "ABSTAIN", "rule": "resource-unavailable",
                                    "reason": 'error signal "404"', "steps_taken": 2, "elapsed_seconds": 7}
    assert set(decision.to_record()) == RECORD_KEYS
    assert decision.to_action() == 'abstain[resource-unavailable: error signal "404"]'


@given(rule=st.sampled_from(RULE_NAMES) | ANY_TEXT, reason=ANY_TEXT)
def test_to_action_is_always_well_formed(rule: str, reason: str) -> None:
    action = StopDecision(rule=rule, reason=reason, steps_taken=1, elapsed_seconds=0).to_action()
    assert action.startswith("abstain[") and action.endswith("]")
    assert action.count("[") == 1 and action.count("]") == 1
    assert "\n" not in action


@settings(max_examples=200)
@given(observations=st.lists(ANY_TEXT, max_size=8), action=ANY_TEXT)
def test_observe_never_raises_and_actions_are_well_formed(observations: list[str], action: str) -> None:
    r = rules(max_retries=2)
    for obs in observations:
        decision = r.observe(action, obs)
        if decision is not None:
            assert decision.rule in RULE_NAMES and set(decision.to_record()) == RECORD_KEYS
            text = decision.to_action()
            assert text.startswith("abstain[") and text.endswith("]") and text.count("[") == 1


@pytest.mark.parametrize("obs", ["\n" * 200_000, ":" + " " * 200_000, "\x00\x1b[31m" * 50_000, "a" * 1_000_000,
                                 "\ud800 404 \U0001f600", "[" * 100_000 + "]" * 100_000],
                         ids=["newlines", "colon-spaces", "control", "long", "surrogate", "brackets"])
def test_hostile_observations(obs: str) -> None:
    r = rules()
    for _ in range(3):
        decision = r.observe(obs, obs)
        if decision is not None:
            assert decision.to_action().count("[") == 1


# -- the wrapper ----------------------------------------------------------------------------------------------------


class ScriptedEnv(gym.Env[str, str]):
    """Observations come from a list; ``abstain[...]`` terminates; running out of script truncates."""

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(self, script: Sequence[str] = ("page one", "page two"), max_turns: int = 10) -> None:
        self.script = list(script)
        self.max_turns = max_turns
        self.observation_space = Text(max_length=256, charset=CHARSET)
        self.action_space = Text(max_length=256, charset=CHARSET)
        self.actions: list[str] = []
        self.turn = 0

    def _info(self) -> dict[str, Any]:
        return {"turn": self.turn, "max_turns": self.max_turns, "instruction": "find it", "task_id": "t-0"}

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        self.turn, self.actions = 0, []
        return "start page", self._info()

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        self.turn += 1
        self.actions.append(action)
        info = self._info()
        if action.startswith("abstain[") and action.endswith("]"):
            info["abstention"] = {"tau": self.turn, "reason": action[action.find("[") + 1: action.rfind("]")]}
            return "You abstained.", 0.0, True, False, info
        obs = self.script[self.turn - 1] if self.turn <= len(self.script) else "end of script"
        truncated = self.turn >= self.max_turns
        if truncated:
            info["abstention"] = {"tau": None}
        return obs, 0.0, False, truncated, info


def test_enforce_replaces_the_next_action() -> None:
    env = ScriptedEnv(["results page", "no results", "no results", "more"])
    wrapped = StoppingRulesWrapper(env, StoppingRules(clock=FakeClock()))
    wrapped.reset(seed=0)
    for _ in range(2):
        _, _, terminated, _, info = wrapped.step("search[x]")
        assert not terminated and INFO_KEY not in info
    _, _, terminated, _, info = wrapped.step("search[x]")
    assert not terminated and info[INFO_KEY]["rule"] == "empty-result-repetition"
    assert set(info[INFO_KEY]) == RECORD_KEYS and info[INFO_KEY]["steps_taken"] == 3
    assert wrapped.pending_decision is not None
    expected = wrapped.pending_decision.to_action()
    _, _, terminated, _, info = wrapped.step("search[again]")
    assert terminated and env.actions[-1] == expected
    assert info[ENFORCED_INFO_KEY]["rule"] == "empty-result-repetition"
    assert info["abstention"]["reason"].startswith("empty-result-repetition: ")


def test_advise_never_overrides() -> None:
    env = ScriptedEnv(["no results", "no results", "no results", "done"])
    wrapped = StoppingRulesWrapper(env, StoppingRules(clock=FakeClock()), mode="advise")
    wrapped.reset(seed=0)
    infos = [wrapped.step(f"search[{i}]")[4] for i in range(4)]
    assert env.actions == ["search[0]", "search[1]", "search[2]", "search[3]"]
    assert INFO_KEY not in infos[0] and INFO_KEY not in infos[3]
    assert infos[1][INFO_KEY]["rule"] == infos[2][INFO_KEY]["rule"] == "empty-result-repetition"
    assert all(ENFORCED_INFO_KEY not in info for info in infos)


def test_enforce_timeout_replaces_the_same_step() -> None:
    clock = FakeClock()
    env = ScriptedEnv(["a", "b", "c"])
    wrapped = StoppingRulesWrapper(env, StoppingRules(timeout_seconds=30, clock=clock))
    wrapped.reset(seed=0)
    assert not wrapped.step("look")[2]
    clock.now = 31.0
    _, _, terminated, _, info = wrapped.step("look again")
    assert terminated and env.actions == ["look", "abstain[timeout: 31s elapsed, over the 30s budget]"]
    assert info[ENFORCED_INFO_KEY]["rule"] == "timeout" and info[INFO_KEY]["elapsed_seconds"] == 31


def test_reset_clears_pending_and_rules() -> None:
    env = ScriptedEnv(["Error 503", "fine"])
    wrapped = StoppingRulesWrapper(env, StoppingRules(clock=FakeClock()))
    wrapped.reset(seed=1)
    assert wrapped.step("go")[4][INFO_KEY]["rule"] == "resource-unavailable"
    wrapped.reset(seed=1)
    assert wrapped.pending_decision is None and wrapped.rules.steps_taken == 0
    wrapped.step("go")
    assert env.actions == ["go"]


def test_rule_on_final_step_leaves_nothing_pending() -> None:
    env = ScriptedEnv(["not supported"], max_turns=1)
    wrapped = StoppingRulesWrapper(env, StoppingRules(clock=FakeClock()))
    wrapped.reset(seed=0)
    _, _, _, truncated, info = wrapped.step("go")
    assert truncated and info[INFO_KEY]["rule"] == "infeasibility-signal" and wrapped.pending_decision is None


def test_wrapper_defaults_and_bad_mode() -> None:
    wrapped = StoppingRulesWrapper(ScriptedEnv())
    assert isinstance(wrapped.rules, StoppingRules) and wrapped.mode == "enforce"
    assert wrapped.observation_space == wrapped.env.observation_space
    assert wrapped.action_space == wrapped.env.action_space
    with pytest.raises(ValueError):
        StoppingRulesWrapper(ScriptedEnv(), mode="ignore")


@pytest.mark.parametrize("mode", ["enforce", "advise"])
def test_env_checker_passes(mode: str) -> None:
    wrapped = StoppingRulesWrapper(ScriptedEnv(["not supported", "x"]), StoppingRules(clock=FakeClock()), mode=mode)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(wrapped, skip_render_check=True)
    unexpected = [str(w.message) for w in caught if "different from the unwrapped" not in str(w.message)]
    assert unexpected == []


def test_counters_do_not_make_a_repeated_result_look_new() -> None:
    rules = StoppingRules()
    rules.reset()
    assert rules.observe("search[x]", 'No passages matched "x" (searches left: 9).') is None
    decision = rules.observe("search[x]", 'No passages matched "x" (searches left: 8).')
    assert decision is not None and decision.rule == "empty-result-repetition"
