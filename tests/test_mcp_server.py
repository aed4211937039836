"""``abstain-gym mcp`` driven by the MCP SDK's own client, for real: over stdio (the server spawned as a subprocess)
on all four families, and over streamable HTTP; the run file it writes is read back by ``report``."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest
from conftest import require_backend, skip_or_fail

import agentabstain_gym  # noqa: F401 - registers the ids
from agentabstain_gym.agents.llm import family_table
from agentabstain_gym.core.record import iter_records
from agentabstain_gym.runner import episode_seed

try:
    from mcp import Client, StdioServerParameters
except ImportError:
    skip_or_fail("the mcp package is not installed (pip install 'mcp>=2.3')", allow_module_level=True)

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "agentabstain_gym.cli"]
#: What a result may carry besides its text: nothing that says whether the task should be abstained on.
STATE_KEYS = {"task_id", "turn", "max_turns", "episode_ended", "available_actions"}
LABEL_WORDS = ("should_abstain", "category", "outcome", "premature", "timely")


def stdio(*args: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "agentabstain_gym.cli", "mcp", *args],
                                 env=dict(os.environ), cwd=str(ROOT))


def pick(env_id: str) -> tuple[str, str]:
    """A should-abstain task that the request alone justifies (w = 1) and a solvable task of the test split."""
    tasks = gym.make(env_id).unwrapped.tasks(split="test")
    abstain = next(t.task_id for t in tasks if t.should_abstain and t.w == 1)
    solvable = next(t.task_id for t in tasks if not t.should_abstain)
    return abstain, solvable


def text(result: Any) -> str:
    return "".join(c.text for c in result.content)


def before_end(result: Any) -> None:
    """A result of a running episode: no error, no label anywhere."""
    assert not result.is_error, text(result)
    assert set(result.structured_content) <= STATE_KEYS
    assert not result.structured_content["episode_ended"]
    assert not any(word in text(result) for word in LABEL_WORDS)


def replayed(env_id: str, record: dict[str, Any]) -> dict[str, Any]:
    """The record of the same actions played on the env directly, with the same seed."""
    env = gym.make(env_id)
    env.reset(seed=record["seed"], options={"task_id": record["task_id"]})
    for step in record["steps"]:
        *_, info = env.step(step["action"])
    env.close()
    return info["abstention"]


def qa_script(client: Client, first: Any) -> Any:
    async def play() -> Any:
        instruction = text(first).split("Question: ", 1)[1].splitlines()[0]
        before_end(await client.call_tool("search", {"query": instruction}))
        return await client.call_tool("answer", {"text": "unknown"})
    return play()


def web_script(client: Client, first: Any) -> Any:
    async def play() -> Any:
        instruction = text(first).split("Instruction: [SEP] ", 1)[1].split(" [SEP]")[0]
        page = await client.call_tool("search", {"query": instruction})
        before_end(page)
        product = next(c for c in page.structured_content["available_actions"]["clickables"]
                       if c not in ("back to search", "next >", "< prev"))
        before_end(await client.call_tool("click", {"button": product}))
        return await client.call_tool("click", {"button": "buy now"})
    return play()


def tools_script(client: Client, first: Any) -> Any:
    async def play() -> Any:
        listed = (await client.list_tools()).tools
        lookup = next(t for t in listed if t.name.startswith(("list_", "search_", "get_")))
        await client.call_tool(lookup.name, {})  # the sandbox answers, required arguments or not: one turn
        return await client.call_tool("respond", {"text": "Done."})
    return play()


def terminal_script(client: Client, first: Any) -> Any:
    async def play() -> Any:
        before_end(await client.call_tool("run", {"command": "ls -a"}))
        return await client.call_tool("submit", {})
    return play()


FAMILIES: dict[str, tuple[str, Callable[[Client, Any], Any]]] = {
    "qa": ("AbstainQA-v0", qa_script),
    "web": ("AbstainWebShop-v1", web_script),
    "tools": ("AbstainTools/RetailOrders-v0", tools_script),
    "terminal": ("AbstainTerminal-v1", terminal_script),
}


@pytest.mark.parametrize("family", list(FAMILIES))
def test_stdio_end_to_end(family: str, tmp_path: Path) -> None:
    if family == "terminal":
        require_backend("bwrap")
    env_id, script = FAMILIES[family]
    abstain_id, solvable_id = pick(env_id)
    out = tmp_path / "runs.jsonl"
    env = gym.make(env_id)
    _, info = env.reset(seed=0, options={"task_id": abstain_id})
    env.close()
    builtin = family_table(family)["tools"]
    own = [(s["function"]["name"], s["function"]["parameters"]) for s in info.get("tools") or []]

    async def session() -> None:
        async with Client(stdio(env_id, "--task-id", abstain_id, "--out", str(out), "--agent-name", "harness-x"),
                          read_timeout_seconds=60) as client:
            listed = (await client.list_tools()).tools
            assert [t.name for t in listed] == ["reset", *[n for n, _ in own], *[t["name"] for t in builtin]]
            schemas = {t.name: t.input_schema for t in listed}
            assert all(schemas[n] == p for n, p in own)  # the sandbox's own JSON schemas, as they are
            assert all(schemas[t["name"]] == t["parameters"] for t in builtin)  # data/llm/tools.json's
            first = await client.call_tool("reset", {})
            before_end(first)
            assert info["instruction"] in text(first) and first.structured_content["turn"] == 0
            end = await client.call_tool("abstain", {"reason": "cannot be done as asked"})
            assert not end.is_error and end.structured_content["episode_ended"] and "episode is over" in text(end)
            after = await client.call_tool("abstain", {"reason": "again"})
            assert after.is_error and "episode is over" in text(after)
            first = await client.call_tool("reset", {"task_id": solvable_id})
            before_end(first)
            bad = await client.call_tool("abstain", {})  # no reason: a tool error, one turn spent, as for the LLM agent
            assert bad.is_error and bad.structured_content["turn"] == 1
            assert family == "terminal" or "Invalid action" in text(bad)  # a shell takes any text as a command
            busy = await client.call_tool("reset", {"task_id": abstain_id})  # no skipping a task once seen
            assert busy.is_error and "still running" in text(busy)
            last = await script(client, first)
            assert last.structured_content["episode_ended"], text(last)

    asyncio.run(session())
    records = list(iter_records(out))
    assert [r["task_id"] for r in records] == [abstain_id, solvable_id]
    assert all(r["agent"] == "harness-x" and r["seed"] == episode_seed(0, env_id, r["task_id"]) for r in records)
    assert (records[0]["outcome"], records[0]["tau"], records[0]["turns"]) == ("timely", 1, 1)
    assert records[1]["tau"] is None and records[1]["steps"][0]["action"] == "abstain({})"
    for rec in records:  # the MCP server is a faithful conduit: the same actions on the env give the same record
        direct = replayed(env_id, rec)
        keys = ["outcome", "tau", "turns", "task_reward", "success", "committed"]
        if family != "terminal":  # shell output is not required to be byte-identical across sandboxes
            keys.append("steps")
        assert {k: rec[k] for k in keys} == {k: direct[k] for k in keys}
    report = subprocess.run([*CLI, "report", str(out), "--json", "--bootstrap", "0"], capture_output=True,
                            text=True, cwd=ROOT, check=True)
    overall = json.loads(report.stdout)["overall"]
    assert (overall["n_abstain"], overall["n_solvable"]) == (1, 1)


def test_sessions_walk_the_split_and_record_what_is_left_open(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """One server per task, as harnesses start them: each takes the next unrecorded task; a seen episode that the
    session leaves open is an agent error; a session that never looked at its task writes nothing."""
    out = tmp_path / "runs.jsonl"
    args = ("AbstainQA-v0", "--out", str(out), "--agent-name", "walker", "--seed", "3")

    async def one(act: bool) -> str:
        async with Client(stdio(*args), read_timeout_seconds=60) as client:
            prompt = await client.get_prompt("task")  # the task as a user message
            first = await client.call_tool("reset", {})  # the same episode, still fresh
            assert text(first) in prompt.messages[0].content.text
            if act:
                await client.call_tool("abstain", {"reason": "no"})
            return first.structured_content["task_id"]

    first, second = asyncio.run(one(act=True)), asyncio.run(one(act=False))
    # a harness's health check: it lists the tools and stops the server with SIGTERM; nothing is recorded
    proc = subprocess.Popen([*CLI, "mcp", *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT)
    assert proc.stdin is not None and proc.stdout is not None
    for message in ({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}},
                    {"jsonrpc": "2.0", "method": "notifications/initialized"},
                    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}):
        proc.stdin.write(json.dumps(message) + "\n")
        proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["id"] == 1
    assert [t["name"] for t in json.loads(proc.stdout.readline())["result"]["tools"]][0] == "reset"
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 0
    records = list(iter_records(out))
    assert first != second and [r["task_id"] for r in records] == [first, second]
    assert records[1]["extras"]["error"].startswith("the MCP session ended before the episode did")
    assert records[1]["outcome"] != "timely" and not records[1]["success"]
    # another seed is another run: refused at launch with one line and exit code 2, before anything is written
    from agentabstain_gym.cli import main

    assert main(["mcp", "AbstainQA-v0", "--out", str(out), "--agent-name", "walker", "--seed", "4"]) == 2
    assert "--seed 3, not 4" in capsys.readouterr().err
    assert len(list(iter_records(out))) == 2


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_streamable_http(tmp_path: Path) -> None:
    env_id = "AbstainQA-v0"
    out, port = tmp_path / "runs.jsonl", _free_port()
    server = subprocess.Popen([*CLI, "mcp", env_id, "--transport", "http", "--port", str(port), "--out", str(out),
                               "--agent-name", "http-harness", "--index", "0"],
                              cwd=ROOT, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while True:
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert server.poll() is None and time.monotonic() < deadline, "the HTTP server did not start"
            time.sleep(0.1)

        async def session() -> str:
            async with Client(f"http://127.0.0.1:{port}/mcp", read_timeout_seconds=60) as client:
                names = [t.name for t in (await client.list_tools()).tools]
                assert names == ["reset", "search", "answer", "abstain"]
                first = await client.call_tool("reset", {})
                before_end(first)
                nope = await client.call_tool("answer", {"text": 5})  # a number: sent on, the env takes it as text
                assert nope.structured_content["episode_ended"]
                return first.structured_content["task_id"]

        task_id = asyncio.run(session())
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=30)
    records = list(iter_records(out))
    assert [(r["task_id"], r["agent"], r["steps"][0]["action"]) for r in records] == [
        (task_id, "http-harness", "answer[5]")]


def test_env_failure_is_recorded_and_the_session_goes_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The suite's own failure mid-episode: an env error record (not the agent's), and a fresh env for the next task."""
    from agentabstain_gym.mcp_server import Session

    out = tmp_path / "runs.jsonl"
    session = Session("AbstainQA-v0", out=str(out), agent="t")
    assert not session.reset()[2]

    def broken(action: str) -> None:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(session.env, "step", broken)
    message, state, is_error = session.call("search", {"query": "anything"})
    assert is_error and state is not None and state["episode_ended"] and "environment error" in message
    assert not session.reset()[2]  # the next task, on a rebuilt env
    session.close()  # seen and unfinished: the agent's error
    first, second = iter_records(out)
    assert first["extras"]["env_error"] == "RuntimeError: disk on fire" and "error" not in first["extras"]
    assert second["extras"]["error"].startswith("the MCP session ended") and second["task_id"] != first["task_id"]
