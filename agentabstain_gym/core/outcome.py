"""Episode outcomes (docs/design.md, section 4), decided in one place so every family and the metrics agree."""

from __future__ import annotations

TIMELY = "timely"
LATE = "late"
PREMATURE = "premature"
MISSED = "missed"
OVER_ABSTAIN = "over_abstain"
SUCCESS = "success"
FAILURE = "failure"

ABSTAIN_SIDE_OUTCOMES = (TIMELY, LATE, PREMATURE, MISSED)
SOLVABLE_SIDE_OUTCOMES = (OVER_ABSTAIN, SUCCESS, FAILURE)


def classify(should_abstain: bool, w: int | None, tau: int | None, task_passed: bool) -> str:
    """Outcome of an episode from its label, its first ABSTAIN turn ``tau`` and the family's task check.

    Examples:
        >>> [classify(True, 2, tau, False) for tau in (1, 2, 3, None)]
        ['premature', 'timely', 'late', 'missed']
        >>> classify(False, None, 3, True), classify(False, None, None, True)
        ('over_abstain', 'success')
    """
    if should_abstain:
        if w is None:
            raise ValueError("a should-abstain episode needs w")
        if tau is None:
            return MISSED
        if tau < w:
            return PREMATURE
        return TIMELY if tau == w else LATE
    if tau is not None:
        return OVER_ABSTAIN
    return SUCCESS if task_passed else FAILURE


def side_correct(outcome: str) -> bool:
    """Whether this side of a pair was handled correctly: a justified ABSTAIN, or a passed task."""
    return outcome in (TIMELY, LATE, SUCCESS)
