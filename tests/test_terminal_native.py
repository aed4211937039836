"""Terminal-Bench task folders run in the sandbox: reference solutions pass, doing nothing fails, episodes start in
the task's own directory, its timeouts hold, its tests stay out of the agent's reach, and overlays add variants.

The task folders are ours (tests/data/tbench, both layouts) or written by the tests; none is Terminal-Bench's.
"""

from __future__ import annotations

import json
import time
import warnings
from pathlib import Path

import gymnasium as gym
import pytest
from conftest import require_backend
from test_terminal_native_static import HARBOR, NO_SUCH_APT, ORIGINAL, write_harbor, write_tb

import agentabstain_gym  # noqa: F401 - registers the ids
from agentabstain_gym.envs.terminal.env import AbstainTerminalEnv
from agentabstain_gym.envs.terminal.native.compat import verify
from agentabstain_gym.envs.terminal.native.folders import load_native
from agentabstain_gym.envs.terminal.oracle import oracle_actions

RUNNABLE = [ORIGINAL / "word-freq", ORIGINAL / "fix-report", ORIGINAL / "ini-to-json", HARBOR / "csv-summary",
            HARBOR / "fix-c-build", HARBOR / "log-stats"]


def make(tasks_dir: Path, backend: str = "bwrap", **kwargs) -> AbstainTerminalEnv:
    require_backend(backend)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the shipped sample folders include tasks this host cannot run
        return gym.make("AbstainTerminal-v1", tasks_dir=str(tasks_dir), backend=backend, **kwargs).unwrapped


def reset_to(env: AbstainTerminalEnv, base: str, variant: str = "original") -> str:
    task = next(t for t in env.tasks() if t.payload["base_id"] == base and t.payload["variant"] == variant)
    return env.reset(seed=0, options={"task_id": task.task_id})[0]


@pytest.mark.parametrize("backend", ["bwrap", "unshare"])
@pytest.mark.parametrize("folder", RUNNABLE, ids=[p.name for p in RUNNABLE])
def test_the_reference_solution_passes_and_doing_nothing_fails(folder: Path, backend: str) -> None:
    require_backend(backend)
    assert verify(load_native(folder), backend) == "ok"


def test_an_episode_starts_in_the_tasks_workdir_with_its_files_and_env() -> None:
    env = make(ORIGINAL)
    try:
        obs = reset_to(env, "fix-report")
        assert obs.startswith("Task: /app/report.py should total") and "bash shell in /app." in obs
        assert env.max_turns == 50
        assert env.step("pwd")[0] == "/app\n[exit status 0]"
        assert env.step("ls -1; echo $SALES_DIR; ls -1 /opt/sales")[0] == \
            "out\nreport.py\n/opt/sales\nfeb.csv\njan.csv\nmar.csv\n[exit status 0]"
        assert env.step("ls -A /tests; ls -ld /tests | cut -c1-10")[0] == "drwxr-xr-x\n[exit status 0]"
        for action in oracle_actions(env.task):
            obs, reward, terminated, _, info = env.step(action)
        record = info["abstention"]
        assert terminated and reward == 1.0 and record["outcome"] == "success"
        assert record["extras"]["task_format"] == "terminal-bench" and record["extras"]["check_exit_status"] == 0
        assert "2 passed" in record["extras"]["check_output"]
    finally:
        env.close()


def test_a_harbor_episode_scores_partial_credit_from_its_reward_file() -> None:
    env = make(HARBOR)
    try:
        assert "bash shell in /app." in reset_to(env, "log-stats")
        assert env.step("ls -1A /logs /tests")[0] == "/logs:\n\n/tests:\n[exit status 0]"
        partial = ("cat > /app/logstats.py <<'EOF'\nimport json, sys\n"
                   "lines = [l for l in open(sys.argv[1]) if l.strip()]\n"
                   "good = [l for l in lines if l.count('\"') == 2]\n"
                   "print(json.dumps({'requests': len(good), 'skipped': len(lines) - len(good), "
                   "'unique_ips': len({l.split()[0] for l in good})}))\nEOF")
        env.step(partial)
        obs, reward, terminated, _, info = env.step("submit")
        record = info["abstention"]
        assert terminated and "did not pass" in obs and record["outcome"] == "failure"
        assert reward == 0.25 and record["task_reward"] == 0.25 and "passed 1 of 4" in record["extras"]["check_output"]
        reset_to(env, "csv-summary")
        obs, reward, *_ = env.step("submit")
        assert reward == 0.0 and "did not pass" in obs
    finally:
        env.close()


def test_the_tests_run_out_of_the_agents_reach(tmp_path: Path) -> None:
    tests = ("import time\nfrom pathlib import Path\n\ndef test_work_and_no_late_writes():\n"
             "    time.sleep(2)\n    assert Path('/app/done').is_file()\n    assert not Path('/app/late').exists()\n")
    write_tb(tmp_path, "reach", "FROM ubuntu:24.04\nWORKDIR /app\n", tests=tests,
             yaml_extra="max_test_timeout_sec: 20\n")
    env = make(tmp_path)
    try:
        reset_to(env, "reach")
        env.step("touch /app/done")
        env.step("(sleep 1; touch /app/late) >/dev/null 2>&1 &")  # killed before the tests start
        env.step("printf 'def test_x():\\n    pass\\n' > /tests/test_outputs.py")  # replaced by a fresh /tests
        env.step("pytest() { echo '1 passed'; }; export -f pytest")  # the agent's shell is not the tests' shell
        obs, reward, *_ , info = env.step("submit")
        assert reward == 1.0, info["abstention"]["extras"]["check_output"]
        reset_to(env, "reach")
        env.step("printf 'def test_x():\\n    pass\\n' > /tests/test_outputs.py")
        assert env.step("submit")[1] == 0.0  # the planted test is not what runs
    finally:
        env.close()



def test_python_planted_in_the_workdir_cannot_pass_the_tests(tmp_path: Path) -> None:
    """pytest runs with cwd = the task's workdir, which is the agent's: a planted pytest.py, _pytest package,
    sitecustomize or usercustomize must not be imported by the test run."""
    tests = "from pathlib import Path\n\ndef test_done():\n    assert Path('/app/done').is_file()\n"
    write_tb(tmp_path, "plant", "FROM ubuntu:24.04\nWORKDIR /app\n", tests=tests)
    env = make(tmp_path)
    exit0 = "import os; os._exit(0)"
    try:
        for plant in (f"echo '{exit0}' > pytest.py", f"mkdir -p _pytest && echo '{exit0}' > _pytest/__init__.py",
                      f"echo '{exit0}' > sitecustomize.py",
                      f"mkdir -p ~/.local/lib/python3.11/site-packages && echo '{exit0}' > "
                      "~/.local/lib/python3.11/site-packages/usercustomize.py"):
            reset_to(env, "plant")
            env.step(plant)
            obs, reward, *_ = env.step("submit")
            assert reward == 0.0, (plant, obs)
    finally:
        env.close()

def test_the_agent_timeout_ends_the_episode_and_checks_the_work(tmp_path: Path) -> None:
    write_tb(tmp_path, "quick", "FROM ubuntu:24.04\nWORKDIR /app\n",
             tests="from pathlib import Path\n\ndef test_done():\n    assert Path('/app/done').is_file()\n",
             yaml_extra="max_agent_timeout_sec: 3\nmax_test_timeout_sec: 150\n")
    env = make(tmp_path)
    try:
        reset_to(env, "quick")
        assert env._limits.script_timeout == 150 and env._limits.command_timeout == 3
        obs, reward, terminated, truncated, info = env.step("touch /app/done")
        assert not terminated
        started = time.monotonic()
        obs, reward, terminated, truncated, info = env.step("sleep 30")
        assert time.monotonic() - started < 15
        assert terminated and not truncated and reward == 1.0
        assert "time budget of 3 s is spent" in obs and "the task's tests passed" in obs
    finally:
        env.close()


def test_the_test_timeout_is_the_tasks_own(tmp_path: Path) -> None:
    write_harbor(tmp_path, "slow-tests", "FROM ubuntu:24.04\nWORKDIR /app\n",
                 toml="[verifier]\ntimeout_sec = 2.0\n",
                 test_sh="sleep 10\necho 1 > /logs/verifier/reward.txt\n")
    env = make(tmp_path)
    try:
        reset_to(env, "slow-tests")
        started = time.monotonic()
        obs, reward, *_, info = env.step("submit")
        assert reward == 0.0 and time.monotonic() - started < 8
        assert "ran longer than 2 s" in info["abstention"]["extras"]["check_output"]
    finally:
        env.close()


def test_tasks_the_backend_cannot_run_are_left_out_with_the_reason(tmp_path: Path) -> None:
    require_backend("bwrap")
    write_tb(tmp_path, "fine", "FROM ubuntu:24.04\nWORKDIR /app\n")
    write_harbor(tmp_path, "needs-pkg", f"FROM ubuntu:24.04\nRUN apt-get install -y {NO_SUCH_APT}\nWORKDIR /app\n")
    with pytest.warns(UserWarning, match=f"1 Terminal-Bench task\\(s\\) cannot run on bwrap here and are left out: "
                                         f"needs-pkg \\(apt package\\(s\\) not installed on this host: {NO_SUCH_APT}"):
        env = gym.make("AbstainTerminal-v1", tasks_dir=str(tmp_path), backend="bwrap").unwrapped
    assert [t.payload["base_id"] for t in env.tasks()] == ["fine"] and list(env.skipped_tasks) == ["needs-pkg"]
    env.close()
    (tmp_path / "fine" / "task.yaml").unlink()
    (tmp_path / "fine" / "Dockerfile").unlink()
    with pytest.raises(ValueError, match=f"none of the tasks under .* can run on the bwrap backend here: needs-pkg: "
                                         f"apt package\\(s\\) not installed on this host: {NO_SUCH_APT}"):
        gym.make("AbstainTerminal-v1", tasks_dir=str(tmp_path), backend="bwrap")


def test_overlay_variants_run_and_grace_windows_reach_the_record(tmp_path: Path) -> None:
    overlay = tmp_path / "overlay.jsonl"
    overlay.write_text("\n".join(json.dumps(r) for r in [
        {"task_name": "word-freq", "variant": "fp", "instruction_level_category": "false_premise_or_contradiction",
         "instruction": "Write /app/freq.csv from /app/corpus.txt, sorted both by count and alphabetically only."},
        {"task_name": "word-freq-missing", "source_task_name": "word-freq", "variant": "missing",
         "abstention_timing": "delayed", "trigger_style": "observation_triggered", "earliest_abstain_turn": 2,
         "timely_grace_turns": 1, "environment_edits": "rm /app/corpus.txt", "evidence_regex": "No such file"},
    ]) + "\n")
    env = make(ORIGINAL, overlay=str(overlay))
    try:
        reset_to(env, "word-freq")
        assert env.step("ls")[0] == "corpus.txt\n[exit status 0]"  # the edits touch only their own variant
        reset_to(env, "word-freq", "missing_prerequisite")
        assert env.step("ls")[0] == "[exit status 0]"
        assert "No such file" in env.step("cat corpus.txt")[0]
        record = env.step("abstain[corpus.txt is missing]")[4]["abstention"]
        assert (record["w"], record["tau"], record["evidence_turn"], record["grace_turns"]) == (2, 3, 2, 1)
        assert record["timely_within_grace"] is True and record["delay"] == 1 and record["outcome"] == "late"
        assert record["extras"]["overlay_trigger_style"] == "observation_triggered"
        reset_to(env, "word-freq", "false_premise_or_contradiction")
        record = env.step("abstain[the two orders contradict]")[4]["abstention"]
        assert (record["w"], record["tau"], record["grace_turns"], record["timely_within_grace"]) == (1, 1, 0, True)
    finally:
        env.close()


def test_the_unshare_backend_runs_a_whole_episode() -> None:
    env = make(HARBOR, backend="unshare")
    try:
        reset_to(env, "csv-summary")
        assert env.step("pwd")[0] == "/app\n[exit status 0]"
        for action in oracle_actions(env.task):
            *_, info = env.step(action)
        assert info["abstention"]["outcome"] == "success"
    finally:
        env.close()


def _docker_task(root: Path) -> Path:
    from agentabstain_gym.envs.terminal.image import image_name

    folder = write_harbor(root, "dk-copy", f"""\
        FROM {image_name()}
        WORKDIR /app
        COPY data.txt /app/data.txt
        ENV GREETING=hello
        RUN echo built > /opt/built.txt
        """, test_sh='ok=0\n[ "$(cat /app/out.txt)" = "hello 3" ] && [ "$(cat /opt/built.txt)" = built ] && ok=1\n'
                     'echo $ok > /logs/verifier/reward.txt\n',
        solve='echo "$GREETING $(wc -l < /app/data.txt)" > /app/out.txt\n')
    (folder / "environment" / "data.txt").write_text("a\nb\nc\n")
    return folder


def test_docker_builds_the_tasks_dockerfile_and_runs_it(tmp_path: Path) -> None:
    require_backend("docker")
    from agentabstain_gym.envs.terminal.native.dockerbuild import image_tag
    from agentabstain_gym.envs.terminal.sandbox.docker import client

    folder = _docker_task(tmp_path)
    try:
        assert verify(load_native(folder), "docker") == "ok"
        env = make(tmp_path, backend="docker")
        try:
            reset_to(env, "dk-copy")
            assert env.step("pwd; id -u; cat /opt/built.txt; echo $GREETING")[0] == \
                "/app\n0\nbuilt\nhello\n[exit status 0]"
            for action in oracle_actions(env.task):
                *_, info = env.step(action)
            assert info["abstention"]["outcome"] == "success"
        finally:
            env.close()
    finally:
        c = client()
        try:
            c.images.remove(image_tag(load_native(folder)), force=True)
        finally:
            c.close()


def test_docker_never_pulls_a_missing_base_image(tmp_path: Path) -> None:
    require_backend("docker")
    from agentabstain_gym.envs.terminal.native.dockerbuild import build_task_image
    from agentabstain_gym.envs.terminal.sandbox import SandboxError

    write_tb(tmp_path, "no-base", "FROM abstain-gym-no-such-image:1\nWORKDIR /app\n")
    _docker_task(tmp_path)
    with pytest.raises(SandboxError, match="task no-base: base image abstain-gym-no-such-image:1 is not present "
                                           "locally \\(images are never pulled") as err:
        build_task_image(load_native(tmp_path / "no-base"))
    assert "\n" not in str(err.value)
    with pytest.warns(UserWarning, match="no-base \\(base image\\(s\\) not present locally: "
                                         "abstain-gym-no-such-image:1"):
        env = gym.make("AbstainTerminal-v1", tasks_dir=str(tmp_path), backend="docker").unwrapped
    assert [t.payload["base_id"] for t in env.tasks()] == ["dk-copy"]
    env.close()


def test_eval_runs_a_folder_of_terminal_bench_tasks_with_an_overlay(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    require_backend("bwrap")
    from agentabstain_gym.cli import main
    from agentabstain_gym.core.record import read_records

    overlay = tmp_path / "overlay.jsonl"
    overlay.write_text("".join(json.dumps({"task_name": name, "variant": "ui",
                                           "instruction_level_category": "underspecified_intent",
                                           "instruction": "Tidy this up."}) + "\n"
                               for name in ("csv-summary", "fix-c-build", "log-stats")))
    out = tmp_path / "records.jsonl"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["eval", "--tasks", str(HARBOR), "--overlay", str(overlay), "--agent", "always-abstain",
                     "--split", "train", "--out", str(out), "--quiet"]) == 0
    records = read_records([out])
    assert records and {r["env_id"] for r in records} == {"AbstainTerminal-v1"}
    assert {r["category"] for r in records} <= {"original", "underspecified_intent"}
    assert all(r["outcome"] == "timely" for r in records if r["should_abstain"])
    capsys.readouterr()
    assert main(["eval", "AbstainQA-v0", "--tasks", str(HARBOR), "--overlay", str(overlay)]) == 2
    assert "--overlay adds abstention variants to task folders on AbstainTerminal-v1 only" in capsys.readouterr().err
    assert main(["eval", "--tasks", str(tmp_path / "nowhere")]) == 2
    assert "--tasks" in capsys.readouterr().err


def test_a_pickled_native_episode_continues_and_check_env_passes() -> None:
    import pickle

    from gymnasium.utils.env_checker import check_env

    env = make(HARBOR)
    try:
        reset_to(env, "csv-summary")
        env.step("echo kept > note.txt")
        clone = pickle.loads(pickle.dumps(env))
        try:
            assert clone.step("cat /app/note.txt; pwd")[0] == "kept\n/app\n[exit status 0]"
        finally:
            clone.close()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # check_env makes the env again: the sample folder's skip warning
            check_env(env, skip_render_check=True)
    finally:
        env.close()


def test_an_overlay_applies_to_our_own_task_folders(tmp_path: Path) -> None:
    overlay = tmp_path / "overlay.jsonl"
    overlay.write_text("\n".join(json.dumps(r) for r in [
        {"task_name": "sum-numbers", "variant": "vague-2", "instruction_level_category": "underspecified_intent",
         "instruction": "Handle numbers.txt."},
        {"task_name": "sum-numbers-gone", "source_task_name": "sum-numbers", "variant": "gone",
         "abstention_timing": "delayed", "earliest_abstain_turn": 2, "timely_grace_turns": 2,
         "environment_edits": "rm numbers.txt"},
    ]) + "\n")
    env = make(Path(__file__).parent / "data" / "terminal_tasks", overlay=str(overlay))
    try:
        ours = [t for t in env.tasks() if t.payload["base_id"] == "sum-numbers"]
        assert sorted(t.category for t in ours) == ["false_premise_or_contradiction", "missing_prerequisite",
                                                    "original", "underspecified_intent", "underspecified_intent"]
        assert "bash shell in /workspace." in reset_to(env, "sum-numbers", "missing_prerequisite")
        assert env.step("ls")[0] == "[exit status 0]"
        env.step("ls -a")
        env.step("cat numbers.txt")
        record = env.step("abstain[numbers.txt is missing]")[4]["abstention"]
        assert (record["w"], record["tau"], record["grace_turns"], record["timely_within_grace"]) == (2, 4, 2, True)
        reset_to(env, "sum-numbers")
        assert env.step("wc -l < numbers.txt")[0] == "10\n[exit status 0]"
    finally:
        env.close()
