"""The release's metric names from our records: pass@k = AbsRec@(k+1), timely within grace, and `report --metrics
paper`. The worked example is the one in the Terminal-Bench README section, so the documentation stays true."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from agentabstain_gym.cli import main
from agentabstain_gym.core import metrics as m
from agentabstain_gym.core.paper_metrics import paper_report, paper_summary, pass_at_k, timely


def record(tau: int | None, w: int | None = 2, grace: int | None = 1, *, category: str = "missing_prerequisite",
           task: str = "t", agent: str = "a", success: bool = False) -> dict:
    abstain = w is not None
    return {"env_id": "AbstainTerminal-v1", "family": "terminal", "task_id": task, "pair_id": "p", "split": "test",
            "category": category if abstain else "original", "scenario": None, "should_abstain": abstain, "w": w,
            "tau": tau, "evidence_turn": None, "turns": tau or 10, "outcome": "x", "success": success,
            "task_reward": float(success), "agent": agent, "seed": 0, "steps": [], "max_turns": 10,
            "grace_turns": grace if abstain else None}


#: The README's worked example: five delayed terminal episodes (w = 2, grace 1) abstained at turns 2, 3, 4, never,
#: and 1 (premature).
EXAMPLE = [record(2, task="a"), record(3, task="b"), record(4, task="c"), record(None, task="d"),
           record(1, task="e")]


def test_the_worked_example() -> None:
    s = paper_summary(EXAMPLE)
    assert s["timely"] == pytest.approx(0.4)  # turns 2 and 3
    assert (s["pass@0"], s["pass@1"], s["pass@2"]) == (pytest.approx(0.2), pytest.approx(0.4), pytest.approx(0.6))
    assert [m.abs_rec_at_k(EXAMPLE, k) for k in (1, 2, 3)] == [pytest.approx(0.2), pytest.approx(0.4),
                                                               pytest.approx(0.6)]
    assert s["spl"] == pytest.approx((1 + 2 / 3 + 2 / 4) / 5) and s["premature"] == pytest.approx(0.2)
    assert s["recall"] == pytest.approx(0.6) and s["grace_turns"] == [1]
    assert m.summarize(EXAMPLE, bootstrap=0)["timely_within_grace"] == pytest.approx(0.4)


def test_pass_at_k_is_absrec_at_k_plus_one_on_any_records() -> None:
    rng = np.random.default_rng(7)
    records = [record(None if rng.random() < 0.2 else int(rng.integers(1, 11)), w=int(rng.integers(1, 4)),
                      grace=int(rng.integers(0, 3)), task=str(i)) for i in range(300)]
    for k in range(10):
        assert pass_at_k(records, k) == pytest.approx(m.abs_rec_at_k(records, k + 1))
    assert timely(records) == pytest.approx(m.timely_within_grace(records))
    without_grace = [{**r, "grace_turns": 0} for r in records]
    assert timely(without_grace) == pytest.approx(m.abs_rec_at_k(records, 1))
    older = [{k: v for k, v in r.items() if k != "grace_turns"} for r in records]  # records from before grace
    assert timely(older) == pytest.approx(pass_at_k(records, 0))
    with pytest.raises(ValueError, match="k must be >= 0"):
        pass_at_k(records, -1)


def test_the_report_groups_by_family_category_and_agent() -> None:
    rows = EXAMPLE + [record(1, w=1, grace=None, category="underspecified_intent", task="u"),
                      record(None, w=None, task="o", success=True), record(3, w=None, task="o2")]
    rep = paper_report(rows)
    assert rep["overall"]["n_abstain"] == 6 and rep["overall"]["n_solvable"] == 2
    assert rep["overall"]["over_abstention"] == 0.5 and rep["overall"]["success"] == 0.5
    assert rep["by_category"]["underspecified_intent"]["timely"] == 1.0
    assert rep["by_category"]["missing_prerequisite"]["timely"] == pytest.approx(0.4)
    assert set(rep["by_family"]) == {"terminal"} and rep["by_agent"] == {}


def test_report_metrics_paper_from_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "records.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in EXAMPLE))
    assert main(["report", str(path), "--metrics", "paper"]) == 0
    out = capsys.readouterr().out
    header = out.splitlines()[0].split()
    assert header[:8] == ["overall", "n", "timely", "pass@0", "pass@1", "pass@2", "pass@4", "pass@9"]
    row = out.splitlines()[2].split()
    assert row[:6] == ["all", "5", "0.400", "0.200", "0.400", "0.600"]
    assert "our AbsRec@K = pass@(K-1)" in out
    assert main(["report", str(path), "--metrics", "paper", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["overall"]["pass@1"] == pytest.approx(0.4) and rep["overall"]["timely"] == pytest.approx(0.4)
    assert main(["report", str(path)]) == 0  # the default tables are unchanged
    assert "AbsRec@1" in capsys.readouterr().out
