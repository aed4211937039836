"""``eval --backend ray`` on a local Ray cluster started by the test: the same records as a local run, resumable,
an actor that dies replaced, and one line when Ray is missing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import skip_or_fail
from proctree import assert_gone, descendants

from agentabstain_gym.cli import main
from agentabstain_gym.runner import EvalConfig, evaluate, plan

try:
    import ray
except ImportError:  # pragma: no cover - CI installs the extra
    skip_or_fail("ray is not installed (pip install ray)", allow_module_level=True)

ENVS = ["AbstainQA-v0", "AbstainWebShop-v1", "AbstainTools-v0"]


@pytest.fixture(scope="module")
def cluster() -> Iterator[None]:
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()


def lines(records: list[dict[str, Any]]) -> list[str]:
    return sorted(json.dumps(r, sort_keys=True) for r in records)


def test_ray_records_equal_a_local_run(cluster: None, tmp_path: Path) -> None:
    config = EvalConfig(env_ids=ENVS, agents=["heuristic", "rules"], split=None, episodes=40)
    out = tmp_path / "ray.jsonl"
    on_ray = evaluate(config, out=out, backend="ray")
    assert len(on_ray) == 240
    assert lines(on_ray) == lines(evaluate(config, workers=1))
    assert sorted(out.read_text().splitlines()) == lines(on_ray)  # the driver wrote every record


def test_a_ray_run_resumes_a_partial_run_file(cluster: None, tmp_path: Path) -> None:
    config = EvalConfig(env_ids=["AbstainQA-v0"], agents=["heuristic"], split=None, episodes=30)
    out = tmp_path / "runs.jsonl"
    evaluate(config, out=out)
    kept = out.read_text().splitlines()[:12]
    out.write_text("\n".join(kept) + "\n")
    resumed = evaluate(config, out=out, backend="ray", workers=2)
    assert len(resumed) == 30 and len(out.read_text().splitlines()) == 30
    assert lines(resumed) == lines(evaluate(config))


AGENT = '''
import os

class Doomed:
    name = "doomed"

    def reset(self, seed=None):
        pass

    def act(self, observation, info):
        if info.get("task_id") == {victim!r} and os.getpid() != {driver}:
            os._exit(3)
        return "abstain[enough]"
'''


def test_an_actor_that_dies_is_replaced_and_the_episode_recorded(cluster: None, tmp_path: Path) -> None:
    episodes = plan(EvalConfig(env_ids=["AbstainQA-v0"], agents=["x"], split=None, episodes=20))
    victim = episodes[7].task_id
    agent = tmp_path / "doomed.py"
    agent.write_text(AGENT.format(victim=victim, driver=os.getpid()))
    config = EvalConfig(env_ids=["AbstainQA-v0"], agents=[f"{agent}:Doomed"], split=None, episodes=20)
    records = evaluate(config, backend="ray", workers=2)
    assert len(records) == 20 and len({r["task_id"] for r in records}) == 20
    failed = [r for r in records if "env_error" in r["extras"]]
    assert [r["task_id"] for r in failed] == [victim]
    assert "Ray actor failed while running this episode" in failed[0]["extras"]["env_error"]


def test_cli_backend_ray(cluster: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "runs.jsonl"
    assert main(["eval", "AbstainQA-v0", "--agent", "heuristic", "--episodes", "10", "--backend", "ray",
                 "--out", str(out), "--quiet", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["overall"]["n_abstain"] + 0 >= 0
    assert len(out.read_text().splitlines()) == 10


def test_backend_ray_without_ray_is_one_line(monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray raises ImportError
    assert main(["eval", "AbstainQA-v0", "--agent", "heuristic", "--episodes", "2", "--backend", "ray",
                 "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "pip install ray (the [ray] extra" in err[0]


SLOW = '''
import time

class Slow:
    name = "slow"

    def reset(self, seed=None):
        pass

    def act(self, observation, info):
        time.sleep(0.05)
        return "abstain[enough]"
'''


@pytest.mark.parametrize("how", ["SIGKILL", "Ctrl-C"])
def test_killing_a_ray_eval_leaves_no_ray_process(tmp_path: Path, how: str) -> None:
    """The one-machine cluster an ``eval`` starts goes with it: Ray's own agents outlive a SIGKILLed driver
    unless we reap them."""
    (tmp_path / "slow.py").write_text(SLOW)
    out = tmp_path / "runs.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "agentabstain_gym.cli", "eval", "AbstainQA-v0", "--agent",
                             f"{tmp_path / 'slow.py'}:Slow", "--split", "train", "--backend", "ray", "--out", str(out),
                             "--quiet"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    deadline = time.monotonic() + 120
    while not (out.exists() and len(out.read_text().splitlines()) >= 20):
        assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read() if proc.stderr else ""
        time.sleep(0.1)
    tree = descendants(proc.pid)
    assert len(tree) >= 3  # gcs, raylet, workers, agents
    if how == "SIGKILL":
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
    else:
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 130 and err.strip().splitlines()[-1].startswith("interrupted: "), err
    assert_gone(tree, within=15)


def test_llm_settings_reach_the_actors(cluster: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """The LLM options travel as ABSTAIN_GYM_* variables, which Ray workers (started with the cluster, before
    they were set) get from the actors' runtime environment."""
    from llm_server import ScriptedLLMServer, require_openai, tool

    require_openai()

    def policy(body: dict[str, Any]) -> dict[str, Any]:
        turns = sum(m.get("role") == "assistant" for m in body["messages"])
        return tool("search", query="x") if turns == 0 else tool("abstain", reason="not found")

    with ScriptedLLMServer([], default=policy, stable_ids=True) as srv:
        for var, value in (("BASE_URL", srv.base_url), ("MODEL", "scripted-model"), ("API_KEY", "k")):
            monkeypatch.setenv(f"ABSTAIN_GYM_LLM_{var}", value)
        config = EvalConfig(env_ids=["AbstainQA-v0"], agents=["llm"], split=None, episodes=6, concurrency=2)
        on_ray = evaluate(config, backend="ray", workers=2)
        local = evaluate(config)
    assert lines(on_ray) == lines(local)
    assert all(r["extras"]["transcript"]["usage"]["requests"] == 2 and "error" not in r["extras"] for r in on_ray)
