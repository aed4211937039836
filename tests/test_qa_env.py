"""AbstainQA-v0 end to end: actions, bad input, scoring, the oracle through the metrics, the heuristic's figures."""

from __future__ import annotations

import gc
import json
from pathlib import Path

import gymnasium as gym
import pytest

import agentabstain_gym  # noqa: F401
from agentabstain_gym.core import metrics
from agentabstain_gym.core.search_index import SearchIndex
from agentabstain_gym.envs.qa.dataset import build_dataset
from agentabstain_gym.envs.qa.oracle import oracle_actions
from agentabstain_gym.envs.qa.scoring import exact_match, normalize_answer, token_f1
from agentabstain_gym.runner import run_episode


def play(env: gym.Env, task_id: str, actions: list[str]) -> dict:
    env.reset(seed=0, options={"task_id": task_id})
    for action in actions:
        _, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            return info["abstention"]
    raise AssertionError("episode did not end")


@pytest.fixture(scope="module")
def env() -> gym.Env:
    return gym.make("AbstainQA-v0")


def test_default_set_counts(env: gym.Env) -> None:
    tasks = env.unwrapped.tasks()
    assert len(tasks) == 1000
    assert sum(t.should_abstain for t in tasks) == 500
    for category in ("answer_unknown", "false_premise", "subjective", "underspecified_context",
                     "underspecified_intent"):
        assert sum(t.category == category for t in tasks) == 100


def test_oracle_is_perfect_through_the_metrics(env: gym.Env) -> None:
    dataset = build_dataset()
    records = [play(env, t.task_id, oracle_actions(t, dataset)) for t in env.unwrapped.tasks()]
    summary = metrics.summarize(records, bootstrap=0)
    assert summary["absrec@1"] == 1.0
    assert summary["spl"] == 1.0
    assert summary["over_abstention_rate"] == 0.0
    assert summary["success_rate"] == 1.0
    assert summary["paired_accuracy"] == 1.0
    unknown = [r for r in records if r["category"] == "answer_unknown"]
    assert all(r["evidence_turn"] == 1 and r["tau"] == 2 and r["reaction_delay"] == 0 for r in unknown)


def test_heuristic_agent_figures(env: gym.Env, capsys: pytest.CaptureFixture[str]) -> None:
    from agentabstain_gym.agents import make_agent

    agent = make_agent("heuristic", "AbstainQA-v0")
    records = [run_episode(env, agent, t.task_id, seed=0) for t in env.unwrapped.tasks(split="test")]
    rep = metrics.report(records, bootstrap=0)
    with capsys.disabled():
        print("\nheuristic QA agent on the test split:",
              json.dumps({k: rep["overall"][k] for k in ("absrec@1", "spl", "over_abstention_rate",
                                                         "success_rate", "paired_accuracy")}))
    assert rep["overall"]["success_rate"] >= 0.6
    assert rep["overall"]["absrec@1"] >= 0.3


def test_search_returns_top_k_and_counts_searches(env: gym.Env) -> None:
    task = env.unwrapped.tasks()[0]
    obs, _ = env.reset(seed=0, options={"task_id": task.task_id})
    assert obs.startswith("Question: ")
    for left in range(9, -1, -1):
        obs, _, _, truncated, info = env.step("search[year founded]")
        assert f"searches left: {left}" in obs
        if left == 9:
            assert obs.count("\n[") <= 3 and "[1] P" in obs
    # the turn budget (10) ends the episode exactly at the tenth search
    assert truncated and info["turn"] == 10


def test_search_limit_and_truncation() -> None:
    env = gym.make("AbstainQA-v0", max_searches=1, max_turns=3)
    env.reset(seed=0)
    env.step("search[anything]")
    obs, reward, terminated, truncated, info = env.step("search[again]")
    assert obs.startswith("Invalid action: no searches left")
    obs, reward, terminated, truncated, info = env.step("search[again]")
    assert truncated and not terminated and reward == 0.0
    record = info["abstention"]
    assert record["turns"] == 3 and record["tau"] is None
    assert record["outcome"] in ("missed", "failure")


@pytest.mark.parametrize("action, expected", [
    ("search[", "not of the form"), ("answer]", "not of the form"), ("", "empty"), ("   ", "empty"),
    ("search[]", "needs a query"), ("answer[  ]", "needs an answer"), ("fly[away]", "unknown verb"),
    ("x" * 1_000_000, "longer than the limit"), ("\x00\x01\x1b[2J", "not of the form"),
    ("click[buy now]", "unknown verb"),
])
def test_malformed_actions_explain_and_spend_the_turn(env: gym.Env, action: str, expected: str) -> None:
    env.reset(seed=0)
    before = env.unwrapped.state_key()
    obs, reward, terminated, truncated, info = env.step(action)
    assert obs.startswith("Invalid action") and expected in obs
    assert info["turn"] == 1 and not terminated and reward == 0.0
    assert env.unwrapped.state_key() == before
    assert "accept" in obs.lower() or "e.g." in obs


def test_abstain_at_turn_one_on_solvable_is_over_abstention(env: gym.Env) -> None:
    task = next(t for t in env.unwrapped.tasks() if not t.should_abstain)
    record = play(env, task.task_id, ["abstain[not sure]"])
    assert record["outcome"] == "over_abstain" and record["success"] is False and record["tau"] == 1


def test_answer_scoring_uses_exact_match_and_f1(env: gym.Env) -> None:
    task = next(t for t in env.unwrapped.tasks() if not t.should_abstain)
    gold = task.payload["answers"][0]
    env.reset(seed=0, options={"task_id": task.task_id})
    _, reward, terminated, _, info = env.step(f"answer[  {gold.upper()}. ]")
    assert terminated and reward == 1.0 and info["abstention"]["success"] is True
    env.reset(seed=0, options={"task_id": task.task_id})
    _, reward, _, _, info = env.step("answer[something else entirely]")
    assert reward < 1.0 and info["abstention"]["outcome"] == "failure"
    assert normalize_answer("The  Orvane, Holdings!") == "orvane holdings"
    assert exact_match("an Apple", ["apple"]) and not exact_match("apples", ["apple"])
    assert token_f1("red blue", ["red green"]) == pytest.approx(0.5)


def test_premature_abstention_on_answer_unknown(env: gym.Env) -> None:
    task = next(t for t in env.unwrapped.tasks() if t.category == "answer_unknown")
    record = play(env, task.task_id, ["abstain[]"])
    assert record["outcome"] == "premature" and record["success"] is False


def test_corrupt_index_cache_is_rebuilt(tmp_path: Path) -> None:
    docs = [f"passage number {i} about topic {i % 7}" for i in range(200)]
    first = SearchIndex(docs, cache_dir=tmp_path)
    assert first.search("topic 3", k=1)
    path = first.path
    del first  # an open index maps its files; corrupting them under it would crash the process, not test us
    gc.collect()
    for f in path.iterdir():
        if f.is_file():
            f.write_bytes(b"garbage")
    again = SearchIndex(docs, cache_dir=tmp_path)
    assert again.search("passage number 17", k=1)[0][0] == 17
    (again.path / "abstain_gym.json").unlink()
    assert SearchIndex(docs, cache_dir=tmp_path).search("number 5", k=1)[0][0] == 5


def test_hostile_queries_never_reach_the_query_parser() -> None:
    docs = ["hdmi cable red", "dont panic", "body text"]
    index = SearchIndex(docs)
    for q in ['hdmi "cable', "don't", "[x]", "AND OR", "(", "body:red", "a:b", "*", "~~~", "\x00"]:
        index.search(q, k=3)
    assert index.search("HDMI cable!!", k=1)[0][0] == 0


def test_abstentionbench_loader(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("\n".join(json.dumps(p) for p in [
        {"id": "d1", "title": "Lake Vorn", "text": "Lake Vorn is 42 metres deep."},
        {"id": "d2", "title": "Mount Ary", "text": "Mount Ary rises to 3100 metres."},
    ]))
    questions = tmp_path / "questions.jsonl"
    questions.write_text("\n".join(json.dumps(r) for r in [
        {"question": "How deep is Lake Vorn?", "reference_answers": ["42 metres", "42"], "should_abstain": False,
         "metadata": {"pair_id": "p1"}},
        {"question": "What is the best lake?", "reference_answers": None, "should_abstain": True,
         "metadata": {"category": "subjective", "pair_id": "p1"}},
        {"question": "How deep is Lake Quell?", "reference_answers": None, "should_abstain": True,
         "metadata": {"category": "answer_unknown"}},
    ]))
    env = gym.make("AbstainQA-v0", questions_file=str(questions), corpus_file=str(corpus))
    tasks = env.unwrapped.tasks()
    assert [t.w for t in tasks] == [None, 1, 2]
    deep = play(env, tasks[0].task_id, ["search[Lake Vorn depth]", "answer[42]"])
    assert deep["success"] and deep["task_reward"] == 1.0
    env.reset(seed=0, options={"task_id": tasks[0].task_id})
    obs, *_ = env.step("search[Lake Vorn depth]")
    assert "42 metres deep" in obs
    unknown = play(env, tasks[2].task_id, ["search[Lake Quell]", "abstain[not in corpus]"])
    assert unknown["outcome"] == "timely" and unknown["evidence_turn"] == 1

    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"question": "Q?", "should_abstain": "yes"}))
    with pytest.raises(ValueError, match=r"bad.jsonl: record 1: field 'should_abstain'"):
        gym.make("AbstainQA-v0", questions_file=str(bad), corpus_file=str(corpus))
    with pytest.raises(ValueError, match="go together"):
        gym.make("AbstainQA-v0", questions_file=str(questions))
