"""`abstain-gym eval ENV --tasks FILE` runs a family's own task data (web rows, QA questions, terminal task folders,
tool pair files) and `--env-kwargs JSON` passes keyword arguments to the envs; every misuse is one line, exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import pytest

import agentabstain_gym  # noqa: F401
from agentabstain_gym.cli import main

WEB_ROWS = Path(__file__).parent / "data" / "web" / "paper_rows.jsonl"
TERMINAL = Path(__file__).parent / "data" / "terminal_tasks"


def one_line_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code  # type: ignore[assignment]
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_eval_runs_a_web_task_file_with_env_kwargs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "runs.jsonl"
    code = main(["eval", "AbstainWebShop-v1", "--tasks", str(WEB_ROWS), "--agent", "never-abstain", "--quiet",
                 "--out", str(out), "--env-kwargs", '{"max_turns": 4, "missing_target": "paper"}'])
    assert code == 0
    got = records(out)
    rows = records(WEB_ROWS)
    assert len(got) == len(rows)  # every row, whatever its split
    assert sorted(r["category"] for r in got) == sorted(
        {"original": "solvable", "missing_target": "missing_target"}.get(r["variant_type"])
        or {"false_premises": "false_premise"}.get(r["category"], r["category"]) for r in rows)
    assert max(r["turns"] for r in got) <= 4  # --env-kwargs reached the env
    assert "split all" in capsys.readouterr().err


def test_eval_tasks_works_for_qa_terminal_and_tools(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps({"id": "d1", "title": "Lake Vorn", "text": "Lake Vorn is 42 metres deep."}))
    questions = tmp_path / "questions.jsonl"
    questions.write_text("\n".join(json.dumps(r) for r in [
        {"question": "How deep is Lake Vorn?", "reference_answers": ["42 metres"], "should_abstain": False},
        {"question": "Which lake is the nicest?", "reference_answers": None, "should_abstain": True,
         "metadata": {"category": "subjective"}}]))
    out = tmp_path / "qa.jsonl"
    assert main(["eval", "AbstainQA-v0", "--tasks", str(questions), "--env-kwargs",
                 json.dumps({"corpus_file": str(corpus)}), "--agent", "always-abstain", "--quiet",
                 "--out", str(out)]) == 0
    assert sorted(r["extras"]["instruction"] for r in records(out)) == ["How deep is Lake Vorn?", "Which lake is the nicest?"]
    out = tmp_path / "terminal.jsonl"
    assert main(["eval", "AbstainTerminal-v1", "--tasks", str(TERMINAL), "--agent", "always-abstain", "--quiet",
                 "--out", str(out)]) == 0
    own = gym.make("AbstainTerminal-v1", tasks_dir=str(TERMINAL)).unwrapped.tasks()
    assert sorted(r["task_id"] for r in records(out)) == sorted(t.task_id for t in own)
    pairs = tmp_path / "pairs.yaml"
    assert main(["tools", "generate", "--seed", "3", "--out", str(pairs), "--sandbox", "Calendar",
                 "--per-template", "1"]) == 0
    out = tmp_path / "tools.jsonl"
    assert main(["eval", "AbstainTools-v0", "--tasks", str(pairs), "--agent", "always-abstain", "--quiet",
                 "--out", str(out)]) == 0
    own = gym.make("AbstainTools-v0", pairs_file=str(pairs)).unwrapped.tasks()
    assert sorted(r["task_id"] for r in records(out)) == sorted(t.task_id for t in own)


@pytest.mark.parametrize(("argv", "needle"), [
    (["--tasks", str(WEB_ROWS), "AbstainQA-v0"], "AbstainQA-v0: questions_file and corpus_file go together"),
    (["--tasks", str(WEB_ROWS), "AbstainQA-v0", "AbstainWebShop-v1"], "give exactly one env id"),
    (["--tasks", "no/such/file.jsonl", "AbstainWebShop-v1"], "--tasks: no such file or folder"),
    (["--tasks", str(TERMINAL), "AbstainWebShop-v1"], "AbstainWebShop-v1: "),
    (["--env-kwargs", "{max_turns: 3}", "AbstainWebShop-v1"], "--env-kwargs is not valid JSON"),
    (["--env-kwargs", "[3]", "AbstainWebShop-v1"], "--env-kwargs must be a JSON object"),
    (["--env-kwargs", '{"max_turn": 3}', "AbstainWebShop-v1"], "AbstainWebShop-v1 takes no max_turn; it takes"),
    (["--env-kwargs", '{"missing_target": "loose"}', "AbstainWebShop-v1"], "missing_target must be one of"),
    (["--env-kwargs", json.dumps({"tasks_file": str(WEB_ROWS)}), "--tasks", str(WEB_ROWS), "AbstainWebShop-v1"],
     "--tasks and --env-kwargs both give tasks_file"),
])
def test_misuse_is_one_line(argv: list[str], needle: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "runs.jsonl"
    assert needle in one_line_exit_2(["eval", *argv, "--quiet", "--out", str(out)], capsys)
    assert not out.exists()
