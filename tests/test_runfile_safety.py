"""The run file is safe: a manifest, refusal to mix runs, a lock, no overwriting, de-duplicated reports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentabstain_gym.cli import main
from agentabstain_gym.core.record import read_records
from agentabstain_gym.runfile import manifest_path

CLI = [sys.executable, "-m", "agentabstain_gym.cli"]
EVAL = ["eval", "AbstainQA-v0", "--agent", "always-abstain", "--episodes", "3", "--quiet", "--json"]


def run_eval(out: Path, *extra: str) -> int:
    return main([*EVAL, "--out", str(out), *extra])


def one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    return lines[0]


def test_manifest_is_written_and_a_matching_run_resumes(tmp_path: Path) -> None:
    out = tmp_path / "runs.jsonl"
    assert run_eval(out) == 0
    manifest = json.loads(manifest_path(out).read_text())
    assert manifest["seed"] == 0 and manifest["split"] == "test" and manifest["episodes"] == 3
    assert manifest["agents"] == ["always-abstain"] and set(manifest["data"]) == {"AbstainQA-v0"}
    assert run_eval(out) == 0
    assert len(read_records([out])) == 3  # resumed: nothing re-run, nothing duplicated


@pytest.mark.parametrize(("extra", "needle"), [(["--seed", "1"], "--seed 0, not 1"),
                                               (["--split", "val"], "--split test, not val"),
                                               (["--episodes", "4"], "--episodes 3, not 4")])
def test_another_run_on_the_same_file_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                 extra: list[str], needle: str) -> None:
    out = tmp_path / "runs.jsonl"
    assert run_eval(out) == 0
    before = out.read_bytes()
    capsys.readouterr()
    assert main([*EVAL, *extra, "--out", str(out)]) == 2
    line = one_line_error(capsys)
    assert needle in line and "--force-new" in line
    assert out.read_bytes() == before


def test_force_new_replaces_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "runs.jsonl"
    assert run_eval(out) == 0
    capsys.readouterr()
    assert run_eval(out, "--seed", "1", "--force-new") == 0
    assert "3 old record(s) discarded" in capsys.readouterr().err
    assert json.loads(manifest_path(out).read_text())["seed"] == 1
    assert len(read_records([out])) == 3


def test_a_stale_manifest_of_a_deleted_run_file_is_replaced(tmp_path: Path) -> None:
    out = tmp_path / "runs.jsonl"
    assert run_eval(out) == 0
    out.unlink()  # the records are gone, the sidecar stayed: nothing left to mix with
    assert run_eval(out, "--seed", "2") == 0
    assert json.loads(manifest_path(out).read_text())["seed"] == 2


def test_a_file_without_manifest_is_adopted_only_if_its_records_belong(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "runs.jsonl"
    assert run_eval(out) == 0
    manifest_path(out).unlink()  # as written before manifests existed
    assert run_eval(out) == 0 and manifest_path(out).exists()
    manifest_path(out).unlink()
    capsys.readouterr()
    assert run_eval(out, "--seed", "5") == 2
    assert "holds episodes of another run" in one_line_error(capsys)


def test_out_that_is_not_a_run_file_or_a_directory_is_refused(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("# Title\n\nprose\n")
    assert run_eval(readme) == 2
    assert "not a run file" in one_line_error(capsys)
    assert readme.read_text() == "# Title\n\nprose\n"
    assert run_eval(tmp_path) == 2
    assert "is a directory" in one_line_error(capsys)


def test_a_second_concurrent_eval_fails_at_once(tmp_path: Path) -> None:
    out = tmp_path / "runs.jsonl"
    assert run_eval(out) == 0  # a valid run file with a manifest
    holder = subprocess.Popen([sys.executable, "-c", (
        "import fcntl, sys, time\n"
        f"fh = open({str(out)!r}, 'ab')\n"
        "fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)\n"
        "print('locked', flush=True)\n"
        "time.sleep(60)\n")], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        start = time.monotonic()
        proc = subprocess.run([*CLI, *EVAL, "--out", str(out)], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 2
        assert proc.stderr.strip().count("\n") == 0 and "in use by another abstain-gym eval" in proc.stderr
        assert time.monotonic() - start < 30  # did not wait for the holder
    finally:
        holder.kill()
        holder.wait()


def test_two_real_evals_on_one_file(tmp_path: Path) -> None:
    """The first eval (a slow agent, in a subprocess) holds the lock; the second fails at once and writes nothing."""
    agent = f"{Path(__file__).parent / 'data' / 'agents_for_tests.py'}:SlowHeuristic"
    out = tmp_path / "runs.jsonl"
    args = [*CLI, "eval", "AbstainQA-v0", "--agent", agent, "--quiet", "--json", "--out", str(out)]
    first = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not (out.exists() and out.read_text().count("\n") >= 2) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert first.poll() is None, "the first run should still be going"
        start = time.monotonic()
        second = subprocess.run(args, capture_output=True, text=True, timeout=60)
        assert second.returncode == 2 and "in use by another abstain-gym eval" in second.stderr
        assert second.stderr.count("\n") == 1 and time.monotonic() - start < 30
    finally:
        first.kill()
        first.wait()
    records = read_records([out], warn=False)
    assert len(records) == len({(r["task_id"], r["seed"]) for r in records})  # no episode written twice


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write a read-only file")
def test_read_only_run_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "runs.jsonl"
    out.write_text("")
    out.chmod(0o444)
    try:
        assert run_eval(out) == 2
        assert "cannot open --out" in one_line_error(capsys)
    finally:
        out.chmod(0o644)


def test_read_only_filesystem_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """As root a chmod does not stop writes, so the read-only filesystem is simulated at the run file's open."""
    import builtins
    import errno

    from agentabstain_gym import runfile

    out = tmp_path / "runs.jsonl"

    def read_only(file: object, mode: str = "r", *args: object, **kwargs: object) -> object:
        if str(file) == str(out) and mode != "r":
            raise OSError(errno.EROFS, "Read-only file system")
        return builtins.open(file, mode, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(runfile, "open", read_only, raising=False)
    assert run_eval(out) == 2
    assert "cannot open --out" in (line := one_line_error(capsys)) and "Read-only file system" in line


def test_a_full_disk_says_how_many_episodes_were_recorded(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    import errno

    from agentabstain_gym import runfile

    calls = {"n": 0}
    real = runfile.append_records

    def flaky(path: object, records: object) -> None:
        calls["n"] += 1
        if calls["n"] > 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        real(path, records)  # type: ignore[arg-type]

    monkeypatch.setattr(runfile, "append_records", flaky)
    out = tmp_path / "runs.jsonl"
    assert run_eval(out) == 2
    line = one_line_error(capsys)
    assert "No space left on device" in line and "2 episode(s) are recorded" in line
    assert len(read_records([out])) == 2


def test_report_drops_duplicate_episodes_with_a_warning(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "runs.jsonl"
    assert run_eval(out) == 0
    doubled = tmp_path / "doubled.jsonl"
    doubled.write_text(out.read_text() * 2)
    capsys.readouterr()
    assert main(["report", str(doubled), "--json", "--bootstrap", "0"]) == 0
    captured = capsys.readouterr()
    assert "dropped 3 duplicate episode record(s)" in captured.err
    assert json.loads(captured.out)["overall"]["n_abstain"] + json.loads(captured.out)["overall"]["n_solvable"] == 3
    assert main(["report", str(out), str(out), "--bootstrap", "0"]) == 0
    assert "3 episodes;" in capsys.readouterr().err


def test_writers_refuse_to_overwrite_without_force(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = tmp_path / "runs.jsonl"
    assert run_eval(runs) == 0
    chat = tmp_path / "chat.jsonl"
    chat.write_text("keep\n")
    capsys.readouterr()
    assert main(["export", str(runs), "--out", str(chat)]) == 2
    assert "pass --force" in one_line_error(capsys) and chat.read_text() == "keep\n"
    assert main(["export", str(runs), "--out", str(chat), "--force"]) == 0
    assert chat.read_text() != "keep\n"
    pairs = tmp_path / "fresh.yaml"
    pairs.write_text("keep\n")
    capsys.readouterr()
    assert main(["tools", "generate", "--seed", "0", "--out", str(pairs)]) == 2
    assert "pass --force" in one_line_error(capsys) and pairs.read_text() == "keep\n"


def test_plots_refuse_to_overwrite_and_need_matplotlib(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    runs = tmp_path / "runs.jsonl"
    assert run_eval(runs) == 0
    plots = tmp_path / "plots"
    plots.mkdir()
    (plots / "absrec_at_k.png").write_bytes(b"keep")
    capsys.readouterr()
    assert main(["report", str(runs), "--plots", str(plots), "--bootstrap", "0"]) == 2
    assert "pass --force" in one_line_error(capsys)
    assert (plots / "absrec_at_k.png").read_bytes() == b"keep"
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now raises ImportError
    other = tmp_path / "other.jsonl"
    assert main([*EVAL, "--out", str(other), "--plots", str(tmp_path / "p2")]) == 2
    assert "needs matplotlib" in one_line_error(capsys)
    assert not other.exists()  # checked before the run started


def test_train_and_convolve_refuse_to_overwrite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("stable_baselines3")
    (tmp_path / "AbstainQA-Stop-v0-report.json").write_text("{}")
    assert main(["train", "--env", "AbstainQA-v0", "--out", str(tmp_path), "--seeds", "0"]) == 2
    assert "pass --force" in one_line_error(capsys)
    (tmp_path / "convolve.json").write_text("{}")
    assert main(["convolve", "--out", str(tmp_path), "--quiet"]) == 2
    assert "pass --force" in one_line_error(capsys)
