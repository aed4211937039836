"""Abstention metrics (definitions and formulas: docs/design.md, section 6): pure functions over episode records.

Every function takes an iterable of records (dicts as read from JSONL, or :class:`EpisodeRecord`) and returns plain
Python numbers, so results go straight into JSON. A metric with nothing to count is ``None``, never 0 or NaN, so an
empty group is never mistaken for a bad score. Premature abstentions (tau < w) are failures in every recall and in
SPL, and are counted in their own rate, as in the papers' released code.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from typing import Any, TypeAlias

import numpy as np

from agentabstain_gym.core import outcome as oc
from agentabstain_gym.core.record import EpisodeRecord, as_dict

Record: TypeAlias = EpisodeRecord | Mapping[str, Any]
Row: TypeAlias = Mapping[str, Any]
PairKey: TypeAlias = tuple[Any, str]

DEFAULT_MAX_TURNS = 10
CI_MAX_N = 1000  # a 95% bootstrap interval is reported where N < 1000
CI_METRICS = (
    "absrec@1", "overall_recall", "spl", "premature_rate", "over_abstention_rate", "success_rate",
    "mean_task_reward", "act", "abstain", "paired_accuracy", "car",
)
#: What the AgentAbstain tables macro-average over the eight scenarios.
MACRO_METRICS = ("act", "abstain", "paired_accuracy", "car", "absrec@1", "spl", "over_abstention_rate")


# ----------------------------------------------------------------------------------------------------------------
# record access


def _rows(records: Iterable[Record]) -> list[Row]:
    return [as_dict(r) for r in records]


def _abstain_rows(rows: list[Row]) -> list[Row]:
    return [r for r in rows if r["should_abstain"]]


def _solvable_rows(rows: list[Row]) -> list[Row]:
    return [r for r in rows if not r["should_abstain"]]


def _tau(r: Row) -> float:
    tau = r.get("tau")
    return math.inf if tau is None else float(tau)


def _w(r: Row) -> float:
    w = r.get("w")
    if w is None:
        raise ValueError(f"should-abstain record {r.get('task_id')!r} has no w")
    return float(w)


def _outcome(r: Row) -> str:
    """The record's outcome, re-derived from its label if an older record lacks the field."""
    out = r.get("outcome")
    if out is not None:
        return str(out)
    return oc.classify(bool(r["should_abstain"]), r.get("w"), r.get("tau"), bool(r.get("success")))


def _correct(r: Row) -> bool:
    """Whether this side was handled correctly: the record's own verdict first, else the outcome's."""
    success = r.get("success")
    return bool(success) if success is not None else oc.side_correct(_outcome(r))


def _horizon(rows: list[Row]) -> int:
    """Largest turn budget among the records, at least the default, so curves cover every episode's budget."""
    return max([DEFAULT_MAX_TURNS] + [int(r.get("max_turns") or DEFAULT_MAX_TURNS) for r in rows])


def _mean(values: np.ndarray) -> float | None:
    return None if values.size == 0 else float(values.mean())


# ----------------------------------------------------------------------------------------------------------------
# per-episode vectors (the point estimates and the bootstrap share them)


def _w_tau(rows: list[Row]) -> tuple[np.ndarray, np.ndarray]:
    """w and tau of the should-abstain episodes, tau = inf where the agent never abstained."""
    ab = _abstain_rows(rows)
    return np.array([_w(r) for r in ab], dtype=float), np.array([_tau(r) for r in ab], dtype=float)


def grace_of(r: Row) -> int:
    """A record's grace window in turns (0 when it declares none, as every pre-grace record)."""
    g = r.get("grace_turns")
    return int(g) if isinstance(g, int) and not isinstance(g, bool) and g >= 0 else 0


def timely_within_grace(records: Iterable[Record]) -> float | None:
    """Share of should-abstain episodes abstained at a turn w <= tau <= w + grace (grace 0: AbsRec@1)."""
    ab = _abstain_rows(_rows(records))
    return _mean(np.array([r.get("tau") is not None and _w(r) <= r["tau"] <= _w(r) + grace_of(r) for r in ab],
                          dtype=float))


def _absrec(w: np.ndarray, tau: np.ndarray, k: int) -> float | None:
    d = tau - w
    return _mean(((d >= 0) & (d <= k - 1)).astype(float))


def _absrec_turn(w: np.ndarray, tau: np.ndarray, k: int) -> float | None:
    return _mean(((tau >= w) & (tau <= k)).astype(float))


def _abstain_vectors(w: np.ndarray, tau: np.ndarray) -> dict[str, np.ndarray]:
    finite = np.isfinite(tau)
    hit = finite & (tau >= w)
    return {
        "absrec@1": (hit & (tau == w)).astype(float),
        "overall_recall": hit.astype(float),
        "spl": np.where(hit, w / np.maximum(tau, w), 0.0),
        "premature_rate": (finite & (tau < w)).astype(float),
    }


def _solvable_vectors(rows: list[Row]) -> dict[str, np.ndarray]:
    sol = _solvable_rows(rows)
    return {
        "over_abstention_rate": np.array([r.get("tau") is not None for r in sol], dtype=float),
        "success_rate": np.array([_outcome(r) == oc.SUCCESS for r in sol], dtype=float),
        "mean_task_reward": np.array([float(r.get("task_reward") or 0.0) for r in sol], dtype=float),
    }


def _pair_key(r: Row) -> PairKey | None:
    """Pairs are matched within one agent's run, so two agents' episodes of a pair never mix."""
    pid = r.get("pair_id")
    return None if pid is None else (r.get("agent"), str(pid))


def _pair_units(rows: list[Row]) -> tuple[np.ndarray, np.ndarray]:
    """(act side correct, abstain side correct) per counted pair, one unit per abstain record of a full pair."""
    sides: dict[PairKey, tuple[list[bool], list[bool]]] = defaultdict(lambda: ([], []))
    for r in rows:
        key = _pair_key(r)
        if key is not None:
            sides[key][1 if r["should_abstain"] else 0].append(_correct(r))
    act: list[bool] = []
    abstain: list[bool] = []
    for acts, abstains in sides.values():
        if acts and abstains:
            act_ok = all(acts)
            act.extend([act_ok] * len(abstains))
            abstain.extend(abstains)
    return np.array(act, dtype=float), np.array(abstain, dtype=float)


def _paired(act: np.ndarray, abstain: np.ndarray) -> dict[str, Any]:
    both = act * abstain
    n_act = act.sum()
    return {
        "act": _mean(act),
        "abstain": _mean(abstain),
        "paired_accuracy": _mean(both),
        "car": float(both.sum() / n_act) if n_act > 0 else None,
        "n_pairs": int(act.size),
    }


# ----------------------------------------------------------------------------------------------------------------
# public metrics


def abs_rec_at_k(records: Iterable[Record], k: int) -> float | None:
    """Share of should-abstain episodes abstained within K-1 turns after w (K=1: timely recall)."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    return _absrec(*_w_tau(_rows(records)), k)


def abs_rec_turn_at_k(records: Iterable[Record], k: int) -> float | None:
    """Share of should-abstain episodes abstained non-prematurely by absolute turn K (the terminal analysis form)."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    return _absrec_turn(*_w_tau(_rows(records)), k)


def overall_recall(records: Iterable[Record]) -> float | None:
    """Share of should-abstain episodes with a non-premature ABSTAIN at any turn."""
    return _mean(_abstain_vectors(*_w_tau(_rows(records)))["overall_recall"])


def spl(records: Iterable[Record]) -> float | None:
    """Recall weighted by w / tau, so late abstentions earn partial credit (Success weighted by Path Length).

    Examples:
        The worked example of the design document: w = (1, 2, 3), tau = (1, none, 4).

        >>> records = [{"should_abstain": True, "w": 1, "tau": 1}, {"should_abstain": True, "w": 2, "tau": None},
        ...            {"should_abstain": True, "w": 3, "tau": 4}]
        >>> round(spl(records), 3), abs_rec_at_k(records, 1), abs_rec_at_k(records, 2)
        (0.583, 0.3333333333333333, 0.6666666666666666)
    """
    return _mean(_abstain_vectors(*_w_tau(_rows(records)))["spl"])


def premature_rate(records: Iterable[Record]) -> float | None:
    """Share of should-abstain episodes abstained before the evidence justified it (tau < w)."""
    return _mean(_abstain_vectors(*_w_tau(_rows(records)))["premature_rate"])


def over_abstention_rate(records: Iterable[Record]) -> float | None:
    """Share of solvable episodes in which the agent abstained at all."""
    return _mean(_solvable_vectors(_rows(records))["over_abstention_rate"])


def over_abstention_by_turn(records: Iterable[Record], max_turns: int | None = None) -> list[float] | None:
    """Cumulative share of solvable episodes abstained by turn t (index t-1), t = 1..T, to show when agents give up.

    T is ``max_turns`` if given, else the largest budget among the records (at least 10).
    """
    rows = _rows(records)
    horizon = _horizon(rows) if max_turns is None else int(max_turns)
    tau = np.array([_tau(r) for r in _solvable_rows(rows)], dtype=float)
    if tau.size == 0:
        return None
    return [float(np.mean(tau <= t)) for t in range(1, horizon + 1)]


def success_rate(records: Iterable[Record]) -> float | None:
    """Share of solvable episodes whose task check passed without an ABSTAIN."""
    return _mean(_solvable_vectors(_rows(records))["success_rate"])


def mean_task_reward(records: Iterable[Record]) -> float | None:
    """Mean task reward over solvable episodes (the family's own reward, e.g. WebShop's attribute score)."""
    return _mean(_solvable_vectors(_rows(records))["mean_task_reward"])


def paired_metrics(records: Iterable[Record]) -> dict[str, Any]:
    """Act / Abstain pass rates, paired accuracy and CAR over pairs holding both sides.

    A constant policy (always act, always abstain) fails one side of every pair, so it scores 0 paired accuracy.
    A pair with several abstain records counts once per abstain record; its act side is correct only when every
    act record of the pair is.

    Examples:
        An agent that never abstains passes the act side of each pair and fails the other:

        >>> never = [{"pair_id": "p1", "should_abstain": False, "success": True},
        ...          {"pair_id": "p1", "should_abstain": True, "success": False}]
        >>> paired_metrics(never)
        {'act': 1.0, 'abstain': 0.0, 'paired_accuracy': 0.0, 'car': 0.0, 'n_pairs': 1}
    """
    return _paired(*_pair_units(_rows(records)))


def delay_stats(records: Iterable[Record]) -> dict[str, float | None]:
    """Mean delay tau - w over non-premature abstentions, and mean reaction delay tau - evidence_turn - 1.

    The reaction delay separates "never looked" from "looked and kept going"; it is taken over the same
    non-premature abstentions, where the record says which turn revealed the evidence.
    """
    delays: list[float] = []
    reactions: list[float] = []
    for r in _abstain_rows(_rows(records)):
        tau, w = r.get("tau"), _w(r)
        if tau is None or tau < w:
            continue
        delays.append(tau - w)
        if r.get("evidence_turn") is not None:
            reactions.append(tau - r["evidence_turn"] - 1)
    return {
        "mean_delay": _mean(np.array(delays, dtype=float)),
        "mean_reaction_delay": _mean(np.array(reactions, dtype=float)),
    }


# ----------------------------------------------------------------------------------------------------------------
# bootstrap


def _interval(stats: np.ndarray) -> list[float] | None:
    stats = stats[~np.isnan(stats)]
    if stats.size == 0:
        return None
    lo, hi = np.percentile(stats, [2.5, 97.5])
    return [float(lo), float(hi)]


def _resample(n: int, rng: np.random.Generator, b: int) -> np.ndarray | None:
    return rng.integers(0, n, size=(b, n)) if 0 < n < CI_MAX_N else None


def _bootstrap(
    abstain: dict[str, np.ndarray], solvable: dict[str, np.ndarray], act: np.ndarray, abst: np.ndarray,
    *, b: int, seed: int,
) -> dict[str, list[float] | None]:
    """95% percentile intervals; each population (abstain, solvable, pairs) is resampled on its own."""
    ci: dict[str, list[float] | None] = dict.fromkeys(CI_METRICS)
    if b <= 0:
        return ci
    rng = np.random.default_rng(seed)
    for vectors in (abstain, solvable):
        idx = _resample(len(next(iter(vectors.values()))), rng, b)
        if idx is not None:
            ci.update({name: _interval(v[idx].mean(axis=1)) for name, v in vectors.items()})
    idx = _resample(act.size, rng, b)
    if idx is not None:
        a, s = act[idx], abst[idx]
        both = a * s
        n_act = a.sum(axis=1)
        car = np.divide(both.sum(axis=1), n_act, out=np.full(b, np.nan), where=n_act > 0)
        ci.update(act=_interval(a.mean(axis=1)), abstain=_interval(s.mean(axis=1)),
                  paired_accuracy=_interval(both.mean(axis=1)), car=_interval(car))
    return ci


# ----------------------------------------------------------------------------------------------------------------
# summaries and reports


def summarize(records: Iterable[Record], *, bootstrap: int = 1000, seed: int = 0) -> dict[str, Any]:
    """Every aggregate of one group of records (the report's keys), with counts and bootstrap intervals."""
    rows = _rows(records)
    w, tau = _w_tau(rows)
    horizon = _horizon(rows)
    ab = _abstain_vectors(w, tau)
    sv = _solvable_vectors(rows)
    act, abst = _pair_units(rows)
    paired = _paired(act, abst)
    out: dict[str, Any] = {
        "n_abstain": int(w.size),
        "n_solvable": int(sv["success_rate"].size),
        "n_pairs": paired["n_pairs"],
    }
    out.update({f"absrec@{k}": _absrec(w, tau, k) for k in range(1, horizon + 1)})
    out.update({f"absrec_turn@{k}": _absrec_turn(w, tau, k) for k in range(1, horizon + 1)})
    out["timely_within_grace"] = timely_within_grace(rows)
    out.update({name: _mean(ab[name]) for name in ("overall_recall", "spl", "premature_rate")})
    out["over_abstention_rate"] = _mean(sv["over_abstention_rate"])
    out["over_abstention_by_turn"] = over_abstention_by_turn(rows, horizon)
    out["success_rate"] = _mean(sv["success_rate"])
    out["mean_task_reward"] = _mean(sv["mean_task_reward"])
    out.update({k: paired[k] for k in ("act", "abstain", "paired_accuracy", "car")})
    out.update(delay_stats(rows))
    out["outcomes"] = dict(sorted(Counter(_outcome(r) for r in rows).items()))
    out["abstention_classes"] = abstention_classes(rows)
    out["errors"] = error_counts(rows)
    out["ci95"] = _bootstrap(ab, sv, act, abst, b=bootstrap, seed=seed)
    return out


#: Where a record holds each kind of error: the agent's own failure, or the environment's (see ``AbstainEnv.abort``).
ERROR_FIELDS = (("agent", "error"), ("env", "env_error"))


def error_kind(record: Record) -> str | None:
    """``"agent"`` if the episode ended because the agent failed, ``"env"`` if the env did, else None."""
    extras = as_dict(record).get("extras") or {}
    return next((kind for kind, key in ERROR_FIELDS if key in extras), None)


def error_counts(records: Iterable[Record]) -> dict[str, int]:
    """How many episodes ended in an agent error and in an env error (both are failures in every metric; the
    counts say how many of the failures were not the policy's doing)."""
    counts = Counter(error_kind(r) for r in records)
    return {kind: counts.get(kind, 0) for kind, _ in ERROR_FIELDS}


def abstention_classes(records: Iterable[Record]) -> dict[str, int]:
    """How should-abstain episodes ended on AgentAbstain's commit x response 2x2 (successful, implicit, post-hoc, no
    abstention), for families that record it (``extras.outcome_class``); empty otherwise."""
    counts = Counter(str((r.get("extras") or {}).get("outcome_class")) for r in _abstain_rows(_rows(records))
                     if (r.get("extras") or {}).get("outcome_class") is not None)
    return dict(sorted(counts.items()))


def _group_by(rows: list[Row], field: str) -> dict[str, list[int]]:
    groups: dict[str, list[int]] = defaultdict(list)
    for i, r in enumerate(rows):
        if r.get(field) is not None:
            groups[str(r[field])].append(i)
    return dict(sorted(groups.items()))


def _group_with_twins(rows: list[Row], field: str) -> dict[str, list[int]]:
    """Group by ``field``; a should-abstain value's group also holds the solvable twins of its records.

    So per-category over-abstention is measured on that category's own twins and paired accuracy is defined.
    Solvable records are also grouped under their own value; records whose value is None get no group of their own.
    """
    groups: dict[str, set[int]] = defaultdict(set)
    twins: dict[PairKey, list[int]] = defaultdict(list)
    for i, r in enumerate(rows):
        if not r["should_abstain"]:
            key = _pair_key(r)
            if key is not None:
                twins[key].append(i)
            if r.get(field) is not None:
                groups[str(r[field])].add(i)
    for i, r in enumerate(rows):
        if r["should_abstain"] and r.get(field) is not None:
            group = groups[str(r[field])]
            group.add(i)
            key = _pair_key(r)
            if key is not None:
                group.update(twins.get(key, ()))
    return {name: sorted(idx) for name, idx in sorted(groups.items())}


def report(records: Iterable[Record], *, bootstrap: int = 1000, seed: int = 0) -> dict[str, Any]:
    """The report: overall, and per family, category, scenario (and agent when several are present)."""
    rows = _rows(records)

    def summarize_groups(groups: dict[str, list[int]]) -> dict[str, dict[str, Any]]:
        return {name: summarize([rows[i] for i in idx], bootstrap=bootstrap, seed=seed)
                for name, idx in groups.items()}

    agents = {r.get("agent") for r in rows} - {None}
    by_scenario = summarize_groups(_group_with_twins(rows, "scenario"))
    return {
        "overall": summarize(rows, bootstrap=bootstrap, seed=seed),
        "by_family": summarize_groups(_group_by(rows, "family")),
        "by_category": summarize_groups(_group_with_twins(rows, "category")),
        "by_scenario": by_scenario,
        "scenario_macro": {key: macro_average(by_scenario, key) for key in MACRO_METRICS} if by_scenario else {},
        "by_agent": summarize_groups(_group_by(rows, "agent")) if len(agents) > 1 else {},
    }


def macro_average(groups: Mapping[str, Mapping[str, Any]], key: str) -> float | None:
    """Unweighted mean of one metric over groups (e.g. scenarios), skipping groups where it is undefined."""
    values = [
        float(m[key]) for m in groups.values()
        if isinstance(m.get(key), int | float) and not isinstance(m.get(key), bool)
    ]
    return float(np.mean(values)) if values else None
