"""The LLM agent end to end: real HTTP on loopback through the real openai client, against a scripted server."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest
from llm_server import ScriptedLLMServer, garbage, raw_tool, require_openai, slow, status, text, tool, tools

import agentabstain_gym  # noqa: F401 - registers the ids
from agentabstain_gym.agents import make_agent
from agentabstain_gym.agents.llm import BudgetExhausted, LLMAgent, check_llm_config
from agentabstain_gym.agents.llm_client import LLMError
from agentabstain_gym.agents.playbook import Operation, Playbook, Reflection, Trigger, update
from agentabstain_gym.runner import EvalConfig, evaluate, run_episode

require_openai()


@pytest.fixture(scope="module")
def env() -> gym.Env:
    return gym.make("AbstainQA-v0")


def task_of(env: gym.Env, category: str) -> str:
    return next(t.task_id for t in env.unwrapped.tasks(split="test") if t.category == category)


def agent_for(server: ScriptedLLMServer, sleeps: list[float] | None = None, **kwargs) -> LLMAgent:
    kwargs.setdefault("timeout", 5.0)
    return LLMAgent(family="qa", base_url=server.base_url, model="scripted-model", api_key="k",
                    sleep=(sleeps.append if sleeps is not None else lambda _s: None), **kwargs)


def test_tool_calling_episode_records_the_transcript(env: gym.Env) -> None:
    task_id = task_of(env, "answer_unknown")  # w = 2: one search shows the fact is missing
    with ScriptedLLMServer([tool("search", query="Wergate river"), tool("abstain", reason="not in the corpus")]) as srv:
        record = run_episode(env, agent_for(srv), task_id, seed=0)
    assert [s["action"] for s in record["steps"]] == ["search[Wergate river]", "abstain[not in the corpus]"]
    assert record["outcome"] == "timely" and record["tau"] == 2
    first, second = srv.requests
    assert first["model"] == "scripted-model" and first["temperature"] == 0.0
    assert [t["function"]["name"] for t in first["tools"]] == ["search", "answer", "abstain"]
    assert first["messages"][0]["role"] == "system" and "abstain" in first["messages"][0]["content"]
    assert first["messages"][1]["role"] == "user" and "Question:" in first["messages"][1]["content"]
    call_id = second["messages"][2]["tool_calls"][0]["id"]
    assert second["messages"][3] == {"role": "tool", "tool_call_id": call_id,
                                     "content": record["steps"][0]["observation"]}
    transcript = record["extras"]["transcript"]
    assert transcript["model"] == "scripted-model" and transcript["tool_mode"] is True
    assert [c["messages_upto"] for c in transcript["calls"]] == [2, 4]
    assert transcript["messages"][:4] == second["messages"]  # request i = messages[:messages_upto] + tools
    assert transcript["usage"] == {"requests": 2, "tokens": 220}
    json.dumps(record)  # the record stays JSON


def test_eval_by_name_configured_from_the_environment(tmp_path, monkeypatch) -> None:
    with ScriptedLLMServer([], default=tool("abstain", reason="scripted")) as srv:
        monkeypatch.setenv("ABSTAIN_GYM_LLM_BASE_URL", srv.base_url)
        monkeypatch.setenv("ABSTAIN_GYM_LLM_MODEL", "env-model")
        monkeypatch.setenv("ABSTAIN_GYM_LLM_API_KEY", "secret")
        records = evaluate(EvalConfig(env_ids=["AbstainQA-v0"], agents=["llm"], episodes=3),
                           out=tmp_path / "runs.jsonl")
    assert len(records) == 3 and all(r["agent"] == "llm" and r["tau"] == 1 for r in records)
    assert all(r["extras"]["transcript"]["model"] == "env-model" for r in records)
    assert len(srv.requests) == 3 and (tmp_path / "runs.jsonl").read_text().count("\n") == 3


def test_plain_text_fallback_parses_the_last_action(env: gym.Env) -> None:
    script = [text("I should look first.\nsearch[Wergate [port] river]"),
              text("The passages do not say.\nAction: abstain[no passage gives it]")]
    with ScriptedLLMServer(script) as srv:
        record = run_episode(env, agent_for(srv, use_tools=False), task_of(env, "answer_unknown"), seed=0)
    assert [s["action"] for s in record["steps"]] == ["search[Wergate [port] river]", "abstain[no passage gives it]"]
    assert all("tools" not in r for r in srv.requests)
    assert "search[query]" in srv.requests[0]["messages"][0]["content"]
    assert srv.requests[1]["messages"][-1]["role"] == "user"


def test_malformed_replies_cost_the_turn_and_reach_the_env_as_they_are(env: gym.Env) -> None:
    script = [tool("teleport", to="answer"), raw_tool("search", "{not json"), tool("search"), garbage(), text(""),
              tools(("search", {"query": "a"}), ("answer", {"text": "b"})), tool("abstain", reason="")]
    with ScriptedLLMServer(script) as srv:
        record = run_episode(env, agent_for(srv), task_of(env, "subjective"), seed=0)
    actions = [s["action"] for s in record["steps"]]
    assert actions == ['teleport({"to": "answer"})', "search({not json)", "search({})", "", "", "search[a]",
                       "abstain[]"]
    assert all(s["observation"].startswith("Invalid action") for s in record["steps"][:5])
    assert record["turns"] == 7 and record["outcome"] == "late"
    calls = record["extras"]["transcript"]["calls"]
    assert "malformed" in calls[3] and "JSONDecodeError" in calls[3]["malformed"]
    last = srv.requests[-1]["messages"]
    ids = [c["id"] for c in last[-3]["tool_calls"]]
    assert [m.get("tool_call_id") for m in last[-2:]] == ids
    assert last[-1]["content"].startswith("Not executed")


def test_transient_errors_are_retried_with_exponential_backoff(env: gym.Env) -> None:
    sleeps: list[float] = []
    script = [status(429, retry_after=0.25), status(500), status(503), tool("abstain", reason="judgement")]
    with ScriptedLLMServer(script) as srv:
        record = run_episode(env, agent_for(srv, sleeps), task_of(env, "subjective"), seed=0)
    assert record["outcome"] == "timely"
    assert sleeps == [0.25, 2.0, 4.0]  # Retry-After honoured, then 1 * 2**attempt
    errors = record["extras"]["transcript"]["calls"][0]["errors"]
    assert ["429" in errors[0], "500" in errors[1], "503" in errors[2]] == [True, True, True]
    assert record["extras"]["transcript"]["usage"]["requests"] == 4


def test_timeouts_are_retried(env: gym.Env) -> None:
    sleeps: list[float] = []
    with ScriptedLLMServer([slow(0.6, tool("answer", text="late")), tool("abstain", reason="x")]) as srv:
        record = run_episode(env, agent_for(srv, sleeps, timeout=0.2), task_of(env, "subjective"), seed=0)
    assert record["tau"] == 1 and sleeps == [1.0]
    assert "Timeout" in record["extras"]["transcript"]["calls"][0]["errors"][0]


def test_non_transient_errors_and_spent_retries_end_the_episode_as_an_agent_error(env: gym.Env) -> None:
    sleeps: list[float] = []
    with ScriptedLLMServer([status(400), status(500), status(500)]) as srv:
        agent = agent_for(srv, sleeps, max_retries=1)
        record = run_episode(env, agent, task_of(env, "subjective"), seed=0)
        assert "LLMError" in record["extras"]["error"] and "HTTP 400" in record["extras"]["error"]
        assert sleeps == [] and record["outcome"] == "missed" and record["extras"]["transcript"]["calls"]
        with pytest.raises(LLMError, match="gave up after 2 attempts"):
            agent.reset()
            agent.act("obs", {"turn": 0, "max_turns": 10, "instruction": "q"})
    assert sleeps == [1.0]


def test_budget_raises_by_default_or_abstains_when_asked(env: gym.Env) -> None:
    task_id = task_of(env, "answer_unknown")
    with ScriptedLLMServer([], default=tool("search", query="more")) as srv:
        record = run_episode(env, agent_for(srv, max_requests=2), task_id, seed=0)
        assert record["turns"] == 2 and "BudgetExhausted" in record["extras"]["error"]
        assert record["extras"]["transcript"]["budget_exhausted"] is True and record["outcome"] == "missed"
        record = run_episode(env, agent_for(srv, max_tokens=300, on_budget="abstain"), task_id, seed=0)
        assert record["steps"][-1]["action"] == "abstain[LLM budget exhausted (330 tokens of 300)]"
        assert record["tau"] == 4
    with pytest.raises(ValueError):
        LLMAgent(family="qa", model="m", on_budget="pray")
    assert issubclass(BudgetExhausted, RuntimeError)


def test_playbook_goes_into_the_system_prompt(env: gym.Env, tmp_path) -> None:
    book = update(Playbook(), None, Reflection("t", operations=[Operation(
        "add", section="early_abstain", lesson="Stop on judgement words.", trigger=Trigger("best", "instruction"))]
    )).playbook
    book.save(tmp_path / "pb.json")
    with ScriptedLLMServer([], default=tool("abstain", reason="x")) as srv:
        for playbook in (book, str(tmp_path / "pb.json"), book.render()):
            run_episode(env, agent_for(srv, playbook=playbook), task_of(env, "subjective"), seed=0)
        agent = agent_for(srv, playbook=book)
        agent.set_playbook(None)
        run_episode(env, agent, task_of(env, "subjective"), seed=0)
    with pytest.raises(FileNotFoundError):
        agent_for(srv, playbook=str(tmp_path / "typo.json"))
    systems = [r["messages"][0]["content"] for r in srv.requests]
    assert all("[early-0001] helpful=0 harmful=0 :: Stop on judgement words." in s for s in systems[:3])
    assert "early-0001" not in systems[3]


def test_family_tool_tables_and_sandbox_schemas() -> None:
    terminal = LLMAgent(family="terminal", model="m")
    terminal._start("$ ", {"turn": 0, "max_turns": 20, "instruction": "build it"})
    assert [t.name for t in terminal.tools] == ["run", "submit", "abstain"]
    assert terminal._call_action("run", json.dumps({"command": "ls -la\nmake"})) == "ls -la\nmake"
    assert terminal._call_action("submit", "{}") == "submit"
    web = LLMAgent(family="web", model="m")
    web._start("Search page", {"turn": 0, "max_turns": 10, "instruction": "buy socks",
                               "available_actions": {"has_search_bar": True, "clickables": ["search"]}})
    assert web._call_action("click", '{"button": "Buy Now"}') == "click[Buy Now]"
    assert "Clickable: search" in web.messages[1]["content"] and "Instruction: buy socks" in web.messages[1]["content"]
    sandbox = LLMAgent(family="tools", model="m")
    schema = {"type": "function", "function": {"name": "lookup_order", "description": "Find an order.",
                                               "parameters": {"type": "object",
                                                              "properties": {"order_id": {"type": "string"}}}}}
    sandbox._start("Hello", {"turn": 0, "max_turns": 30, "instruction": "cancel A1", "tools": [schema]})
    assert [t.name for t in sandbox.tools] == ["lookup_order", "respond", "abstain"]
    assert json.loads(sandbox._call_action("lookup_order", '{"order_id": "A1"}')) == {
        "tool": "lookup_order", "arguments": {"order_id": "A1"}}
    assert sandbox._call_action("respond", '{"text": "done"}') == "respond[done]"
    text_mode = LLMAgent(family="tools", model="m", use_tools=False)
    text_mode._start("Hello", {"turn": 0, "max_turns": 30, "instruction": "x", "tools": [schema]})
    assert text_mode.parse_text('I will look.\n{"tool": "lookup_order", "arguments": {"order_id": "A1"}}') == \
        '{"tool": "lookup_order", "arguments": {"order_id": "A1"}}'
    assert '"lookup_order"' in text_mode.messages[0]["content"]
    with pytest.raises(KeyError, match="known"):
        LLMAgent(family="chess", model="m")


def test_make_agent_needs_a_model(monkeypatch) -> None:
    monkeypatch.delenv("ABSTAIN_GYM_LLM_MODEL", raising=False)
    with pytest.raises(ValueError, match="ABSTAIN_GYM_LLM_MODEL"):
        make_agent("llm", "AbstainQA-v0")
    with pytest.raises(ValueError, match="ABSTAIN_GYM_LLM_MODEL"):
        check_llm_config()
    monkeypatch.setenv("ABSTAIN_GYM_LLM_MODEL", "m")
    assert make_agent("llm", "AbstainQA-v0").family == "qa"
