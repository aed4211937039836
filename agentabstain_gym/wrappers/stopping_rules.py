"""Stopping-rules wrapper: the five stopping rules (docs/design.md, section 8) around any text env.

In ``"enforce"`` mode the rules take over: once a rule fires after a step, the next step sends the rule's ABSTAIN
instead of the agent's action (a fired rule means abstain, never retry). A timeout found before a step replaces that
step's action at once. In ``"advise"`` mode the agent keeps control and only sees ``info["stopping_rule"]``, which
makes the rules usable as features or as a teacher.

The wrapper uses only the public Gymnasium API and what the env returns, so it works on any family and on any
other wrapper, and it leaves the spaces untouched.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, SupportsFloat

import gymnasium as gym

from agentabstain_gym.core.stopping_rules import StopDecision, StoppingRules

MODES = ("enforce", "advise")
INFO_KEY = "stopping_rule"
ENFORCED_INFO_KEY = "stopping_rule_enforced"


class StoppingRulesWrapper(gym.Wrapper[Any, Any, Any, Any], gym.utils.RecordConstructorArgs):
    """Apply :class:`StoppingRules` to every step of the wrapped env.

    ``info["stopping_rule"]`` holds the structured record on the step where a rule fired.
    ``info["stopping_rule_enforced"]`` holds the record on the step whose action the wrapper replaced (enforce mode),
    so a log shows both when the rule fired and that the agent's action was not the one sent.

    ``rules`` is a :class:`StoppingRules` (used as given), a mapping of its constructor arguments, or None (the
    defaults). The spec records the rules' :meth:`~StoppingRules.settings` (not the object), so each env rebuilt
    with ``gym.make(wrapped.spec)`` gets rules of its own and no two share one episode's counters.
    """

    def __init__(self, env: gym.Env[Any, Any], rules: StoppingRules | Mapping[str, Any] | None = None,
                 mode: str = "enforce") -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        if rules is None or isinstance(rules, Mapping):
            rules = StoppingRules(**dict(rules or {}))
        elif not isinstance(rules, StoppingRules):
            raise TypeError(f"rules must be a StoppingRules, a mapping of its arguments or None, "
                            f"got {type(rules).__name__}")
        gym.utils.RecordConstructorArgs.__init__(self, rules=rules.settings(), mode=mode)
        gym.Wrapper.__init__(self, env)
        self.rules = rules
        self.mode = mode
        self._pending: StopDecision | None = None

    @property
    def pending_decision(self) -> StopDecision | None:
        """The decision the next step will enforce (enforce mode), if any."""
        return self._pending

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Reset the env and the rules; the opening observation is the baseline for progress."""
        obs, info = self.env.reset(seed=seed, options=options)
        self._pending = None
        # The reset observation is the progress baseline: an action that just shows the same page again is no progress.
        self.rules.reset(observation=obs)
        return obs, info

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        """Step the env (sending the pending rule's ABSTAIN instead of ``action`` in enforce mode) and check
        the rules.
        """
        enforced: StopDecision | None = None
        fired_before: StopDecision | None = None
        if self.mode == "enforce":
            if self._pending is not None:
                enforced = self._pending
            else:
                # Advise mode skips this: the check after the step sees a later clock reading anyway.
                fired_before = self.rules.check_timeout()
                enforced = fired_before
        self._pending = None
        sent = enforced.to_action() if enforced is not None else action

        obs, reward, terminated, truncated, info = self.env.step(sent)
        decision = self.rules.observe(str(sent), obs)

        info = dict(info)
        fired = decision if decision is not None else fired_before
        if fired is not None:
            info[INFO_KEY] = fired.to_record()
        if enforced is not None:
            info[ENFORCED_INFO_KEY] = enforced.to_record()
        if self.mode == "enforce" and decision is not None and not (terminated or truncated):
            self._pending = decision
        return obs, reward, terminated, truncated, info
