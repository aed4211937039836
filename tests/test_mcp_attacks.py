"""A hostile client against ``abstain-gym mcp``: it may not play a task twice, skip a task it has looked at, learn
a label before the end, or leave a request unanswered (and so hang its own harness) with an odd line."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import skip_or_fail

from agentabstain_gym.core.record import iter_records

try:
    import mcp  # noqa: F401
except ImportError:
    skip_or_fail("the mcp package is not installed (pip install 'mcp>=2.3')", allow_module_level=True)

from agentabstain_gym.mcp_server import Session
from agentabstain_gym.mcp_wire import screen_line

ROOT = Path(__file__).resolve().parents[1]
LABEL_WORDS = ("should_abstain", "category", "outcome", "premature", "timely")


def test_a_task_is_never_played_twice(tmp_path: Path) -> None:
    out = tmp_path / "runs.jsonl"
    session = Session("AbstainQA-v0", out=str(out), agent="retry")
    try:
        first = session.reset()[1]["task_id"]
        session.call("abstain", {"reason": "no"})
        text, state, failed = session.reset(task_id=first)  # retry after seeing how it ended
        assert failed and state is None and "already recorded" in text
        assert not session.running
    finally:
        session.close()
    again = Session("AbstainQA-v0", out=str(out), agent="retry")  # a new server on the same run file
    try:
        assert "already recorded" in again.reset(task_id=first)[0]
        second = again.reset()[1]["task_id"]
        assert second != first
    finally:
        again.close()  # the second task, seen and left open: recorded as an agent error
    assert [r["task_id"] for r in iter_records(out)] == [first, second]


def test_listing_a_sandboxs_own_tools_is_a_look_at_the_task(tmp_path: Path) -> None:
    """A tool sandbox's tools are part of its task (an insufficient-tools task lacks one): a client that listed them
    cannot switch to another task, and the task it looked at is not recorded as played when it leaves."""
    out = tmp_path / "runs.jsonl"
    session = Session("AbstainTools/RetailOrders-v0", out=str(out), agent="peek")
    try:
        current = session.task_id
        other = next(t for t in session.order if t != current)
        assert len(session.listed()) > len(session.builtin)
        text, _state, failed = session.reset(task_id=other)
        assert failed and "still running" in text and session.task_id == current
        assert not session.reset()[2] and session.task_id == current  # the same task, now started
    finally:
        session.close()
    qa = Session("AbstainQA-v0", agent="peek")  # the family's fixed tools say nothing about the task
    try:
        qa.listed()
        other = next(t for t in qa.order if t != qa.task_id)
        assert not qa.reset(task_id=other)[2] and qa.task_id == other
    finally:
        qa.close()


def test_lines_the_sdk_cannot_parse_are_answered_or_repaired() -> None:
    deep = '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"arguments":' + "[" * 50_000 + "]" * 50_000 + "}}"
    for line, code in [(deep, -32700), ('{"jsonrpc":"2.0","id":"a","method":', -32700),
                       ('{"jsonrpc":"2.0","id":8,"method":"ping","params":' + "9" * 5000 + "}", -32700),
                       ('{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"x":' + "[" * 300 + "]" * 300 + "}}",
                        -32600)]:
        passed, error = screen_line(line)
        assert passed is None and error is not None and json.loads(error)["error"]["code"] == code, line[:80]
    passed, error = screen_line('{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"\\ud800",'
                                '"arguments":{"q\\udfff":"a\\ud800b"}}}')
    assert error is None and passed is not None
    assert json.loads(passed)["params"] == {"name": "\ufffd", "arguments": {"q\ufffd": "a\ufffdb"}}
    assert screen_line("null") == (None, None) and screen_line("  \n") == (None, None)
    ok = '{"jsonrpc":"2.0","id":4,"method":"ping"}'
    assert screen_line(ok) == (ok, None)


class _Wire:
    """The server over stdio, one JSON-RPC line at a time."""

    def __init__(self, *args: str) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "agentabstain_gym.cli", "mcp", *args],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     cwd=ROOT, env=dict(os.environ))
        self.next_id = 100

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode("utf-8", "surrogatepass") + b"\n")
        self.proc.stdin.flush()

    def answer(self, timeout: float = 20.0) -> dict[str, Any]:
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        assert ready, "no answer: the client would wait forever"
        return json.loads(self.proc.stdout.readline())

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.next_id += 1
        self.send(json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params or {}}))
        reply = self.answer()
        assert reply.get("id") == self.next_id
        return reply


def test_every_hostile_request_gets_an_answer_and_the_episode_goes_on(tmp_path: Path) -> None:
    out = tmp_path / "runs.jsonl"
    wire = _Wire("AbstainQA-v0", "--out", str(out), "--agent-name", "hostile")
    try:
        wire.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "hostile", "version": "0"}})
        wire.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        wire.request("tools/call", {"name": "reset", "arguments": {}})
        call = '{{"jsonrpc":"2.0","id":{i},"method":"tools/call","params":{{"name":{name},"arguments":{args}}}}}'
        hostile = [
            ("search", "{\"query\":" + "[" * 100_000 + "]" * 100_000 + "}"),  # nested past any parser
            ("search", '{"query":"\\ud800 lone \\udfff"}'),  # surrogates, escaped: valid JSON text
            ("\\ud800", "{}"),
            ("reset", '{"task_id":"\\udc00"}'),
            ("search", '{"query":' + "9" * 5000 + "}"),  # an integer past Python's digit limit
            ("search", json.dumps({"query": "x" * 5_000_000})),
            ("search", "[1, 2]"),
            ("search", '{"query": {"a": [1, {"b": null}]}}'),
        ]
        for n, (name, args) in enumerate(hostile):
            wire.send(call.format(i=n, name=json.dumps(name) if not name.startswith("\\") else f'"{name}"',
                                  args=args))
            reply = wire.answer()
            assert reply.get("id") == n, reply
            assert not any(word in json.dumps(reply) for word in LABEL_WORDS), reply
        wire.send('{"jsonrpc":"2.0","id":50,"method":')  # not JSON at all
        assert wire.answer()["id"] == 50
        final = wire.request("tools/call", {"name": "abstain", "arguments": {"reason": "cannot tell \ud83d\ude00"}})
        assert "episode is over" in final["result"]["content"][0]["text"]
    finally:
        wire.proc.kill()
        wire.proc.wait()
    records = list(iter_records(out))
    assert len(records) == 1 and records[0]["agent"] == "hostile"
    for line in out.read_text(encoding="utf-8").splitlines():  # the run file stays strict JSON
        if line.strip() and not line.startswith("#"):
            json.loads(line, parse_constant=lambda c: pytest.fail(f"non-standard JSON constant {c}"))
