"""The five stopping rules (docs/design.md, section 8) as a small deterministic engine.

The engine only looks at what an agent could see (the action it sent, the observation it got back, an optional
caller-supplied state) and at an injectable clock, so the same episode always gives the same decisions. It has no
Gymnasium dependency: the wrapper, the stopping-rules agent and the stopping-policy features all share it.

Rules are checked in a fixed order and the first one that fires wins:

1. ``empty-result-repetition``: this observation and the previous one are both empty results and identical after
   normalisation (case folded, whitespace collapsed). One empty result alone never fires.
2. ``resource-unavailable``: the observation carries a 404/502/503, ECONNREFUSED, ENOENT or an equivalent
   "not found"-style error.
3. ``no-progress``: ``max_retries`` consecutive steps made no progress. Progress means the caller's ``state``
   changed; when no state is given, it means the observation is new for the episode (it differs from every earlier
   observation, the reset observation included when one was given). Comparing against the whole episode, not just
   the previous step, also catches agents cycling between a few pages.
4. ``infeasibility-signal``: the observation says in words that the task cannot be done.
5. ``timeout``: more than ``timeout_seconds`` passed on the clock since :meth:`StoppingRules.reset`.

A rule fires on every step its condition holds; callers act on the first decision.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from typing import Any

DEFAULT_MAX_RETRIES = 3
DEFAULT_TIMEOUT_SECONDS = 1800

EMPTY_RESULT_REPETITION = "empty-result-repetition"
RESOURCE_UNAVAILABLE = "resource-unavailable"
NO_PROGRESS = "no-progress"
INFEASIBILITY_SIGNAL = "infeasibility-signal"
TIMEOUT = "timeout"
RULE_NAMES: tuple[str, ...] = (
    EMPTY_RESULT_REPETITION, RESOURCE_UNAVAILABLE, NO_PROGRESS, INFEASIBILITY_SIGNAL, TIMEOUT,
)

# Case-insensitive regexes, searched in the normalised observation (lower case, whitespace collapsed, stripped).
# Bare tokens such as "null" or "[]" are anchored: they mean "empty" only when they are the whole output.
EMPTY_RESULT_PATTERNS: tuple[str, ...] = (
    r"^$",
    r"^(?:\[\s*\]|\{\s*\}|\(\s*\)|null|none|nil|undefined|n/a|\"\"|'')\.?$",
    r"^(?:\(empty\)|<empty>|empty|empty result|no output)\.?$",
    r"\bno (?:results?|matches|matching|items?|records?|entries|rows|hits|products?|passages?|documents?)\b",
    r"\b0 (?:results?|matches|items?|records?|entries|rows|hits|products?|files?)\b",
    r"\bfound 0\b",
    r"\bresults?:? 0(?![.,]?\d)",
    r"\bnothing (?:was )?found\b",
    r"\breturned no\b",
)

# Numeric codes must stand alone: not part of a longer number ("4040"), a price ("$404", "404.00") or a word.
_CODE = r"(?<![\w$€£])(?<!\d[.,])(?:{codes})(?!\w|[.,]\d)"
RESOURCE_UNAVAILABLE_PATTERNS: tuple[str, ...] = (
    _CODE.format(codes="404|502|503"),
    r"\bECONNREFUSED\b",
    r"\bENOENT\b",
    r"\bENOTFOUND\b",
    r"\bconnection refused\b",
    r"\bno such file or directory\b",
    r"\bcommand not found\b",
    r"\bname or service not known\b",
    r"\bcould not resolve host\b",
    r"\btemporary failure in name resolution\b",
    r"\bbad gateway\b",
    r"\bservice unavailable\b",
    # "not found" as an error signal: after a colon or at the start of a line ("Error: Not Found",
    # "sh: 1: foo: not found"), or about a typed resource ("file not found").
    r"(?:^|:)[ \t]*not found\b",
    r"\b(?:file|page|resource|host|url|path|module|directory|endpoint|server|service)\s+not\s+found\b",
)

INFEASIBILITY_PATTERNS: tuple[str, ...] = (
    r"\bnot supported\b",
    r"\bunsupported\b",
    r"\b(?:does|do|did) not exist\b",
    r"\b(?:doesn't|don't|doesn’t|don’t) exist\b",
    r"\bno longer exists?\b",
    r"\bpermission denied\b",
    r"\boperation not permitted\b",
    r"\bis not permitted\b",
    r"\bnot allowed\b",
    r"\b(?:cannot|can ?not|can't|can’t) be (?:done|completed|fulfilled|performed|satisfied)\b",
    r"\bnot possible\b",
    r"\bimpossible\b",
    r"\bunable to\b",
    r"\bno longer available\b",
    r"\bunavailable\b",
    r"\bnot available\b",
    r"\bout of stock\b",
    r"\bdiscontinued\b",
)

_WS = re.compile(r"\s+")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]+")
_EVIDENCE_CHARS = 60


def _compile(patterns: Iterable[str | re.Pattern[str]]) -> tuple[re.Pattern[str], ...]:
    """Compile once; already-compiled patterns are recompiled case-insensitively from their source."""
    flags = re.IGNORECASE | re.MULTILINE
    return tuple(re.compile(p.pattern if isinstance(p, re.Pattern) else p, flags) for p in patterns)


_DEFAULT_EMPTY = _compile(EMPTY_RESULT_PATTERNS)
_DEFAULT_RESOURCE = _compile(RESOURCE_UNAVAILABLE_PATTERNS)
_DEFAULT_INFEASIBLE = _compile(INFEASIBILITY_PATTERNS)


_DIGITS = re.compile(r"\d+")


def normalise(text: str) -> str:
    """Case-fold and collapse whitespace, so cosmetic differences do not count as new results."""
    return _WS.sub(" ", text).strip().casefold()


def identity(norm: str) -> str:
    """What two normalised observations must share to be "the same": numbers are masked, so a counter such as
    ``searches left: 8`` or a turn number does not make a repeated result look new or count as progress."""
    return _DIGITS.sub("#", norm)


def _one_line(text: str, limit: int | None = None) -> str:
    """Make text safe to embed in a reason: no control characters, optionally shortened."""
    text = _WS.sub(" ", _CONTROL.sub(" ", text)).strip()
    if limit is not None and len(text) > limit:
        text = text[: limit - 3].rstrip() + "..."
    return text


def _digest(text: str) -> bytes:
    """A stable, compact key for an observation: the engine keeps digests, not whole pages."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def _first_match(patterns: tuple[re.Pattern[str], ...], text: str) -> re.Match[str] | None:
    for pattern in patterns:
        match = pattern.search(text)
        if match is not None:
            return match
    return None


@dataclass(frozen=True)
class StopDecision:
    """Which rule fired, why, and when; convertible to the structured ABSTAIN record and to an action string."""

    rule: str
    reason: str
    steps_taken: int
    elapsed_seconds: int

    def to_record(self) -> dict[str, Any]:
        """The structured ABSTAIN record, with exactly five keys: action, rule, reason, steps_taken, elapsed_seconds."""
        return {
            "action": "ABSTAIN",
            "rule": self.rule,
            "reason": self.reason,
            "steps_taken": self.steps_taken,
            "elapsed_seconds": self.elapsed_seconds,
        }

    def to_action(self) -> str:
        """The ABSTAIN action in the env grammar; brackets in the text are swapped so the argument stays intact."""
        text = _one_line(f"{self.rule}: {self.reason}").replace("[", "(").replace("]", ")")
        return f"abstain[{text}]"


class StoppingRules:
    """Stateful checker for one episode at a time: call :meth:`reset`, then :meth:`observe` after every step.

    Each :meth:`observe` and :meth:`check_timeout` call reads the clock exactly once (and :meth:`reset` once), so a
    list-driven fake clock in tests lines up with steps. If :meth:`reset` was never called, the first clock reading
    starts the episode.

    Examples:
        >>> rules = StoppingRules(clock=lambda: 0.0)  # a fixed clock: the timeout rule never fires
        >>> rules.reset("Search page")
        >>> rules.observe("search[blue kettle]", "No results.") is None  # one empty result is not a pattern
        True
        >>> decision = rules.observe("search[blue kettle]", "No results.")
        >>> decision.rule, decision.to_action()
        ('empty-result-repetition', 'abstain[empty-result-repetition: 2 consecutive identical empty results ("no results")]')
    """

    def __init__(
        self,
        max_retries: int = DEFAULT_MAX_RETRIES,
        timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        enabled: Iterable[str] | None = None,
        *,
        empty_patterns: Iterable[str | re.Pattern[str]] | None = None,
        resource_patterns: Iterable[str | re.Pattern[str]] | None = None,
        infeasibility_patterns: Iterable[str | re.Pattern[str]] | None = None,
    ) -> None:
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 1:
            raise ValueError(f"max_retries must be an int >= 1, got {max_retries!r}")
        if timeout_seconds < 0:
            raise ValueError(f"timeout_seconds must be >= 0, got {timeout_seconds!r}")
        names = RULE_NAMES if enabled is None else tuple(enabled)
        unknown = sorted(set(names) - set(RULE_NAMES))
        if unknown:
            raise ValueError(f"unknown stopping rule(s) {unknown}; known: {list(RULE_NAMES)}")
        self.max_retries = max_retries
        self.timeout_seconds = timeout_seconds
        self.clock = clock
        self.enabled: frozenset[str] = frozenset(names)
        self.empty_patterns = _DEFAULT_EMPTY if empty_patterns is None else _compile(empty_patterns)
        self.resource_patterns = _DEFAULT_RESOURCE if resource_patterns is None else _compile(resource_patterns)
        self.infeasibility_patterns = (
            _DEFAULT_INFEASIBLE if infeasibility_patterns is None else _compile(infeasibility_patterns)
        )
        self._start: float | None = None
        self._clear()

    def settings(self) -> dict[str, Any]:
        """The constructor arguments that rebuild these rules with a blank episode: ``StoppingRules(**settings())``.

        A wrapper records this (not the object) in its spec, so every env rebuilt from the spec gets rules of its own
        instead of sharing one episode's counters with another env.
        """
        return {"max_retries": self.max_retries, "timeout_seconds": self.timeout_seconds, "clock": self.clock,
                "enabled": tuple(sorted(self.enabled)), "empty_patterns": self.empty_patterns,
                "resource_patterns": self.resource_patterns, "infeasibility_patterns": self.infeasibility_patterns}

    def _clear(self) -> None:
        self.steps_taken = 0
        self.no_progress_steps = 0
        self._seen: set[bytes] = set()
        self._last_state: Hashable | None = None
        self._has_state = False
        self._last_empty: str | None = None
        self._empty_run = 0

    def reset(self, observation: str | None = None, *, state: Hashable | None = None) -> None:
        """Start a new episode now; the reset observation/state, when given, is the baseline for progress."""
        self._clear()
        self._start = float(self.clock())
        if observation is not None:
            self._seen.add(_digest(identity(normalise(self._as_text(observation)))))
        if state is not None:
            self._last_state, self._has_state = state, True

    def elapsed(self) -> float:
        """Seconds since the episode started, from one clock reading."""
        now = float(self.clock())
        if self._start is None:
            self._start = now
        return max(0.0, now - self._start)

    def check_timeout(self) -> StopDecision | None:
        """The timeout rule alone, for callers that check before acting."""
        return self._timeout(self.elapsed())

    def observe(self, action: str, observation: str, *, state: Hashable | None = None) -> StopDecision | None:
        """Account for one step (``action`` sent, ``observation`` returned) and return the first rule that fires."""
        elapsed = self.elapsed()
        self.steps_taken += 1
        text = self._as_text(observation)
        norm = normalise(text)
        empty = self._update_empty(norm)
        progressed = self._update_progress(norm, state)
        checks: tuple[tuple[str, Callable[[], str | None]], ...] = (
            (EMPTY_RESULT_REPETITION, lambda: empty),
            (RESOURCE_UNAVAILABLE, lambda: self._match(self.resource_patterns, text, "error signal")),
            (NO_PROGRESS, lambda: None if progressed else self._no_progress_reason(state is not None)),
            (INFEASIBILITY_SIGNAL, lambda: self._match(self.infeasibility_patterns, text, "infeasibility")),
        )
        for rule, check in checks:
            if rule in self.enabled:
                reason = check()
                if reason is not None:
                    return self._decision(rule, reason, elapsed)
        return self._timeout(elapsed)

    # -- the individual rules -------------------------------------------------------------------------------------

    @staticmethod
    def _as_text(observation: object) -> str:
        return observation if isinstance(observation, str) else str(observation)

    def _update_empty(self, norm: str) -> str | None:
        """Track the run of identical empty results; return a reason once the run reaches two."""
        evidence = _first_match(self.empty_patterns, norm)
        if evidence is None:
            self._last_empty, self._empty_run = None, 0
            return None
        same = identity(norm)
        self._empty_run = self._empty_run + 1 if same == self._last_empty else 1
        self._last_empty = same
        if self._empty_run < 2:
            return None
        shown = _one_line(evidence.group(0), _EVIDENCE_CHARS) or "empty output"
        return f'{self._empty_run} consecutive identical empty results ("{shown}")'

    def _update_progress(self, norm: str, state: Hashable | None) -> bool:
        """Record this step; progress = a changed state, or (no state) an observation new for the episode."""
        key = _digest(identity(norm))
        if state is not None:
            progressed = not self._has_state or bool(state != self._last_state)
            self._last_state, self._has_state = state, True
        else:
            progressed = key not in self._seen
        self._seen.add(key)
        self.no_progress_steps = 0 if progressed else self.no_progress_steps + 1
        return progressed

    def _no_progress_reason(self, with_state: bool) -> str | None:
        if self.no_progress_steps < self.max_retries:
            return None
        what = "state unchanged" if with_state else "no new observation"
        return f"{self.no_progress_steps} consecutive steps without progress ({what}; budget {self.max_retries})"

    @staticmethod
    def _match(patterns: tuple[re.Pattern[str], ...], text: str, label: str) -> str | None:
        match = _first_match(patterns, text)
        if match is None:
            return None
        return f'{label} "{_one_line(match.group(0), _EVIDENCE_CHARS)}" in observation'

    def _timeout(self, elapsed: float) -> StopDecision | None:
        if TIMEOUT not in self.enabled or elapsed <= self.timeout_seconds:
            return None
        reason = f"{int(elapsed)}s elapsed, over the {self.timeout_seconds:g}s budget"
        return self._decision(TIMEOUT, reason, elapsed)

    def _decision(self, rule: str, reason: str, elapsed: float) -> StopDecision:
        return StopDecision(rule=rule, reason=reason, steps_taken=self.steps_taken, elapsed_seconds=int(elapsed))
