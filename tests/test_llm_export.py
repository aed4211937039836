"""Chat-format export of episode records: round trips through the env, through JSONL, and through tool calls."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest
from llm_server import ScriptedLLMServer, require_openai, tool

import agentabstain_gym  # noqa: F401 - registers the ids
from agentabstain_gym.agents import make_agent
from agentabstain_gym.agents.llm import LLMAgent
from agentabstain_gym.core.record import append_records
from agentabstain_gym.export import episode_to_chat, export_chat, main, write_chat_jsonl
from agentabstain_gym.runner import run_episode


@pytest.fixture(scope="module")
def records() -> list[dict]:
    env = gym.make("AbstainQA-v0")
    agent = make_agent("heuristic", "AbstainQA-v0")
    tasks = env.unwrapped.tasks(split="test")[:12]
    out = []
    for i, task in enumerate(tasks):
        record = run_episode(env, agent, task.task_id, seed=i)
        record["agent"] = "heuristic"
        out.append(record)
    return out


def test_text_export_replays_in_the_env(records: list[dict]) -> None:
    env = gym.make("AbstainQA-v0")
    for record, example in zip(records, export_chat(records), strict=True):
        messages = example["messages"]
        assert [m["role"] for m in messages[:2]] == ["system", "user"]
        assert messages[1]["content"] == f"Instruction: {record['extras']['instruction']}"
        assert "abstain[" in messages[0]["content"] and example["tools"] == []
        assert messages[-1]["role"] == "assistant"  # ends on what the model should learn to say
        assert example["metadata"]["outcome"] == record["outcome"] and example["metadata"]["task_id"] == \
            record["task_id"]
        env.reset(seed=record["seed"], options={"task_id": record["task_id"]})
        turns = messages[2:]
        for i in range(0, len(turns), 2):
            assert turns[i]["role"] == "assistant"
            observation, *_ = env.step(turns[i]["content"])
            if i + 1 < len(turns):
                assert turns[i + 1] == {"role": "user", "content": observation}


def test_tools_export_maps_back_to_the_same_actions(records: list[dict]) -> None:
    agent = LLMAgent(family="qa", model="m")
    agent._start("", {"turn": 0, "max_turns": 10})
    for record in records:
        example = episode_to_chat(record, style="tools", final_observation=True)
        assert [t["function"]["name"] for t in example["tools"]] == ["search", "answer", "abstain"]
        calls = [m for m in example["messages"] if m["role"] == "assistant"]
        assert len(calls) == len(record["steps"])
        for message, step in zip(calls, record["steps"], strict=True):
            fn = message["tool_calls"][0]["function"]
            assert agent._call_action(fn["name"], json.dumps(fn["arguments"])) == step["action"]
        replies = [m for m in example["messages"] if m["role"] == "tool"]
        assert [r["content"] for r in replies] == [s["observation"] for s in record["steps"]]
        assert all((r["tool_call_id"], r["name"]) == (c["tool_calls"][0]["id"], c["tool_calls"][0]["function"]["name"])
                   for r, c in zip(replies, calls, strict=True))


def test_jsonl_round_trip_and_cli(records: list[dict], tmp_path, capsys) -> None:
    runs = tmp_path / "runs.jsonl"
    append_records(runs, records)
    assert write_chat_jsonl(records, tmp_path / "direct.jsonl") == len(records)
    lines = [json.loads(line) for line in (tmp_path / "direct.jsonl").read_text().splitlines()]
    assert lines == list(export_chat(records))
    assert main([str(runs), "--format", "chat", "--out", str(tmp_path / "chat.jsonl")]) == 0
    assert (tmp_path / "chat.jsonl").read_bytes() == (tmp_path / "direct.jsonl").read_bytes()
    assert main([str(runs), "--out", str(tmp_path / "timely.jsonl"), "--outcome", "timely"]) == 0
    kept = [json.loads(line) for line in (tmp_path / "timely.jsonl").read_text().splitlines()]
    assert len(kept) == sum(r["outcome"] == "timely" for r in records) and all(
        k["metadata"]["outcome"] == "timely" for k in kept)
    assert main([str(tmp_path / "missing.jsonl"), "--out", str(tmp_path / "x.jsonl")]) == 2
    assert "episodes written" in capsys.readouterr().err
    with pytest.raises(ValueError):
        episode_to_chat(records[0], style="yaml")
    with pytest.raises(ValueError):
        episode_to_chat(records[0], arguments="yaml")


def test_llm_transcripts_are_exported_as_they_were_sent() -> None:
    require_openai()
    env = gym.make("AbstainQA-v0")
    task_id = next(t.task_id for t in env.unwrapped.tasks(split="test") if t.category == "answer_unknown")
    with ScriptedLLMServer([tool("search", query="x"), tool("abstain", reason="not there")]) as srv:
        agent = LLMAgent(family="qa", base_url=srv.base_url, model="m")
        record = run_episode(env, agent, task_id, seed=0)
    example = episode_to_chat(json.loads(json.dumps(record)))
    sent = record["extras"]["transcript"]["messages"]
    # as sent, in the row's conventions: 9-character ids, arguments as objects, tool messages with their tool's name
    assert [(m["role"], m["content"]) for m in example["messages"]] == [(m["role"], m["content"]) for m in sent]
    for got, was in zip(example["messages"], sent, strict=True):
        if "tool_calls" in was:
            assert [(c["function"]["name"], c["function"]["arguments"]) for c in got["tool_calls"]] == [
                (c["function"]["name"], json.loads(c["function"]["arguments"])) for c in was["tool_calls"]]
    assert example["messages"][3]["tool_call_id"] == example["messages"][2]["tool_calls"][0]["id"]
    assert example["messages"][3]["name"] == "search"
    assert example["tools"] == srv.requests[0]["tools"]
    as_strings = episode_to_chat(record, arguments="string")["messages"][2]["tool_calls"][0]["function"]
    assert as_strings["arguments"] == sent[2]["tool_calls"][0]["function"]["arguments"]
    assert [m["role"] for m in example["messages"]] == ["system", "user", "assistant", "tool", "assistant"]
    assert example["messages"][-1]["tool_calls"][0]["function"]["name"] == "abstain"
    full = episode_to_chat(record, final_observation=True)["messages"]
    assert full[-1]["role"] == "tool" and full[-1]["content"] == record["steps"][-1]["observation"]
    text_only = episode_to_chat(record, style="text")["messages"]
    assert [m["content"] for m in text_only if m["role"] == "assistant"] == [s["action"] for s in record["steps"]]
