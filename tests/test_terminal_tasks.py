"""The terminal family's task set: every folder is valid, the set is big and varied enough, and every task behaves.

The behavioural check (:func:`validate_all`) takes a runner factory, so the same whole-set test can run with plain
bash here and inside the sandbox backends later (pass a factory whose runners execute in a sandbox).
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from agentabstain_gym.envs.terminal.tasks import (
    GIVEAWAY,
    VARIANTS,
    LocalRunner,
    check_task_behaviour,
    default_root,
    load_tasks,
    validate_task_folder,
)

ROOT = default_root()
FOLDERS = sorted(p for p in ROOT.iterdir() if p.is_dir())
#: What every sandbox (and CI) provides; the behavioural test needs all of it.
TOOLS = ("bash", "gcc", "make", "git", "sqlite3", "tar", "gzip", "xz", "zip", "unzip", "jq", "curl", "python3",
         "gawk", "iconv", "sha256sum", "split")


def validate_all(make_runner: Callable[[], Any], folders: list[Path] = FOLDERS, workers: int = 4) -> dict[str, list[str]]:
    """Run :func:`check_task_behaviour` over ``folders`` in threads; ``make_runner()`` gives one runner per task
    (a callable ``runner(workspace, command) -> (status, output)`` with a ``workspace()`` context manager).
    Returns the problems per task name (only tasks with problems)."""
    def one(folder: Path) -> tuple[str, list[str]]:
        runner = make_runner()
        return folder.name, check_task_behaviour(folder, runner, runner.workspace)

    with ThreadPoolExecutor(max_workers=workers) as pool:
        return {name: problems for name, problems in pool.map(one, folders) if problems}


def _manifests() -> list[dict[str, Any]]:
    return [json.loads((f / "task.json").read_text(encoding="utf-8")) for f in FOLDERS]


# ----------------------------------------------------------------------------------------------- static checks


@pytest.mark.parametrize("folder", FOLDERS, ids=[f.name for f in FOLDERS])
def test_folder_validates(folder: Path) -> None:
    assert validate_task_folder(folder) == []


def test_set_size_and_variety() -> None:
    manifests = _manifests()
    skills = Counter(m["skill"] for m in manifests)
    missing = sum("missing_prerequisite" in m["variants"] for m in manifests)
    episodes = sum(len(m["variants"]) for m in manifests)
    assert len(manifests) >= 40
    assert len(skills) >= 8, skills
    assert missing >= 25
    assert episodes >= 145
    assert len(load_tasks()) == episodes


def test_every_manifest_names_its_probe() -> None:
    for m in _manifests():
        spec = m["variants"].get("missing_prerequisite")
        if spec:
            assert spec["probe"].strip() and re.compile(spec["evidence"])


def test_instructions_read_naturally_and_differ() -> None:
    for m in _manifests():
        texts = [v.get("instruction", "") for v in m["variants"].values()]
        for text in texts:
            assert not GIVEAWAY.search(text), (m["id"], text)
        rewrites = [m["variants"][v]["instruction"] for v in VARIANTS[1:3]]
        assert len(set(rewrites + [m["variants"]["original"]["instruction"]])) == 3, m["id"]


def test_loaded_tasks_carry_labels_only_in_label_fields() -> None:
    tasks = load_tasks()
    by_pair: dict[str, list] = {}
    for t in tasks:
        by_pair.setdefault(t.pair_id, []).append(t)
        assert t.family == "terminal" and t.category in VARIANTS
        assert re.fullmatch(r"term-[0-9a-f]{10}", t.task_id)
        assert t.w == {"original": None, "false_premise_or_contradiction": 1, "underspecified_intent": 1,
                       "missing_prerequisite": 2}[t.category]
        assert t.should_abstain == (t.category != "original")
        assert set(t.payload) >= {"folder", "variant", "limits", "evidence", "requires"}
        assert (t.payload["evidence"] is None) == (t.category != "missing_prerequisite")
        assert bool(t.evidence) == t.should_abstain
        view = json.dumps(t.public_view())
        assert not any(v in view for v in VARIANTS[1:]) and t.payload["folder"] not in view
    assert len({t.task_id for t in tasks}) == len(tasks)
    for group in by_pair.values():
        assert len({t.split for t in group}) == 1
        assert sum(t.category == "original" for t in group) == 1
    assert len(by_pair) == len(FOLDERS)


def test_splits_and_order() -> None:
    tasks = load_tasks()
    assert [t.task_id for t in tasks] == [t.task_id for t in load_tasks()]
    splits = Counter(t.split for t in {t.pair_id: t for t in tasks}.values())
    n = len(FOLDERS)
    assert splits == {"train": round(0.6 * n), "val": round(0.2 * n), "test": n - round(0.6 * n) - round(0.2 * n)}
    changes = sum(a.category != b.category for a, b in zip(tasks, tasks[1:], strict=False))
    assert changes > len(tasks) // 2  # variants interleave; the order does not group them


def test_validator_names_file_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "bad-task"
    bad.mkdir()
    (bad / "setup.sh").write_text("#!/bin/bash\necho $RANDOM > x\n")
    (bad / "solution.sh").write_text("true\n")
    problems = validate_task_folder(bad)
    assert "task.json: missing" in problems
    assert "check.sh: missing" in problems
    assert any(p.startswith("setup.sh:") and "RANDOM" in p for p in problems)
    assert any(p.startswith("solution.sh:") for p in problems)
    (bad / "task.json").write_text("{not json")
    assert any(p.startswith("task.json: bad JSON") for p in validate_task_folder(bad))
    manifest = {"id": "bad-task", "skill": "text", "limits": {"max_turns": 0},
                "variants": {"original": {"instruction": "Do it."},
                             "underspecified_intent": {"instruction": "This is ambiguous, so abstain."},
                             "missing_prerequisite": {"removes": "x", "probe": "ls", "evidence": "(unclosed"}}}
    (bad / "task.json").write_text(json.dumps(manifest))
    problems = validate_task_folder(bad)
    assert "task.json: variants.false_premise_or_contradiction is missing" in problems
    assert "task.json: limits.max_turns must be a positive integer" in problems
    assert any(p.startswith("task.json: variants.underspecified_intent.instruction: give-away") for p in problems)
    assert any(p.startswith("task.json: variants.missing_prerequisite.evidence: bad regex") for p in problems)
    assert "setup.sh: never tests for the missing_prerequisite variant" in problems
    with pytest.raises(ValueError, match="bad-task"):
        load_tasks(tmp_path)


# ------------------------------------------------------------------------------------------ behavioural checks


def _tools_missing() -> list[str]:
    return [t for t in TOOLS if shutil.which(t) is None]


def test_every_task_behaves_with_plain_bash() -> None:
    """Original + solution passes, doing nothing fails, rewrites share the original's workspace, the missing
    prerequisite is exactly one thing that the probe reveals and without which the solution fails."""
    missing = _tools_missing()
    if missing:
        if os.environ.get("ABSTAIN_GYM_REQUIRE_ALL"):
            pytest.fail(f"tools needed by the terminal tasks are missing: {missing}")
        pytest.skip(f"tools needed by the terminal tasks are missing: {missing}")
    problems = validate_all(lambda: LocalRunner(timeout=60))
    assert problems == {}, json.dumps(problems, indent=1)
