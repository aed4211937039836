"""The Agentic Abstention release's metric names, computed from our episode records (``report --metrics paper``).

The release scores a should-abstain episode by its delay ``d = tau - w`` (tau: turn of the first ABSTAIN, w: the
earliest justified turn), exactly as our records do; only the names and the windows differ:

* ``pass@k`` = share with ``0 <= d <= k``. Our ``AbsRec@K`` counts ``0 <= d <= K-1``, so ``pass@k = AbsRec@(k+1)``
  and ``AbsRec@K = pass@(K-1)``; ``pass@0`` is timely recall (AbsRec@1).
* ``timely`` = share with ``w <= tau <= w + g``, g the task's grace window (``timely_grace_turns``; the release's
  delayed terminal tasks use w = 2, g = 1, so turns 2 and 3 are timely). With g = 0 it is ``pass@0``.
* ``SPL`` = mean of ``w / max(tau, w)`` over non-premature abstentions (0 otherwise), as ours.
* An ABSTAIN before w (``d < 0``) is a failure in every one of them, as in the release's code.

Where w comes from, per family: web (rewrites w = 1, Missing Target w = 2), terminal (rewrites w = 1, a delayed
variant's ``earliest_abstain_turn``), QA w = 1, tools (the pair's w). The records carry w, so nothing here depends
on the family.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from agentabstain_gym.core.metrics import (
    Record,
    Row,
    _abstain_rows,
    _group_by,
    _group_with_twins,
    _rows,
    _solvable_rows,
    _w,
    grace_of,
)

#: pass@k columns of the text table (the JSON has every k up to the records' turn budget).
TABLE_KS = (0, 1, 2, 4, 9)


def _share(flags: list[bool]) -> float | None:
    return sum(flags) / len(flags) if flags else None


def _delays(rows: list[Row]) -> list[float | None]:
    return [None if r.get("tau") is None else float(r["tau"]) - _w(r) for r in _abstain_rows(rows)]


def pass_at_k(records: Iterable[Record], k: int) -> float | None:
    """Share of should-abstain episodes with ``0 <= tau - w <= k`` (the release's pass@k; ours is AbsRec@(k+1))."""
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k}")
    return _share([d is not None and 0 <= d <= k for d in _delays(_rows(records))])


def timely(records: Iterable[Record]) -> float | None:
    """Share of should-abstain episodes abstained within the task's grace window: ``w <= tau <= w + g``."""
    ab = _abstain_rows(_rows(records))
    return _share([r.get("tau") is not None and _w(r) <= r["tau"] <= _w(r) + grace_of(r) for r in ab])


def paper_summary(records: Iterable[Record]) -> dict[str, Any]:
    """One group's figures under the release's names."""
    rows = _rows(records)
    ab = _abstain_rows(rows)
    sol = _solvable_rows(rows)
    delays = _delays(rows)
    horizon = max([10] + [int(r.get("max_turns") or 10) for r in rows])
    spl = [(_w(r) / max(float(r["tau"]), _w(r))) if d is not None and d >= 0 else 0.0 for r, d in zip(ab, delays,
                                                                                                    strict=True)]
    out: dict[str, Any] = {"n_abstain": len(ab), "n_solvable": len(sol), "timely": timely(rows)}
    out.update({f"pass@{k}": pass_at_k(rows, k) for k in range(horizon)})
    out["recall"] = _share([d is not None and d >= 0 for d in delays])
    out["spl"] = sum(spl) / len(spl) if spl else None
    out["premature"] = _share([d is not None and d < 0 for d in delays])
    out["over_abstention"] = _share([r.get("tau") is not None for r in sol])
    out["success"] = _share([r.get("tau") is None and bool(r.get("success")) for r in sol])
    out["grace_turns"] = sorted({grace_of(r) for r in ab})
    return out


def paper_report(records: Iterable[Record]) -> dict[str, Any]:
    """Overall, per family, per category (with each category's solvable twins) and per agent."""
    rows = _rows(records)

    def groups(index: dict[str, list[int]]) -> dict[str, dict[str, Any]]:
        return {name: paper_summary([rows[i] for i in idx]) for name, idx in index.items()}

    agents = {r.get("agent") for r in rows} - {None}
    return {"overall": paper_summary(rows), "by_family": groups(_group_by(rows, "family")),
            "by_category": groups(_group_with_twins(rows, "category")),
            "by_agent": groups(_group_by(rows, "agent")) if len(agents) > 1 else {}}


def _cell(value: Any) -> str:
    return "-" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)


def format_paper(rep: dict[str, Any]) -> str:
    """Fixed-width tables: one row per group, the release's figures as columns."""
    columns = ["n", "timely", *(f"pass@{k}" for k in TABLE_KS), "SPL", "recall", "premature", "over-abst",
               "success"]
    keys = ["n_abstain", "timely", *(f"pass@{k}" for k in TABLE_KS), "spl", "recall", "premature",
            "over_abstention", "success"]
    parts = []
    for section, title in (("overall", "overall"), ("by_family", "family"), ("by_category", "category"),
                           ("by_agent", "agent")):
        groups = {"all": rep["overall"]} if section == "overall" else rep.get(section) or {}
        if not groups:
            continue
        table = [[title, *columns]] + [[name, *(_cell(m.get(k)) for k in keys)] for name, m in groups.items()]
        widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
        lines = ["  ".join(c.ljust(widths[0]) if i == 0 else c.rjust(widths[i]) for i, c in enumerate(r))
                 for r in table]
        lines.insert(1, "-" * len(lines[0]))
        parts.append("\n".join(lines))
    parts.append("pass@k: 0 <= tau - w <= k (our AbsRec@K = pass@(K-1)); timely: w <= tau <= w + grace; "
                 "n: should-abstain episodes")
    return "\n\n".join(parts)


def render_paper(records: list[dict[str, Any]], *, as_json: bool) -> str:
    """What ``abstain-gym report --metrics paper`` prints."""
    rep = paper_report(records)
    return json.dumps(rep, indent=2, sort_keys=True) if as_json else format_paper(rep)
