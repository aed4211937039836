"""Numeric features of an episode as an agent sees it, for the stopping-policy env and the saved-policy agent.

Everything here is computed from the observations, the ``info`` an agent receives (instruction, turn, max_turns,
available actions), the actions sent and the action the solver proposes next, never from the task or its label, so
a policy trained on these features is an agent. The same :class:`StoppingFeatures` object is used by the env
(training) and by :class:`agentabstain_gym.agents.sb3.SB3StoppingAgent` (evaluation), so the two cannot drift.

A family may add its own features with an optional module ``agentabstain_gym.envs.<family>.features`` defining
``FEATURE_NAMES`` (a tuple of names) and ``features(observation, info) -> dict`` (values in [0, 1]), and optionally
``CUMULATIVE`` (names among them whose sum over the episode so far is also a feature, ``<name>:count``: e.g. how
many checked products fell short); this module stays family-agnostic.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import zlib
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from types import ModuleType
from typing import Any

import numpy as np

from agentabstain_gym.core.actions import ABSTAIN_VERB, Action, parse_action
from agentabstain_gym.core.stopping_rules import (
    DEFAULT_MAX_RETRIES,
    EMPTY_RESULT_REPETITION,
    INFEASIBILITY_SIGNAL,
    NO_PROGRESS,
    RESOURCE_UNAVAILABLE,
    RULE_NAMES,
    TIMEOUT,
    StoppingRules,
    normalise,
)
from agentabstain_gym.wrappers.rl.lexicon import CUE_LEXICON

GENERIC_FEATURES: tuple[str, ...] = (
    "turn_frac", "budget_left", "first_turn", "empty_seen", "last_empty", "errors_seen", "last_error",
    "no_progress", "repeated_actions", "proposal_repeats", "instruction_overlap", "proposal_support",
    *(f"rule:{name}" for name in RULE_NAMES), "rule_fired_ever",
)
_TOKEN = re.compile(r"[a-z0-9]+")
_STOPWORDS = frozenset((
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "could", "did", "do", "does", "for", "from", "had",
    "has", "have", "how", "i", "in", "is", "it", "its", "me", "of", "on", "or", "that", "the", "this", "to",
    "was", "were", "what", "when", "where", "which", "who", "whom", "whose", "why", "will", "with", "you",
    "your"
))
_INVALID_PREFIX = "invalid action"


def tokens(text: str) -> list[str]:
    """Lower-case alphanumeric tokens without stop words."""
    return [t for t in _TOKEN.findall(text.lower()) if t not in _STOPWORDS]


def overlap(wanted: Iterable[str], text_tokens: set[str]) -> float:
    """Share of ``wanted`` tokens present in ``text_tokens`` (0 when nothing is wanted)."""
    wanted = set(wanted)
    return len(wanted & text_tokens) / len(wanted) if wanted else 0.0


def _cue_patterns() -> dict[str, re.Pattern[str]]:
    return {category: re.compile(r"\b(?:" + "|".join(re.escape(p) for p in sorted(phrases, key=len, reverse=True))
                                 + r")\b")
            for category, phrases in CUE_LEXICON.items()}


_CUES = _cue_patterns()


def cue_scores(instruction: str) -> dict[str, float]:
    """Per request-based category, min(1, lexicon hits / 2) on the instruction."""
    text = instruction.lower()
    return {category: min(1.0, len(pattern.findall(text)) / 2.0) for category, pattern in _CUES.items()}


def load_family_hook(family: str) -> ModuleType | None:
    """The family's optional ``features`` module (see the module docstring), or None."""
    name = f"agentabstain_gym.envs.{family}.features"
    try:
        if importlib.util.find_spec(name) is None:
            return None
    except ModuleNotFoundError:
        return None
    module = importlib.import_module(name)
    if not isinstance(getattr(module, "FEATURE_NAMES", None), tuple) or not callable(getattr(module, "features",
                                                                                                None)):
        raise TypeError(f"{name} must define FEATURE_NAMES (a tuple) and features(observation, info)")
    return module


def stable_hash(token: str) -> int:
    """A process-independent token hash (Python's ``hash`` is salted per process)."""
    return zlib.crc32(token.encode("utf-8"))


def hashed_bag(text: str, dim: int) -> np.ndarray:
    """Binary presence of hashed tokens (unigrams and bigrams) of ``text`` in ``dim`` buckets."""
    out = np.zeros(dim, dtype=np.float32)
    words = _TOKEN.findall(text.lower())
    for token in (*words, *(f"{a}_{b}" for a, b in zip(words, words[1:], strict=False))):
        out[stable_hash(token) % dim] = 1.0
    return out


@lru_cache(maxsize=32)
def _grouped(patterns: tuple[re.Pattern[str], ...]) -> tuple[re.Pattern[str], ...]:
    """The same "any of these matches" test in fewer scans: every pattern that starts with ``\\b`` joins one
    alternation ``\\b(?:A|B|...)`` (a long web page costs ~20 us per case-insensitive scan)."""
    bounded = [p.pattern[2:] for p in patterns if p.pattern.startswith("\\b")]
    rest = tuple(p for p in patterns if not p.pattern.startswith("\\b"))
    if not bounded:
        return rest
    joined = re.compile("\\b(?:" + "|".join(f"(?:{b})" for b in bounded) + ")", patterns[0].flags)
    return (joined, *rest)


def _matches(patterns: tuple[re.Pattern[str], ...], text: str) -> bool:
    return any(p.search(text) is not None for p in _grouped(patterns))


class _TurnClock:
    """A simulated clock for the timeout rule: ``seconds_per_turn`` per turn taken, never the wall clock."""

    def __init__(self, seconds_per_turn: float) -> None:
        self.seconds_per_turn = seconds_per_turn
        self.turn = 0

    def __call__(self) -> float:
        return self.turn * self.seconds_per_turn


class StoppingFeatures:
    """Running features of one episode; call :meth:`reset`, then :meth:`observe` after every step, and
    :meth:`vector` whenever the policy must decide (with the solver's proposed next action).

    ``verbs`` are the family's action verbs (the proposal is one-hot encoded over them plus ``abstain`` and
    ``other``). The stopping rules run as advice, never enforced, and every rule's firing is its own feature (the
    engine itself reports only the first rule that fires).
    """

    def __init__(self, family: str, verbs: Sequence[str], *, max_retries: int = DEFAULT_MAX_RETRIES,
                 seconds_per_turn: float = 0.0, hook: ModuleType | None | str = "auto") -> None:
        self.family = family
        self.verbs = tuple(verbs)
        self.max_retries = max_retries
        self.hook = load_family_hook(family) if hook == "auto" else hook
        hook_names = tuple(self.hook.FEATURE_NAMES) if isinstance(self.hook, ModuleType) else ()
        cumulative = tuple(getattr(self.hook, "CUMULATIVE", ())) if isinstance(self.hook, ModuleType) else ()
        if set(cumulative) - set(hook_names):
            raise TypeError(f"{family} features: CUMULATIVE names {sorted(set(cumulative) - set(hook_names))} are "
                            "not in FEATURE_NAMES")
        self._clock = _TurnClock(seconds_per_turn)
        # One engine keeps the episode state (empty-result runs, progress); the other rules are stateless tests of
        # the observation, run with the engine's own patterns, so every rule's firing is known from one pass.
        self._engine = StoppingRules(max_retries=max_retries, clock=self._clock, enabled=(EMPTY_RESULT_REPETITION,))
        self.proposal_names = (*self.verbs, ABSTAIN_VERB, "other")
        self.names: tuple[str, ...] = (
            *GENERIC_FEATURES, *(f"cue:{c}" for c in CUE_LEXICON), *(f"proposal:{v}" for v in self.proposal_names),
            *(f"{family}:{n}" for n in hook_names), *(f"{family}:{n}:count" for n in cumulative),
        )
        self._hook_names, self._cumulative = hook_names, cumulative
        self.reset("", {})

    def __getstate__(self) -> dict[str, Any]:  # a module does not pickle: keep its name
        state = self.__dict__.copy()
        state["hook"] = self.hook.__name__ if isinstance(self.hook, ModuleType) else None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        if isinstance(self.hook, str):
            self.hook = importlib.import_module(self.hook)

    @classmethod
    def for_env(cls, env: Any, **kwargs: Any) -> StoppingFeatures:
        """Features for a family env (its ``family`` and ``verbs`` class attributes)."""
        base = env.unwrapped
        return cls(base.family, base.verbs, **kwargs)

    @property
    def size(self) -> int:
        """The length of the feature vector."""
        return len(self.names)

    def _hook_values(self, observation: str, info: Mapping[str, Any]) -> dict[str, float]:
        if not isinstance(self.hook, ModuleType):
            return {}
        extra = self.hook.features(observation, info)
        return {n: float(extra.get(n, 0.0)) for n in self._hook_names}

    def reset(self, observation: str, info: Mapping[str, Any]) -> None:
        """Start an episode at its first observation."""
        self._clock.turn = 0
        self._engine.reset(observation=observation)
        self._instruction = str(info.get("instruction", ""))
        self._instruction_tokens = set(tokens(self._instruction))
        self._cues = cue_scores(self._instruction)
        self._sent: set[str] = set()
        self._repeats = 0
        self._empty = self._errors = 0
        self._last_empty = self._last_error = False
        self._fired: dict[str, bool] = dict.fromkeys(RULE_NAMES, False)
        self._fired_ever = False
        self._counts = dict.fromkeys(self._cumulative, 0.0)
        if self._cumulative:
            self._accumulate(self._hook_values(observation, info))

    def _accumulate(self, values: Mapping[str, float]) -> None:
        for name in self._cumulative:
            self._counts[name] += values.get(name, 0.0)

    def observe(self, sent: str, observation: str, info: Mapping[str, Any] | None = None) -> None:
        """Account for one step: the action sent, the observation and ``info`` that came back (``info`` feeds the
        family's cumulative features; without it they count nothing for this step)."""
        if self._cumulative and info is not None:
            self._accumulate(self._hook_values(observation, info))
        self._clock.turn += 1
        key = normalise(sent)
        self._repeats += key in self._sent
        self._sent.add(key)
        engine = self._engine
        self._fired = {
            EMPTY_RESULT_REPETITION: engine.observe(sent, observation) is not None,
            RESOURCE_UNAVAILABLE: _matches(engine.resource_patterns, observation),
            NO_PROGRESS: engine.no_progress_steps >= self.max_retries,
            INFEASIBILITY_SIGNAL: _matches(engine.infeasibility_patterns, observation),
            TIMEOUT: self._clock() > engine.timeout_seconds,
        }
        self._fired_ever = self._fired_ever or any(self._fired.values())
        self._last_empty = _matches(engine.empty_patterns, normalise(observation))
        self._empty += self._last_empty
        self._last_error = observation.lstrip().lower().startswith(_INVALID_PREFIX) or self._fired[RESOURCE_UNAVAILABLE]
        self._errors += self._last_error

    def _proposal_verb(self, proposal: str) -> tuple[str, Action | None]:
        if not proposal:
            return "", None
        parsed = parse_action(proposal, self.verbs, allow_tool_calls=True)
        if not isinstance(parsed, Action):
            return "other", None
        verb = parsed.verb if parsed.verb in self.proposal_names else "other"
        return verb, parsed

    def values(self, observation: str, info: Mapping[str, Any], proposal: str) -> dict[str, float]:
        """The named features at this decision point (``proposal`` = the action the solver would send next)."""
        max_turns = max(1, int(info.get("max_turns") or 1))
        turn = int(info.get("turn") or 0)
        obs_tokens = set(tokens(observation))
        verb, parsed = self._proposal_verb(proposal)
        argument = parsed.argument if parsed is not None else ""
        out = {
            "turn_frac": turn / max_turns, "budget_left": 1.0 - turn / max_turns, "first_turn": float(turn == 0),
            "empty_seen": self._empty / max_turns, "last_empty": float(self._last_empty),
            "errors_seen": self._errors / max_turns, "last_error": float(self._last_error),
            "no_progress": self._engine.no_progress_steps / self.max_retries,
            "repeated_actions": self._repeats / max_turns,
            "proposal_repeats": float(bool(proposal) and normalise(proposal) in self._sent),
            "instruction_overlap": overlap(self._instruction_tokens, obs_tokens) if turn else 0.0,
            "proposal_support": overlap(tokens(argument), obs_tokens) if turn else 0.0,
            "rule_fired_ever": float(self._fired_ever),
        }
        out.update({f"rule:{name}": float(fired) for name, fired in self._fired.items()})
        out.update({f"cue:{c}": s for c, s in self._cues.items()})
        out.update({f"proposal:{v}": float(v == verb) for v in self.proposal_names})
        out.update({f"{self.family}:{n}": v for n, v in self._hook_values(observation, info).items()})
        out.update({f"{self.family}:{n}:count": c / max_turns for n, c in self._counts.items()})
        return out

    def vector(self, observation: str, info: Mapping[str, Any], proposal: str) -> np.ndarray:
        """:meth:`values` as a float32 vector in :attr:`names` order, clipped to [0, 1]."""
        values = self.values(observation, info, proposal)
        return np.clip(np.array([values[n] for n in self.names], dtype=np.float32), 0.0, 1.0)
