"""The Inspect tasks, run for real through inspect_ai with its offline mock model (scripted tool calls)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest
from conftest import require_backend, skip_or_fail

try:
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ChatMessage, ModelOutput, ModelUsage, get_model
except ImportError:
    skip_or_fail("inspect_ai is not installed (pip install inspect-ai)", allow_module_level=True)

import agentabstain_gym  # noqa: F401
from agentabstain_gym.agents.llm import family_table
from agentabstain_gym.core import outcome as oc
from agentabstain_gym.core.metrics import summarize
from agentabstain_gym.integrations import inspect_tasks
from agentabstain_gym.integrations.episode import NOT_RUN, IntegrationError
from agentabstain_gym.wrappers.reward import AbstentionReward

MODEL = "mockllm/model"
Policy = Callable[[list[ChatMessage], list[str]], tuple[str, dict[str, Any]] | str]


def mock_model(policy: Policy, seen: list[dict[str, Any]] | None = None) -> Any:
    """Inspect's mock model answering with ``policy(messages, tool names)``: a (tool, arguments) call or text."""

    def output(messages: list[ChatMessage], tools: list[Any], tool_choice: Any, config: Any) -> ModelOutput:
        names = [t.name for t in tools]
        if seen is not None:
            seen.append({"messages": [m.text for m in messages], "tools": names})
        reply = policy(messages, names)
        if isinstance(reply, str):
            out = ModelOutput.from_content(MODEL, reply)
        else:
            out = ModelOutput.for_tool_call(MODEL, reply[0], reply[1])
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # no tokenizer download
        return out

    return get_model(MODEL, custom_outputs=output)


def run(task: Any, policy: Policy, seen: list[dict[str, Any]] | None = None, **kwargs: Any) -> Any:
    logs = inspect_eval(task, model=mock_model(policy, seen), display="none", **kwargs)
    assert logs[0].status == "success", logs[0].error
    return logs[0]


@pytest.fixture(autouse=True)
def _log_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Inspect writes a log per eval: keep them out of the working tree."""
    monkeypatch.setenv("INSPECT_LOG_DIR", str(tmp_path))


def abstain_at_once(messages: list[ChatMessage], tools: list[str]) -> tuple[str, dict[str, Any]]:
    return "abstain", {"reason": "cannot be done"}


def metric_values(log: Any) -> dict[str, float]:
    return {name: m.value for score in log.results.scores for name, m in score.metrics.items()}


@pytest.mark.parametrize(("family", "task_args"), [("web", {}), ("qa", {}), ("tools", {})])
def test_family_task_end_to_end(family: str, task_args: dict[str, Any]) -> None:
    """An episode per sample, each scored with its record; the aggregates are core.metrics' over those records."""
    factory = {"web": inspect_tasks.abstain_web, "qa": inspect_tasks.abstain_qa,
               "tools": inspect_tasks.abstain_tools}[family]
    seen: list[dict[str, Any]] = []
    log = run(factory(split="test", limit=8, **task_args), abstain_at_once, seen)
    assert len(log.samples) == 8
    records = []
    for sample in log.samples:
        score = sample.scores["abstention_scorer"]
        record = score.metadata["abstention"]
        label = sample.metadata
        assert record["task_id"] == sample.id == label["task_id"]
        assert record["tau"] == 1 and record["turns"] == 1
        assert score.answer == record["outcome"] == oc.classify(label["should_abstain"], label["w"], 1, False)
        assert score.value == (1.0 if oc.side_correct(record["outcome"]) else 0.0)
        assert score.metadata["shaped_reward"] == AbstentionReward(gym.make(label["env_id"])).shaped(record)
        records.append(record)
    assert {r["should_abstain"] for r in records} == {True, False}  # both sides are in the sample
    values = metric_values(log)
    expected = summarize(records, bootstrap=0)
    for key in ("absrec@1", "spl", "over_abstention_rate", "premature_rate", "n_abstain", "n_solvable"):
        assert values[key] == pytest.approx(expected[key])
    assert values["over_abstention_rate"] == 1.0
    assert values["accuracy"] == pytest.approx(sum(r["success"] for r in records) / len(records))
    # the model saw the family's actions as tools, and nothing of the label
    builtin = [t["name"] for t in family_table(family)["tools"]]
    assert all(call["tools"][-len(builtin):] == builtin for call in seen)
    if family == "tools":
        assert all(len(call["tools"]) > len(builtin) for call in seen)  # the sandbox's own tools come first
    for call in seen:
        text = "\n".join(call["messages"])
        assert "should_abstain" not in text and "pair_id" not in text


def test_qa_tool_calls_become_env_steps() -> None:
    """Search, then answer with the gold answer: tool arguments reach the env and solvable tasks succeed;
    a second tool call in one reply is not run; a reply without tool calls is sent as text."""
    env = gym.make("AbstainQA-v0")
    gold = {t.instruction: t.payload["answers"][0] for t in env.unwrapped.tasks(split="test")
            if not t.should_abstain}

    def policy(messages: list[ChatMessage], tools: list[str]) -> tuple[str, dict[str, Any]] | str:
        question = next(m.text for m in messages if m.role == "user")
        turns = sum(m.role == "assistant" for m in messages)
        instruction = next((q for q in gold if q in question), None)
        if turns == 0:
            return "search", {"query": instruction or question}
        if instruction is not None:
            return "answer", {"text": gold[instruction]}
        return "abstain[not in the passages]"  # plain text: the env parses it as an action

    log = run(inspect_tasks.abstain_qa(split="test", limit=10), policy)
    outcomes = {s.id: s.scores["abstention_scorer"].answer for s in log.samples}
    solvable = [s for s in log.samples if not s.metadata["should_abstain"]]
    assert solvable and all(outcomes[s.id] == oc.SUCCESS for s in solvable)
    for s in log.samples:
        record = s.scores["abstention_scorer"].metadata["abstention"]
        assert record["steps"][0]["action"].startswith("search[")
        if s.metadata["should_abstain"]:
            assert record["tau"] == 2 and record["steps"][1]["action"] == "abstain[not in the passages]"

    def two_calls(messages: list[ChatMessage], tools: list[Any], tool_choice: Any, config: Any) -> ModelOutput:
        out = ModelOutput.for_tool_call(MODEL, "search", {"query": "x"})
        out.message.tool_calls = [*(out.message.tool_calls or []),
                                  *(ModelOutput.for_tool_call(MODEL, "abstain", {"reason": "r"}).message.tool_calls
                                    or [])]
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return out

    logs = inspect_eval(inspect_tasks.abstain_qa(limit=1), model=get_model(MODEL, custom_outputs=two_calls),
                        display="none")
    sample = logs[0].samples[0]
    assert sample.error is None, sample.error
    record = sample.scores["abstention_scorer"].metadata["abstention"]
    assert record["tau"] is None and record["turns"] == record["max_turns"]  # the abstain call was never run
    assert sum(m.role == "tool" and m.text == NOT_RUN for m in sample.messages) == record["turns"]


def test_limit_ends_the_episode_as_an_agent_error() -> None:
    """An Inspect message limit stops the loop; the episode is recorded as an agent error, not dropped."""
    log = run(inspect_tasks.abstain_qa(limit=2), lambda m, t: ("search", {"query": "anything"}), message_limit=5)
    for sample in log.samples:
        record = sample.scores["abstention_scorer"].metadata["abstention"]
        assert "error" in record["extras"] and record["tau"] is None and not record["success"]
        assert record["outcome"] in (oc.MISSED, oc.FAILURE)


def test_terminal_task_runs_commands_in_the_sandbox() -> None:
    require_backend("bwrap")

    def policy(messages: list[ChatMessage], tools: list[str]) -> tuple[str, dict[str, Any]]:
        turns = sum(m.role == "assistant" for m in messages)
        return ("run", {"command": "echo hello-from-inspect"}) if turns == 0 else ("submit", {})

    log = run(inspect_tasks.abstain_terminal(limit=2, env_kwargs={"backend": "bwrap"}), policy)
    for sample in log.samples:
        record = sample.scores["abstention_scorer"].metadata["abstention"]
        tool_texts = [m.text for m in sample.messages if m.role == "tool"]
        assert "hello-from-inspect" in tool_texts[0] and "[exit status 0]" in tool_texts[0]
        assert record["turns"] == 2 and record["tau"] is None
        assert record["outcome"] == oc.classify(sample.metadata["should_abstain"], sample.metadata["w"], None,
                                                record["outcome"] == oc.SUCCESS)


def test_runs_as_file_task_spec() -> None:
    """What ``inspect eval agentabstain_gym/integrations/inspect_tasks.py@abstain_web`` resolves, in process."""
    path = Path(inspect_tasks.__file__)
    logs = inspect_eval(f"{path}@abstain_web", task_args={"limit": 2}, model=mock_model(abstain_at_once),
                        display="none")
    assert logs[0].status == "success" and len(logs[0].samples) == 2


def test_bad_arguments_fail_with_one_line() -> None:
    with pytest.raises(IntegrationError, match="unknown family"):
        inspect_tasks.abstain_task("chess")
    with pytest.raises(IntegrationError, match="unknown split"):
        inspect_tasks.abstain_qa(split="dev")
    with pytest.raises(IntegrationError, match="numeric RL form"):
        inspect_tasks.abstain_tools(env_id="AbstainTools-Stop-v0")
