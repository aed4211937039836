"""Hostile model replies and harness arguments against the LLM-facing parsers: tool calls written into a reply's
text (:mod:`agentabstain_gym.agents.tool_call_parsing`) and the integrations' tool-call episode
(:mod:`agentabstain_gym.integrations.episode`). Nothing may raise, and no reply may cost time quadratic in its size."""

from __future__ import annotations

import json
import random
import time

import pytest

from agentabstain_gym.agents.tool_call_parsing import content_call_id, content_tool_calls, parse_content_calls
from agentabstain_gym.integrations.episode import Episode

NAMES = ["search", "answer", "abstain"]
CALL = '{"name": "search", "arguments": {"query": "a"}}'
PIECES = [
    CALL, "<tool_call>", "</tool_call>", f"<tool_call>{CALL}</tool_call>", "```json\n", "```", "\n```\n", "```\n",
    "<|python_tag|>", "[", "]", "{", "}", '"name": ', '"arguments": ', "NaN", "Infinity", "9" * 5000, "\ud800",
    "\udfff", "\\ud800", "\x1eAGX-EXIT:0\x1e", "\x1eAGX-READY:1\x1e", "\x00", " " * 3000, "\t\n" * 500, "é漢😀",
    "[" * 3000 + "]" * 3000, '{"type": "function", "function": ' + CALL + "}", '"parameters": "{\\"q\\": 1}"',
]


def hostile_replies(n: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(PIECES) for _ in range(rng.randint(1, 12))) for _ in range(n)]


def test_no_hostile_reply_raises_or_stalls() -> None:
    replies = hostile_replies(2500)
    started = time.perf_counter()
    slowest = 0.0
    for reply in replies:
        one = time.perf_counter()
        calls, rest = content_tool_calls(reply, NAMES)
        found, _ = parse_content_calls(reply, NAMES)
        slowest = max(slowest, time.perf_counter() - one)
        assert isinstance(rest, str) and len(calls) == len(found)
        for i, call in enumerate(calls):
            assert call["id"] == content_call_id(reply, i)
            json.loads(call["function"]["arguments"])
    assert time.perf_counter() - started < 60 and slowest < 2.0, slowest


def test_a_lone_surrogate_beside_a_call_is_no_crash() -> None:
    reply = f"thinking \ud800 <tool_call>{CALL}</tool_call>"
    calls, rest = content_tool_calls(reply, NAMES)
    assert [c["function"]["name"] for c in calls] == ["search"] and rest == "thinking \ud800"


@pytest.mark.parametrize("reply, limit", [
    ("```" + " " * 63_000 + "\nx", 1.0),  # a fence followed by blanks: the fence pattern was quadratic in the run
    (f"<tool_call>{CALL}</tool_call>" * 20_000, 4.0),  # every call's id hashed the whole reply again
], ids=["fence-and-blanks", "20000-calls"])
def test_big_replies_cost_linear_time(reply: str, limit: float) -> None:
    started = time.perf_counter()
    content_tool_calls(reply, NAMES)
    assert time.perf_counter() - started < limit


def test_hostile_harness_arguments_cost_the_turn_and_raise_nothing() -> None:
    episode = Episode("AbstainQA-v0")
    task_id = episode.env.unwrapped.tasks(split="test")[0].task_id
    deep: dict = {}
    node = deep
    for _ in range(5000):
        node["a"] = {}
        node = node["a"]
    hostile = [({1: "a", "b": 2}, "search"), ({"query": {1, 2}}, "search"), (b"bytes", "search"),
               ({"query": 10 ** 5000}, "search"), ({"query": deep}, "search"), ({"query": "\ud800"}, "search"),
               ('{"query": ' + "[" * 100_000 + "]" * 100_000 + "}", "search"), ({"x": 1}, "\udfff"),
               ({"text": "\x1eAGX-EXIT:0\x1e"}, "answer"), (None, None)]
    try:
        episode.start(task_id)
        for arguments, name in hostile[:8]:  # none of them is a usable call: each costs one turn, and that is all
            episode.send(episode.action_for_call(name, arguments))  # type: ignore[arg-type]
            assert not episode.done
        arguments, name = hostile[8]
        episode.send(episode.action_for_call(name, arguments))  # an answer (holding a framing marker) ends it
        assert episode.done and episode.record is not None and episode.record["turns"] == 9
        assert isinstance(episode.action_for_call(None, None), str)  # type: ignore[arg-type]
    finally:
        episode.close()
