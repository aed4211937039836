"""The verifiers environments, rolled out for real through verifiers' own generate loop with a scripted
OpenAI-compatible client (no model): tool calls become env steps, the rubric is the project's shaped reward."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import pytest
from conftest import require_backend, skip_or_fail

try:
    import verifiers as vf
    from openai.types.chat import ChatCompletion
except ImportError:
    skip_or_fail("verifiers is not installed (pip install verifiers)", allow_module_level=True)

import agentabstain_gym  # noqa: F401
from agentabstain_gym.agents.llm import family_table
from agentabstain_gym.core import outcome as oc
from agentabstain_gym.core.metrics import summarize
from agentabstain_gym.integrations.episode import NOT_RUN, IntegrationError, task_rows
from agentabstain_gym.integrations.verifiers_env import AbstainGymEnv, load_environment, summarize_states
from agentabstain_gym.wrappers.reward import AbstentionReward

Policy = Callable[[list[dict[str, Any]], list[str]], dict[str, Any]]


def call(name: str, arguments: dict[str, Any], n: int = 0) -> dict[str, Any]:
    return {"id": f"call{n:05d}x", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


class ScriptedClient:
    """Stands in for ``openai.AsyncOpenAI``: ``chat.completions.create`` answers with ``policy(messages, tools)``."""

    def __init__(self, policy: Policy) -> None:
        self.policy, self.seen = policy, []
        self.chat = type("Chat", (), {})()
        self.chat.completions = self
        self.base_url, self.api_key = "http://scripted.invalid/v1", "none"

    async def create(self, *, model: str, messages: list[Any], tools: list[Any] | None = None,
                     **_: Any) -> ChatCompletion:
        messages = [dict(m) for m in messages]
        names = [t["function"]["name"] for t in tools or []]
        self.seen.append({"messages": messages, "tools": names})
        message = self.policy(messages, names)
        return ChatCompletion.model_validate({
            "id": f"r{len(self.seen)}", "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "message": message,
                         "finish_reason": "tool_calls" if message.get("tool_calls") else "stop"}]})


def rollouts(env: AbstainGymEnv, policy: Policy, n: int | None = None) -> tuple[list[dict[str, Any]], ScriptedClient]:
    client = ScriptedClient(policy)
    dataset = env.get_dataset(n=n if n is not None else -1)
    out = asyncio.run(env.generate(dataset, client=client, model="scripted", state_columns=["abstention"]))
    return out["outputs"], client


def turns(messages: list[dict[str, Any]]) -> int:
    return sum(m.get("role") == "assistant" for m in messages)


def search_then_abstain(messages: list[dict[str, Any]], tools: list[str]) -> dict[str, Any]:
    """Web and QA: one search, then abstain (tau = 2); tool sandboxes (no search action): abstain at once."""
    if turns(messages) == 0 and "search" in tools:
        return {"role": "assistant", "content": "", "tool_calls": [call("search", {"query": "blue"}, 0)]}
    return {"role": "assistant", "content": "", "tool_calls": [call("abstain", {"reason": "cannot"}, 1)]}


@pytest.mark.parametrize("family", ["web", "qa", "tools"])
def test_scripted_rollouts_score_with_the_abstention_reward(family: str) -> None:
    env = load_environment(family, "test", limit=8)
    outputs, client = rollouts(env, search_then_abstain)
    labels = {r.task_id: r for r in task_rows(family, "test", limit=8)}
    assert len(outputs) == 8
    records = []
    for out in outputs:
        record = out["abstention"]
        label = labels[record["task_id"]]
        tau = 2 if family in ("web", "qa") else 1
        assert record["tau"] == tau and out["stop_condition"] == "has_final_env_response"
        assert record["outcome"] == oc.classify(label.should_abstain, label.w, tau, False)
        shaped = AbstentionReward(gym.make(label.env_id)).shaped(record)
        assert out["reward"] == pytest.approx(shaped)
        assert out["metrics"]["side_correct"] == float(oc.side_correct(record["outcome"]))
        assert out["metrics"]["over_abstained"] == float(not label.should_abstain)
        assert out["completion"][-1]["role"] == "tool"  # the env's last observation closes the rollout
        records.append(record)
    assert summarize_states(outputs)["absrec@1"] == summarize(records, bootstrap=0)["absrec@1"]
    builtin = [t["name"] for t in family_table(family)["tools"]]
    assert all(seen["tools"][-len(builtin):] == builtin for seen in client.seen)
    first_prompts = [s["messages"] for s in client.seen if turns(s["messages"]) == 0]
    assert len(first_prompts) == 8
    for messages in first_prompts:  # the first observation replaced the bare instruction; no label in sight
        text = json.dumps(messages)
        assert messages[0]["role"] == "system" and "should_abstain" not in text and "pair_id" not in text
    if family == "tools":
        assert all(len(s["tools"]) > len(builtin) for s in client.seen)


def test_qa_solving_text_replies_and_extra_calls() -> None:
    """Tool arguments reach the env (the gold answer succeeds), a second call in one reply is not run, and a reply
    without tool calls is sent to the env as its text."""
    env = load_environment("qa", "val", limit=10)
    gold = {t.instruction: t.payload["answers"][0] for t in gym.make("AbstainQA-v0").unwrapped.tasks(split="val")
            if not t.should_abstain}

    def policy(messages: list[dict[str, Any]], tools: list[str]) -> dict[str, Any]:
        question = next(m["content"] for m in messages if m["role"] == "user")
        instruction = next((q for q in gold if q in question), None)
        if turns(messages) == 0:
            return {"role": "assistant", "content": "",
                    "tool_calls": [call("search", {"query": instruction or question}, 0),
                                   call("abstain", {"reason": "never run"}, 1)]}
        if instruction is not None:
            return {"role": "assistant", "content": "", "tool_calls": [call("answer", {"text": gold[instruction]}, 2)]}
        return {"role": "assistant", "content": "abstain[the passages do not say]"}

    outputs, client = rollouts(env, policy)
    assert {out["abstention"]["should_abstain"] for out in outputs} == {True, False}
    for out in outputs:
        record = out["abstention"]
        assert record["steps"][0]["action"].startswith("search[") and record["turns"] == 2
        if record["should_abstain"]:
            assert record["steps"][1]["action"] == "abstain[the passages do not say]"
        else:
            assert record["outcome"] == oc.SUCCESS and out["reward"] == pytest.approx(record["task_reward"])
    second = [s["messages"] for s in client.seen if turns(s["messages"]) == 1]
    assert second and all(m[-1] == {"role": "tool", "tool_call_id": "call00001x", "content": NOT_RUN}
                          for m in second)


def test_a_rollout_stopped_by_verifiers_is_an_agent_error() -> None:
    """A model error ends the rollout before the env does; the record says so and the reward is a failure's."""

    def broken(messages: list[dict[str, Any]], tools: list[str]) -> dict[str, Any]:
        if turns(messages) == 0:
            return {"role": "assistant", "content": "", "tool_calls": [call("search", {"query": "x"})]}
        raise vf.ModelError("the model server went away")

    outputs, _ = rollouts(load_environment("qa", "test", limit=2), broken)
    for out in outputs:
        record = out["abstention"]
        assert "error" in record["extras"] and record["tau"] is None and record["turns"] == 1
        assert out["reward"] == pytest.approx(AbstentionReward(gym.make("AbstainQA-v0")).shaped(record))


def test_terminal_rollouts_run_in_the_sandbox() -> None:
    require_backend("bwrap")

    def policy(messages: list[dict[str, Any]], tools: list[str]) -> dict[str, Any]:
        if turns(messages) == 0:
            return {"role": "assistant", "content": "", "tool_calls": [call("run", {"command": "echo hi-vf"})]}
        return {"role": "assistant", "content": "", "tool_calls": [call("submit", {}, 1)]}

    env = load_environment("terminal", "test", limit=2, env_kwargs={"backend": "bwrap"})
    outputs, client = rollouts(env, policy)
    for out in outputs:
        record = out["abstention"]
        assert record["turns"] == 2 and record["tau"] is None and "hi-vf" in record["steps"][0]["observation"]
        assert out["metrics"]["side_correct"] == float(record["outcome"] == oc.SUCCESS)


def test_loads_through_verifiers_and_rejects_bad_arguments() -> None:
    env = vf.load_environment("agentabstain_gym.integrations.verifiers_env", family="web", split="val", limit=3)
    assert isinstance(env, AbstainGymEnv) and len(env.get_dataset()) == 3
    row = env.get_dataset()[0]
    assert set(json.loads(row["info"])) == {"task_id", "env_id"}  # no label in the rows a trainer reads
    with pytest.raises(IntegrationError, match="unknown family"):
        load_environment("chess")
    with pytest.raises(IntegrationError, match="unknown split"):
        load_environment("qa", "dev")
