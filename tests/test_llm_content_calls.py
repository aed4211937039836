"""Tool calls written in a reply's content (models served without a tool-call parser), end to end.

The replies are response bodies in the shapes vLLM, llama.cpp's server and Ollama return
(tests/data/llm_replies), replayed over real HTTP by the scripted server to the real openai client.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import gymnasium as gym
from llm_server import ScriptedLLMServer, body, require_openai

import agentabstain_gym  # noqa: F401 - registers the ids
from agentabstain_gym.agents.llm import LLMAgent
from agentabstain_gym.agents.tool_call_parsing import parse_content_calls
from agentabstain_gym.runner import run_episode

require_openai()
REPLIES = {p.stem: json.loads(p.read_text(encoding="utf-8"))
           for p in (Path(__file__).parent / "data" / "llm_replies").glob("*.json")}
QA_TOOLS = ("search", "answer", "abstain")


def reply(server: str, name: str) -> dict[str, Any]:
    return body(REPLIES[server][name])


def _episode(script: list[dict[str, Any]]) -> tuple[dict[str, Any], ScriptedLLMServer]:
    env = gym.make("AbstainQA-v0")
    task_id = next(t.task_id for t in env.unwrapped.tasks(split="test") if t.category == "answer_unknown")
    with ScriptedLLMServer(script) as srv:
        record = run_episode(env, LLMAgent(family="qa", base_url=srv.base_url, model="m", api_key="k"), task_id,
                             seed=0)
    return record, srv


def test_calls_in_content_from_real_server_shapes_become_actions() -> None:
    script = [reply("vllm", "hermes_tag_no_parser"), reply("llamacpp", "fenced_json"),
              reply("vllm", "hermes_two_tags_no_parser"), reply("llamacpp", "mentions_json_only"),
              reply("llamacpp", "python_tag_llama31"), reply("ollama", "bare_json_string_arguments"),
              reply("ollama", "bare_json")]
    record, srv = _episode(script)
    actions = [s["action"] for s in record["steps"]]
    mention = REPLIES["llamacpp"]["mentions_json_only"]["choices"][0]["message"]["content"]
    assert actions == ["search[Wergate river length]", "search[Wergate tributaries]", "search[Wergate source]",
                       mention.strip(), "search[Wergate delta]", "search[Wergate mouth]",
                       "abstain[the knowledge base has no length for it]"]
    assert record["steps"][3]["observation"].startswith("Invalid action")  # prose about JSON is not a call
    # what goes back to the server: the call as tool_calls (the prose kept as content), its result as a tool message
    sent = srv.requests[1]["messages"]
    assert sent[2]["content"] == "I will check the knowledge base first."
    call = sent[2]["tool_calls"][0]
    assert call["function"] == {"name": "search", "arguments": json.dumps({"query": "Wergate river length"})}
    assert sent[3] == {"role": "tool", "tool_call_id": call["id"], "content": record["steps"][0]["observation"]}
    two = srv.requests[3]["messages"]
    assert [m["role"] for m in two[-3:]] == ["assistant", "tool", "tool"] and two[-1]["content"].startswith(
        "Not executed")
    assert srv.requests[4]["messages"][-1]["role"] == "user"  # after a text reply, the observation is a user turn
    found = [c.get("content_tool_calls") for c in record["extras"]["transcript"]["calls"]]
    assert found == [1, 1, 2, None, 1, 1, 1]


def test_server_parsed_calls_still_take_precedence() -> None:
    record, _ = _episode([reply("vllm", "parsed_by_server")])
    assert [s["action"] for s in record["steps"]] == ["abstain[the passages never give the length]"]
    assert "content_tool_calls" not in record["extras"]["transcript"]["calls"][0]


def test_what_is_and_is_not_a_call() -> None:
    call = '{"name": "search", "arguments": {"query": "x"}}'
    assert parse_content_calls(f"<tool_call>{call}</tool_call>", QA_TOOLS) == ([("search", {"query": "x"})], "")
    assert parse_content_calls(f"Sure.\n<tool_call>\n{call}", QA_TOOLS) == ([("search", {"query": "x"})], "Sure.")
    assert parse_content_calls(f"[{call}, {call}]", QA_TOOLS)[0] == [("search", {"query": "x"})] * 2
    assert parse_content_calls(f"```\n{call}\n```", QA_TOOLS)[0] == [("search", {"query": "x"})]
    assert parse_content_calls('{"type": "function", "function": ' + call + "}", QA_TOOLS)[0] == [
        ("search", {"query": "x"})]
    # a tag declares a call: an unknown tool is still a call (and costs the turn in the env)
    assert parse_content_calls('<tool_call>{"name": "fly", "arguments": {}}</tool_call>', QA_TOOLS)[0] == [
        ("fly", {})]
    not_calls = [f"The format is {call}.", '{"name": "fly", "arguments": {}}', '```json\n{"name": "search"}\n```',
                 '{"name": "search", "arguments": {"query": "x"}, "note": "extra"}', "<tool_call>{not json</tool_call>",
                 '```python\n{"name": "search", "arguments": {}}\n```', '{"name": "search", "arguments": [1]}',
                 "", "   ", "[]", '{"name": "search", "arguments": "not json"}']
    for text in not_calls:
        assert parse_content_calls(text, QA_TOOLS) == ([], text), text


def test_text_mode_also_reads_a_written_call() -> None:
    agent = LLMAgent(family="qa", model="m", use_tools=False)
    agent._start("Question: where?", {"turn": 0, "max_turns": 10})
    assert agent.parse_text('<tool_call>{"name": "abstain", "arguments": {"reason": "no"}}</tool_call>') == \
        "abstain[no]"
    assert agent.parse_text("search[Wergate]") == "search[Wergate]"
    assert agent.parse_text("I am not sure.") == "I am not sure."


def test_a_reply_nested_thousands_deep_is_text_not_a_crash() -> None:
    """json.loads raises RecursionError (not ValueError) on deep nesting; a hostile reply must not crash the agent."""
    from agentabstain_gym.agents.tool_call_parsing import parse_content_calls

    deep = "[" * 100_000
    for content in (f"<tool_call>{deep}</tool_call>", deep, f"```json\n{deep}\n```",
                    '<tool_call>{"name": "search", "arguments": "' + deep + '"}</tool_call>'):
        assert parse_content_calls(content, ["search"]) == ([], content)



def test_tool_call_arguments_nested_thousands_deep_cost_the_turn() -> None:
    """Server-parsed calls whose arguments are hostile JSON are malformed calls that cost the turn, not a crash."""
    from llm_server import raw_tool, tool

    from agentabstain_gym.integrations.episode import Episode

    deep = "[" * 100_000
    record, _ = _episode([raw_tool("search", deep), tool("abstain", reason="no length")])
    assert record["outcome"] != "error" and "error" not in record["extras"]
    assert record["steps"][0]["observation"].startswith("Invalid action")
    assert record["steps"][1]["action"].startswith("abstain[")
    episode = Episode("AbstainQA-v0")
    assert episode.action_for_call("search", deep).startswith("search(")
