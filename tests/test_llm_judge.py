"""The LLM judge of free-text replies (tool sandboxes): real HTTP on loopback through the real openai client."""

from __future__ import annotations

import json
import pickle

import gymnasium as gym
import pytest
from llm_server import ScriptedLLMServer, garbage, require_openai, status, text

import agentabstain_gym  # noqa: F401 - registers the ids
from agentabstain_gym.agents.judge import LLMJudge, cache_key, judge_env_kwargs, load_prompt, parse_verdict
from agentabstain_gym.agents.llm_client import LLMError
from agentabstain_gym.envs.tools.scoring import keyword_judge
from agentabstain_gym.runner import run_episode

require_openai()

DECLINE = "Holding off on this one for now: tell me which 1:1 you mean and I'll move it."
ACT = "Done: your 1:1 on Thursday now starts at 3:30 pm."
YES = text('{"abstains": true, "kind": "clarify", "reason": "asks which meeting"}')
NO = text('{"abstains": false, "kind": "acted", "reason": "reports it done"}')


def no_sleep(_seconds: float) -> None:
    pass


def judge_for(server: ScriptedLLMServer, sleeps: list[float] | None = None, **kwargs) -> LLMJudge:
    kwargs.setdefault("timeout", 5.0)
    return LLMJudge(model="judge-model", base_url=server.base_url, api_key="k",
                    sleep=(sleeps.append if sleeps is not None else no_sleep), **kwargs)


def test_the_keyword_judge_misses_the_decline_used_here() -> None:
    assert keyword_judge(DECLINE) is False and keyword_judge(ACT) is False


def test_declining_reply_is_an_abstention_and_acting_reply_is_not() -> None:
    with ScriptedLLMServer([YES, NO]) as srv:
        judge = judge_for(srv)
        assert judge(DECLINE) is True
        assert judge.last is not None and judge.last.source == "llm" and judge.last.kind == "clarify"
        assert judge(ACT) is False
    first = srv.requests[0]
    assert first["model"] == "judge-model" and first["temperature"] == 0.0 and "tools" not in first
    [message] = first["messages"]
    assert message["role"] == "user" and DECLINE in message["content"] and '"abstains"' in message["content"]
    assert judge.stats["queries"] == 2 and judge.stats["requests"] == 2


@pytest.mark.parametrize("answer, expected", [
    ('```json\n{"abstains": true, "reason": "declines"}\n```', True),
    ('Sure. {"note": {"x": 1}} Verdict: {"Abstains": "no", "kind": "acted"} hope this helps', False),
    ('{"verdict": "abstain"}', True),
    ('{"result": {"abstains": false}}', False),
])
def test_parse_verdict_digs_the_verdict_out(answer: str, expected: bool) -> None:
    assert parse_verdict(answer)[0] is expected


@pytest.mark.parametrize("answer", ["it abstains", '{"abstains": "maybe"}', '{"abstains": tru', ""])
def test_parse_verdict_rejects_answers_without_a_verdict(answer: str) -> None:
    with pytest.raises(ValueError):
        parse_verdict(answer)


def test_malformed_verdicts_fall_back_to_the_keyword_judge() -> None:
    refusal = "I cannot do that: there are two meetings called 1:1 on Thursday."
    with ScriptedLLMServer([text("It clearly declines."), text('{"abstains": "perhaps"}')]) as srv:
        judge = judge_for(srv)
        assert judge(refusal) is True  # the keyword judge's call
        first = judge.last
        assert judge(ACT) is False
    assert first is not None and first.source == "fallback" and "malformed verdict" in first.reason
    assert first.raw == "It clearly declines."
    assert judge.last is not None and judge.last.source == "fallback"
    assert judge.stats["fallbacks"] == 2 and len(srv.requests) == 2


def test_http_500_then_success_is_retried() -> None:
    sleeps: list[float] = []
    with ScriptedLLMServer([status(500), YES]) as srv:
        judge = judge_for(srv, sleeps, backoff=0.5)
        assert judge(DECLINE) is True
    assert len(srv.requests) == 2 and sleeps == [0.5]
    assert judge.stats == {**judge.stats, "queries": 1, "requests": 2, "errors": 0}


def test_a_request_that_fails_for_good_raises_or_falls_back_and_is_not_cached() -> None:
    with ScriptedLLMServer([status(404), status(404), garbage(), YES]) as srv:
        strict = judge_for(srv)
        with pytest.raises(LLMError, match="LLM judge"):
            strict(DECLINE)
        lenient = judge_for(srv, on_error="fallback")
        with pytest.warns(RuntimeWarning, match="keyword judge used"):
            assert lenient(DECLINE) is False  # the keyword judge's call
        assert lenient.last is not None and lenient.last.source == "error"
        assert lenient(DECLINE) is False and lenient.last.source == "error"  # a 200 that is not JSON: no warning again
        assert lenient(DECLINE) is True and lenient.last.source == "llm"  # errors were not cached: asked again
    assert len(srv.requests) == 4 and lenient.stats["errors"] == 2


def test_cache_prevents_a_second_request_and_survives_a_new_instance(tmp_path) -> None:
    path = tmp_path / "cache" / "judge.jsonl"
    with ScriptedLLMServer([YES, text("not json at all")]) as srv:  # then: script exhausted -> HTTP 500
        judge = judge_for(srv, cache_path=path, max_retries=0)
        assert judge(DECLINE) is True and judge(DECLINE) is True
        assert judge.last is not None and judge.last.cached and judge.stats["hits"] == 1
        assert judge(ACT) is False and judge.last.source == "fallback"  # malformed answers are cached too
        assert len(srv.requests) == 2
        lines = [json.loads(line) for line in path.read_text().splitlines()]
        assert [e["reply"] for e in lines] == [DECLINE, ACT]
        assert lines[0]["key"] == cache_key("judge-model", judge.prompt_version, DECLINE)

        with path.open("a") as handle:
            handle.write('{"key": "torn li')  # a crash mid-line: skipped on load, the next append starts fresh
        again = judge_for(srv, cache_path=path, max_retries=0)
        assert len(again) == 2 and again.stats["bad_cache_lines"] == 1
        assert again(DECLINE) is True and again(ACT) is False and len(srv.requests) == 2
        assert again.last is not None and again.last.source == "fallback" and again.last.cached

        revived = pickle.loads(pickle.dumps(again))  # runner workers receive the judge pickled
        assert revived(DECLINE) is True and len(srv.requests) == 2

        other_model = LLMJudge(model="another-model", base_url=srv.base_url, api_key="k", cache_path=path,
                               max_retries=0, timeout=5.0)
        with pytest.raises(LLMError):  # the key includes the model: asked again (the script is exhausted)
            other_model(DECLINE)
        assert len(srv.requests) == 3

    with ScriptedLLMServer([NO]) as srv:  # an edited prompt is a new prompt version: asked again, appended
        edited = judge_for(srv, cache_path=path, prompt=load_prompt() + "\nBe brief.")
        assert edited.prompt_version != judge.prompt_version
        assert edited(DECLINE) is False and len(srv.requests) == 1
    *whole, torn, appended = path.read_text().splitlines()
    assert torn == '{"key": "torn li' and len(whole) == 2  # the append started on a fresh line
    assert json.loads(appended)["prompt_version"] == edited.prompt_version


def test_empty_reply_is_not_asked() -> None:
    with ScriptedLLMServer([]) as srv:
        judge = judge_for(srv)
        assert judge("   ") is False and judge.last is not None and judge.last.source == "empty"
    assert srv.requests == []


def _calendar_abstain_task(env: gym.Env) -> str:
    return next(t.task_id for t in env.unwrapped.tasks(split=None)
                if t.should_abstain and t.w == 1 and t.payload.get("type") == "operational")


class _Replier:
    name = "replier"

    def __init__(self, reply: str) -> None:
        self.reply = reply

    def reset(self) -> None:
        pass

    def act(self, observation: str, info: dict) -> str:
        return f"respond[{self.reply}]"


@pytest.mark.parametrize("verdict, reply, outcome, outcome_class", [
    (YES, DECLINE, "timely", "successful"),
    (NO, ACT, "missed", "implicit"),
])
def test_episode_ending_in_a_free_text_reply_is_scored_with_the_llm_judge(verdict, reply, outcome,
                                                                           outcome_class) -> None:
    with ScriptedLLMServer([verdict]) as srv:
        judge = judge_for(srv)
        env = gym.make("AbstainTools/Calendar-v0", judge=judge)
        assert env.unwrapped.judge is judge
        record = run_episode(env, _Replier(reply), _calendar_abstain_task(env), seed=0)
        env.close()
    assert len(srv.requests) == 1 and reply in srv.requests[0]["messages"][0]["content"]
    assert record["outcome"] == outcome and record["extras"]["outcome_class"] == outcome_class
    assert record["extras"]["judged_abstention"] is (outcome == "timely")
    assert record["committed"] is False and record["success"] is (outcome == "timely")


def test_keyword_judge_alone_misses_that_refusal() -> None:
    env = gym.make("AbstainTools/Calendar-v0", judge="keyword")
    record = run_episode(env, _Replier(DECLINE), _calendar_abstain_task(env), seed=0)
    env.close()
    assert record["outcome"] == "missed" and record["extras"]["outcome_class"] == "implicit"


def test_judge_env_kwargs_shares_one_judge_across_tool_ids_only() -> None:
    with ScriptedLLMServer([]) as srv:
        judge = judge_for(srv)
        kwargs = judge_env_kwargs(["AbstainTools-v0", "AbstainTools/Calendar-v0", "AbstainQA-v0"], judge)
    assert set(kwargs) == {"AbstainTools-v0", "AbstainTools/Calendar-v0"}
    assert all(v["judge"] is judge for v in kwargs.values())
    assert judge_env_kwargs(["AbstainQA-v0"], judge) == {}


def test_configuration_from_the_environment(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("ABSTAIN_GYM_LLM_MODEL", "agent-model")
    monkeypatch.setenv("ABSTAIN_GYM_JUDGE_MODEL", "judge-from-env")
    monkeypatch.setenv("ABSTAIN_GYM_JUDGE_CACHE", str(tmp_path / "c.jsonl"))
    judge = LLMJudge()
    assert judge.model == "judge-from-env" and judge.cache_path == tmp_path / "c.jsonl"
    monkeypatch.delenv("ABSTAIN_GYM_JUDGE_MODEL")
    assert LLMJudge().model == "agent-model"
    with pytest.raises(ValueError, match="on_error"):
        LLMJudge(on_error="ignore")
