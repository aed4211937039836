"""Benchmark fingerprints: pinned per registered id, sensitive to what defines a task, carried by every record.

If ``test_registered_fingerprints_are_pinned`` fails, a change altered what an id means. Such a change must bump
the id's version (-v0 -> -v1) and add a line to its Version History; then regenerate the pinned file with
``python -m agentabstain_gym.fingerprints --write tests/data/fingerprints.json``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import pytest
from conftest import require_backend

import agentabstain_gym
from agentabstain_gym import fingerprints
from agentabstain_gym.cli import main
from agentabstain_gym.core.fingerprint import fingerprint
from agentabstain_gym.core.task import Task
from agentabstain_gym.runner import run_episode

PINNED = Path(__file__).parent / "data" / "fingerprints.json"
PACKAGE = Path(agentabstain_gym.__file__).parent
FAMILY_IDS = ("AbstainQA-v0", "AbstainWebShop-v1", "AbstainTools-v0", "AbstainTerminal-v1")


def test_registered_fingerprints_are_pinned() -> None:
    require_backend("bwrap")  # the terminal ids are built like any other (no episode runs)
    pinned = fingerprints.read_pinned(PINNED)
    now = fingerprints.current()
    changed = fingerprints.differences(pinned, now)
    assert not changed, ("benchmark fingerprints differ from tests/data/fingerprints.json:\n  " + "\n  ".join(changed)
                         + "\n" + fingerprints.VERSION_RULE[0].upper() + fingerprints.VERSION_RULE[1:] + ".")
    assert set(now) == set(agentabstain_gym.ENV_IDS + agentabstain_gym.SB3_ENV_IDS)
    assert len(set(now.values())) == len(agentabstain_gym.ENV_IDS)  # one value per task list; forms share theirs


# ----- what a fingerprint is sensitive to ------------------------------------------------------------------------
def _task(**changes: object) -> Task:
    fields = {"task_id": "t1", "family": "qa", "instruction": "Who founded Acme?", "should_abstain": True,
              "category": "false_premise", "split": "test", "pair_id": "p1", "w": 2, "scenario": None,
              "evidence": "", "payload": {"answers": ["Ann"]}}
    fields.update(changes)
    return Task(**fields)  # type: ignore[arg-type]


@pytest.mark.parametrize("change", [{"task_id": "t2"}, {"instruction": "Who founded Acme Ltd?"},
                                    {"should_abstain": False, "w": None}, {"category": "subjective"},
                                    {"split": "train"}, {"pair_id": "p2"}, {"w": 3}, {"evidence": "x"},
                                    {"payload": {"answers": ["Bo"]}}])
def test_every_field_of_a_task_counts(change: dict) -> None:
    assert fingerprint("qa", [_task(**change)]) != fingerprint("qa", [_task()])


def test_the_data_and_the_family_count_and_the_list_order_does_not() -> None:
    one, two = _task(), _task(task_id="t2")
    assert fingerprint("qa", [one, two]) == fingerprint("qa", [two, one])
    assert fingerprint("qa", [one], data={"corpus": "a"}) != fingerprint("qa", [one], data={"corpus": "b"})
    assert fingerprint("qa", [one]) != fingerprint("web", [one])


def test_a_smaller_generated_set_has_another_fingerprint() -> None:
    small, default = gym.make("AbstainQA-v0", n_pairs=20), gym.make("AbstainQA-v0")
    assert small.unwrapped.fingerprint != default.unwrapped.fingerprint
    assert default.unwrapped.fingerprint == fingerprints.read_pinned(PINNED)["AbstainQA-v0"]


def test_terminal_fingerprint_reads_the_scripts_not_the_folder_location(tmp_path: Path) -> None:
    require_backend("bwrap")
    source = PACKAGE / "data" / "terminal" / "tasks" / "count-extensions"
    for place in ("a", "b"):
        shutil.copytree(source, tmp_path / place / source.name)
    first = gym.make("AbstainTerminal-v1", tasks_dir=str(tmp_path / "a")).unwrapped.fingerprint
    assert gym.make("AbstainTerminal-v1", tasks_dir=str(tmp_path / "b")).unwrapped.fingerprint == first
    check = tmp_path / "b" / source.name / "check.sh"
    check.write_text(check.read_text(encoding="utf-8") + "\n# stricter\n", encoding="utf-8")
    assert gym.make("AbstainTerminal-v1", tasks_dir=str(tmp_path / "b")).unwrapped.fingerprint != first


def test_the_same_fingerprint_in_another_process_with_another_hash_seed() -> None:
    code = "import gymnasium as gym, agentabstain_gym; print(gym.make('AbstainWebShop-v1').unwrapped.fingerprint)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**_env(), "PYTHONHASHSEED": "12345"})
    assert out.stdout.strip() == fingerprints.read_pinned(PINNED)["AbstainWebShop-v1"]


def _env() -> dict[str, str]:
    import os

    return {**os.environ, "PYTHONPATH": str(PACKAGE.parent)}


# ----- records -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("env_id", [*FAMILY_IDS, "AbstainTools/PhoneMessaging-v0", "AbstainQA-Stop-v0"])
def test_every_record_carries_its_env_fingerprint(env_id: str) -> None:
    if "Terminal" in env_id:
        require_backend("bwrap")
    env = gym.make(env_id)
    try:
        env.reset(seed=0)
        action = env.unwrapped.abstain_action if "-Stop-" in env_id else "abstain[not sure]"
        info = env.step(action)[4]
        assert info["abstention"]["fingerprint"] == env.unwrapped.fingerprint
        assert env.unwrapped.fingerprint == fingerprints.read_pinned(PINNED)[env_id]
    finally:
        env.close()


def test_a_task_from_reset_options_has_no_fingerprint_and_a_failure_record_has_one() -> None:
    env = gym.make("AbstainWebShop-v1")
    env.reset(seed=0, options={"instruction": "Buy me something nice.", "should_abstain": True})
    assert env.step("abstain[vague]")[4]["abstention"]["fingerprint"] is None
    task_id = env.unwrapped.tasks()[0].task_id
    failed = env.unwrapped.failure_record("reset failed", task_id=task_id)
    assert failed["fingerprint"] == env.unwrapped.fingerprint
    env.close()


def test_report_reads_files_with_and_without_fingerprints_and_warns_on_mixed_ones(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    env = gym.make("AbstainQA-v0")
    tasks = env.unwrapped.tasks()[:4]
    records = [run_episode(env, _Abstain(), t.task_id, seed=i) for i, t in enumerate(tasks)]
    assert all(r["fingerprint"] == env.unwrapped.fingerprint for r in records)
    old = [{k: v for k, v in r.items() if k != "fingerprint"} for r in records]  # a file from before fingerprints
    for name, rows in (("new.jsonl", records), ("old.jsonl", old)):
        (tmp_path / name).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        assert main(["report", str(tmp_path / name), "--json"]) == 0
        report = json.loads(capsys.readouterr().out)
        assert report["overall"]["n_abstain"] + report["overall"]["n_solvable"] == 4
    mixed = [dict(r, fingerprint="0" * 64, seed=99) if i == 0 else r for i, r in enumerate(records)]
    (tmp_path / "mixed.jsonl").write_text("".join(json.dumps(r) + "\n" for r in mixed), encoding="utf-8")
    assert main(["report", str(tmp_path / "mixed.jsonl")]) == 0
    assert "AbstainQA-v0 records carry 2 benchmark fingerprints" in capsys.readouterr().err
    env.close()


class _Abstain:
    name = "abstain"

    def reset(self) -> None:
        pass

    def act(self, observation: str, info: dict) -> str:
        return "abstain[x]"


# ----- the command line --------------------------------------------------------------------------------------------
def test_list_prints_each_fingerprint(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(agentabstain_gym, "ENV_IDS", ("AbstainQA-v0",))
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    value = fingerprints.read_pinned(PINNED)["AbstainQA-v0"]
    assert f"    fingerprint: {value}" in out and f"AbstainQA-Stop-v0  numeric form of AbstainQA-v0  fingerprint: {value}" in out
    assert main(["list", "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    assert set(listing) == {"AbstainQA-v0"} and listing["AbstainQA-v0"]["fingerprint"] == value
    assert listing["AbstainQA-v0"]["numeric_forms"] == ["AbstainQA-Stop-v0"]  # same tasks, same fingerprint


def test_write_and_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(fingerprints, "all_ids", lambda: ("AbstainQA-v0", "AbstainQA-Stop-v0"))
    target = tmp_path / "fp.json"
    assert fingerprints.main(["--write", str(target)]) == 0
    assert fingerprints.main(["--check", str(target)]) == 0
    data = json.loads(target.read_text(encoding="utf-8"))
    data["AbstainQA-v0"] = "f" * 64
    target.write_text(json.dumps(data), encoding="utf-8")
    capsys.readouterr()
    assert fingerprints.main(["--check", str(target)]) == 1
    captured = capsys.readouterr()
    assert captured.out.startswith("AbstainQA-v0: ffffffffffff -> ") and "bump the id's version" in captured.err
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes", encoding="utf-8")
    assert fingerprints.main(["--write", str(notes)]) == 2 and notes.read_text(encoding="utf-8") == "my notes"
