"""`abstain-gym report` on hand-made records: the report's keys and numbers, and tolerance of broken lines."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from agentabstain_gym.cli import main
from agentabstain_gym.core import outcome

REPORT_KEYS = {
    "n_abstain", "n_solvable", "n_pairs", *(f"absrec@{k}" for k in range(1, 11)),
    *(f"absrec_turn@{k}" for k in range(1, 11)), "overall_recall", "spl", "premature_rate",
    "over_abstention_rate", "over_abstention_by_turn", "success_rate", "mean_task_reward", "act", "abstain",
    "paired_accuracy", "car",
}


def record(task_id: str, *, should_abstain: bool, w: int | None, tau: int | None, passed: bool = False,
           category: str = "answerable", pair_id: str | None = None, family: str = "qa") -> dict:
    kind = outcome.classify(should_abstain, w, tau, passed)
    return {
        "env_id": "AbstainQA-v0", "family": family, "task_id": task_id, "pair_id": pair_id, "split": "test",
        "category": category, "scenario": None, "should_abstain": should_abstain, "w": w, "tau": tau,
        "evidence_turn": 0 if w == 1 else None, "turns": tau or 3, "outcome": kind,
        "success": outcome.side_correct(kind), "task_reward": 1.0 if passed else 0.0, "committed": None,
        "agent": "hand", "seed": 0, "steps": [], "max_turns": 10,
    }


def hand_made() -> list[dict]:
    return [
        # the worked example of docs/design.md, section 6: w=(1,2,3), tau=(1,None,4)
        record("a1", should_abstain=True, w=1, tau=1, category="subjective", pair_id="p1"),
        record("a2", should_abstain=True, w=2, tau=None, category="answer_unknown", pair_id="p2"),
        record("a3", should_abstain=True, w=3, tau=4, category="answer_unknown", pair_id="p3"),
        record("s1", should_abstain=False, w=None, tau=None, passed=True, pair_id="p1"),
        record("s2", should_abstain=False, w=None, tau=2, pair_id="p2"),
        record("s3", should_abstain=False, w=None, tau=None, passed=True, pair_id="p3"),
    ]


def write(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_report_json_has_its_keys_and_numbers(tmp_path: Path) -> None:
    runs = write(tmp_path / "runs.jsonl", hand_made())
    out = subprocess.run([sys.executable, "-m", "agentabstain_gym.cli", "report", str(runs), "--json"],
                         capture_output=True, text=True, check=True)
    rep = json.loads(out.stdout)
    assert set(rep) >= {"overall", "by_family", "by_category", "by_scenario"}
    overall = rep["overall"]
    assert set(overall) >= REPORT_KEYS
    assert overall["absrec@1"] == 1 / 3 and overall["absrec@2"] == 2 / 3 and overall["absrec@10"] == 2 / 3
    assert abs(overall["spl"] - (1 + 0 + 0.75) / 3) < 1e-12
    assert overall["over_abstention_rate"] == 1 / 3
    assert overall["over_abstention_by_turn"][:3] == [0.0, 1 / 3, 1 / 3]
    assert overall["n_pairs"] == 3 and overall["paired_accuracy"] == 2 / 3
    assert rep["by_family"]["qa"]["n_abstain"] == 3
    # a category groups its abstain records with their solvable twins
    unknown = rep["by_category"]["answer_unknown"]
    assert unknown["n_abstain"] == 2 and unknown["n_solvable"] == 2 and unknown["over_abstention_rate"] == 0.5
    assert rep["by_scenario"] == {}


def test_report_skips_truncated_lines_with_a_warning(tmp_path: Path, capsys) -> None:
    runs = write(tmp_path / "runs.jsonl", hand_made())
    with open(runs, "a") as fh:
        fh.write('{"env_id": "AbstainQA-v0", "task_id": "half')
    assert main(["report", str(runs), "--json"]) == 0
    captured = capsys.readouterr()
    assert "runs.jsonl:7" in captured.err
    assert json.loads(captured.out)["overall"]["n_abstain"] == 3


def test_report_tables_and_missing_file(tmp_path: Path, capsys) -> None:
    runs = write(tmp_path / "runs.jsonl", hand_made())
    assert main(["report", str(runs)]) == 0
    text = capsys.readouterr().out
    assert "AbsRec@1" in text and "0.333" in text and "subjective" in text
    assert main(["report", str(tmp_path / "nope.jsonl")]) == 2
    assert "no such file" in capsys.readouterr().err


def tool_records() -> list[dict]:
    """Two scenarios of tool pairs: S1 (one pair solved on both sides, one post-hoc), S6 (one implicit)."""
    def tool(task_id: str, scenario: str, pair_id: str, *, should_abstain: bool, w: int | None, tau: int | None,
             passed: bool = False, outcome_class: str | None = None) -> dict:
        r = record(task_id, should_abstain=should_abstain, w=w, tau=tau, passed=passed, category="x",
                   pair_id=pair_id, family="tools")
        return {**r, "env_id": "AbstainTools-v0", "scenario": scenario, "extras": {"outcome_class": outcome_class}}

    return [
        tool("a", "S1", "p1", should_abstain=True, w=1, tau=1, outcome_class="successful"),
        tool("b", "S1", "p1", should_abstain=False, w=None, tau=None, passed=True),
        tool("c", "S1", "p2", should_abstain=True, w=1, tau=3, outcome_class="post_hoc"),
        tool("d", "S1", "p2", should_abstain=False, w=None, tau=None, passed=True),
        tool("e", "S6", "p3", should_abstain=True, w=2, tau=None, outcome_class="implicit"),
        tool("f", "S6", "p3", should_abstain=False, w=None, tau=None, passed=True),
    ]


def test_report_shows_the_papers_scenario_table_with_macro_row_and_classes(tmp_path: Path, capsys) -> None:
    runs = write(tmp_path / "tools.jsonl", tool_records())
    assert main(["report", str(runs), "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    # S1: act 2/2, abstain 2/2 (tau >= w on both; the commit is the class, not the timing), S6: act 1, abstain 0
    assert rep["by_scenario"]["S1"]["abstention_classes"] == {"post_hoc": 1, "successful": 1}
    assert rep["scenario_macro"]["act"] == 1.0
    assert rep["scenario_macro"]["paired_accuracy"] == (rep["by_scenario"]["S1"]["paired_accuracy"] + 0.0) / 2
    assert main(["report", str(runs)]) == 0
    text = capsys.readouterr().out
    table = text[text.index("scenario    Act"):]
    rows = {line.split()[0]: line.split()[1:] for line in table.splitlines()[2:]}
    assert set(rows) == {"S1", "S6", "macro"}
    # columns: Act Abstain PairAcc CAR Successful Implicit PostHoc NoAbst
    assert rows["S1"][4:] == ["0.500", "0.000", "0.500", "0.000"]
    assert rows["S6"][4:] == ["0.000", "1.000", "0.000", "0.000"]
    assert rows["macro"][4:] == ["0.250", "0.500", "0.250", "0.000"]
