"""``eval --concurrency``: threaded episodes give the same records, resume as before, share rate limits and
Retry-After pauses, and a dead server fails the run at once with one line."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from llm_server import ScriptedLLMServer, require_openai, status, tool

from agentabstain_gym.agents.ratelimit import Gate
from agentabstain_gym.cli import main
from agentabstain_gym.runner import EvalConfig, evaluate

require_openai()

ENV = "AbstainQA-v0"
EPISODES = 12


def policy(body: dict[str, Any]) -> dict[str, Any]:
    """Deterministic per conversation (not per arrival order): search on the first turn, then abstain."""
    turns = sum(m.get("role") == "assistant" for m in body["messages"])
    question = str(body["messages"][-1].get("content") or "")[:30]
    return tool("search", query=question) if turns == 0 else tool("abstain", reason=f"turn {turns}")


@pytest.fixture(autouse=True)
def llm_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every variable the LLM options set, so each test's settings are undone after it."""
    for var in ("BASE_URL", "MODEL", "API_KEY", "RPS", "TPM", "TIMEOUT", "MAX_RETRIES", "TOOLS", "PLAYBOOK"):
        monkeypatch.setenv(f"ABSTAIN_GYM_LLM_{var}", "")
    monkeypatch.setenv("ABSTAIN_GYM_LLM_MODEL", "scripted-model")
    monkeypatch.setenv("ABSTAIN_GYM_LLM_API_KEY", "k")


def record_lines(path: Path) -> list[str]:
    return sorted(line for line in path.read_text().splitlines() if line.strip())


def run_cli(srv: ScriptedLLMServer, out: Path, *extra: str) -> int:
    return main(["eval", ENV, "--agent", "llm", "--episodes", str(EPISODES), "--base-url", srv.base_url,
                 "--out", str(out), "--quiet", *extra])


def test_concurrent_records_equal_sequential_records(tmp_path: Path) -> None:
    with ScriptedLLMServer([], default=policy, latency=0.05, stable_ids=True) as srv:
        assert run_cli(srv, tmp_path / "one.jsonl", "--concurrency", "1") == 0
        assert run_cli(srv, tmp_path / "eight.jsonl", "--concurrency", "8") == 0
    one, eight = record_lines(tmp_path / "one.jsonl"), record_lines(tmp_path / "eight.jsonl")
    assert len(one) == EPISODES and one == eight
    assert all(json.loads(line)["extras"]["transcript"]["usage"]["requests"] == 2 for line in one)


def test_resume_after_a_partial_concurrent_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    class Stop(Exception):
        pass

    def stop_after_five(_record: dict[str, Any], finished: int, _total: int) -> None:
        if finished == 5:
            raise Stop

    with ScriptedLLMServer([], default=policy, latency=0.02, stable_ids=True) as srv:
        monkeypatch.setenv("ABSTAIN_GYM_LLM_BASE_URL", srv.base_url)
        evaluate(EvalConfig(env_ids=[ENV], agents=["llm"], episodes=EPISODES), out=tmp_path / "full.jsonl")
        config = EvalConfig(env_ids=[ENV], agents=["llm"], episodes=EPISODES, concurrency=8)
        with pytest.raises(Stop):
            evaluate(config, out=tmp_path / "part.jsonl", progress=stop_after_five)
        assert len(record_lines(tmp_path / "part.jsonl")) == 5
        records = evaluate(config, out=tmp_path / "part.jsonl")
    assert len(records) == EPISODES
    assert record_lines(tmp_path / "part.jsonl") == record_lines(tmp_path / "full.jsonl")


def test_retry_after_pauses_every_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    pause = 1.5
    with ScriptedLLMServer([status(429, retry_after=pause)], default=policy, latency=0.02, stable_ids=True) as srv:
        monkeypatch.setenv("ABSTAIN_GYM_LLM_BASE_URL", srv.base_url)
        records = evaluate(EvalConfig(env_ids=[ENV], agents=["llm"], episodes=EPISODES, concurrency=8))
    assert len(records) == EPISODES and not any("error" in r["extras"] for r in records)
    start = srv.times[0]  # the request answered with 429
    during = [t for t in srv.times[1:] if start + 0.4 < t < start + pause - 0.2]
    after = [t for t in srv.times[1:] if t >= start + pause - 0.2]
    assert during == [] and len(after) >= EPISODES  # nobody asked while paused; the run went on afterwards


def test_unreachable_server_exits_2_with_one_line() -> None:
    proc = subprocess.run([sys.executable, "-m", "agentabstain_gym.cli", "eval", ENV, "--agent", "llm",
                           "--episodes", "2", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--quiet"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot reach the LLM server" in lines[0], proc.stderr


def test_unknown_model_exits_2_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with ScriptedLLMServer([], default=policy, models=["served-model"]) as srv:
        assert run_cli(srv, tmp_path / "runs.jsonl", "--model", "typo-model") == 2
        assert srv.requests == []  # no completion was attempted
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "'typo-model' is not served" in err[0] and "served-model" in err[0]


def test_workers_and_concurrency_combine(tmp_path: Path) -> None:
    """Two worker processes with four threads each: the same records as one thread in one process."""
    with ScriptedLLMServer([], default=policy, latency=0.05, stable_ids=True) as srv:
        assert run_cli(srv, tmp_path / "one.jsonl", "--concurrency", "1") == 0
        assert run_cli(srv, tmp_path / "pool.jsonl", "--workers", "2", "--concurrency", "4") == 0
    assert record_lines(tmp_path / "one.jsonl") == record_lines(tmp_path / "pool.jsonl")


def test_rps_limit_holds_across_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    rps = 8.0
    with ScriptedLLMServer([], default=policy, stable_ids=True) as srv:
        monkeypatch.setenv("ABSTAIN_GYM_LLM_BASE_URL", srv.base_url)
        monkeypatch.setenv("ABSTAIN_GYM_LLM_RPS", str(rps))
        evaluate(EvalConfig(env_ids=[ENV], agents=["llm"], episodes=EPISODES, concurrency=8))
    times = sorted(srv.times)
    assert len(times) == 2 * EPISODES
    busiest = max(sum(1 for t in times if s <= t < s + 1.0) for s in times)
    assert busiest <= rps + 3  # generous: pacing is 1/rps apart, plus scheduling jitter
    assert times[-1] - times[0] >= (len(times) - 1) / rps * 0.7


class FakeTime:
    """A clock that only moves when slept on, so limit arithmetic is checked without real waiting."""

    def __init__(self) -> None:
        self.now = 0.0

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_gate_paces_requests_and_tokens_exactly() -> None:
    fake = FakeTime()
    gate = Gate(rps=5, clock=fake.clock, sleep=fake.sleep)
    starts = []
    for _ in range(11):
        gate.before_request()
        starts.append(fake.now)
    assert starts[-1] == pytest.approx(2.0) and all(b - a >= 0.2 - 1e-9 for a, b in zip(starts, starts[1:], strict=False))

    fake = FakeTime()
    gate = Gate(tpm=600, clock=fake.clock, sleep=fake.sleep)  # 10 tokens a second
    gate.before_request()
    gate.spent(650)  # 50 tokens of debt past the full bucket: 5 s to wait
    gate.before_request()
    assert fake.now == pytest.approx(5.0, abs=0.01)

    gate.pause(3.0)
    gate.before_request()
    assert fake.now == pytest.approx(8.0, abs=0.01)


def test_gate_rejects_nonsense_limits() -> None:
    with pytest.raises(ValueError):
        Gate(rps=0)
    started = time.monotonic()
    Gate().before_request()  # no limits: never waits
    assert time.monotonic() - started < 1.0


def test_llm_only_runs_default_to_16_threads_and_options_reach_the_agent(monkeypatch: pytest.MonkeyPatch) -> None:
    from agentabstain_gym.agents.llm import LLMAgent, apply_llm_arguments
    from agentabstain_gym.cli import _concurrency, build_parser

    def parse(*argv: str) -> Any:
        return build_parser().parse_args(["eval", ENV, *argv])

    assert _concurrency(parse("--agent", "llm"), ["llm"]) == 16
    assert _concurrency(parse("--agent", "llm", "--agent", "rules"), ["llm", "rules"]) == 1
    assert _concurrency(parse("--agent", "llm", "--workers", "2"), ["llm"]) == 16  # per worker
    assert _concurrency(parse("--agent", "llm", "--concurrency", "3"), ["llm"]) == 3
    args = parse("--agent", "llm", "--llm-timeout", "7.5", "--llm-max-retries", "1", "--llm-rps", "4",
                 "--workers", "2")
    apply_llm_arguments(args)
    agent = LLMAgent(family="qa")
    assert agent.caller.timeout == 7.5 and agent.caller.max_retries == 1
    assert agent.caller.gate.rps == 2.0  # type: ignore[attr-defined]  # per process: 4 shared by 2 workers


def test_direct_request_path_sends_the_body_create_would(monkeypatch: pytest.MonkeyPatch) -> None:
    import gymnasium as gym

    from agentabstain_gym.agents import ratelimit
    from agentabstain_gym.agents.llm import LLMAgent
    from agentabstain_gym.runner import run_episode

    bodies = []
    for direct in (True, False):
        if not direct:
            monkeypatch.setattr(ratelimit, "_direct_post", lambda _client: None)
        with ScriptedLLMServer([], default=tool("abstain", reason="x")) as srv:
            agent = LLMAgent(family="qa", base_url=srv.base_url, model="m", api_key="k", extra_body={"top_k": 3})
            env = gym.make(ENV)
            run_episode(env, agent, env.unwrapped.tasks(split="test")[0].task_id, 1)
            bodies.append(srv.requests[0])
    assert bodies[0] == bodies[1] and bodies[0]["top_k"] == 3 and bodies[0]["model"] == "m"
