"""The LLM reflector and curator, and CONVOLVE with LLMs, end to end against a scripted loopback server."""

from __future__ import annotations

import json

import pytest
from llm_server import ScriptedLLMServer, require_openai, status, text, tool

from agentabstain_gym.agents.playbook import Playbook, update
from agentabstain_gym.agents.playbook.reflector import LLMReflector, extract_json
from agentabstain_gym.convolve import ConvolveConfig, run_convolve

require_openai()

RECORD = {"task_id": "qa-1", "family": "qa", "should_abstain": True, "category": "subjective", "w": 1,
          "evidence_turn": 0, "tau": None, "outcome": "missed", "extras": {"instruction": "How lovely is Wergate?"},
          "steps": [{"turn": 1, "action": "search[Wergate]", "observation": "Wergate is a port.", "reward": 0.0},
                    {"turn": 2, "action": "answer[a port]", "observation": "You answered: a port", "reward": 0.0}]}
REFLECTION = {"diagnosis": "The question asks for a judgement.", "warranted_turn": 1, "evidence_turn": 0,
              "evidence": "How lovely", "lesson": "Judgement words make a question unanswerable.",
              "trigger": {"on": "instruction", "pattern": "\\blovely\\b", "min_turn": 1}, "bullet_tags": {}}


def reflector(server: ScriptedLLMServer) -> LLMReflector:
    return LLMReflector(family="qa", base_url=server.base_url, model="reflect-model", sleep=lambda _s: None)


def test_reflect_and_curate_through_real_http() -> None:
    curated = {"operations": [
        {"op": "add", "section": "early_abstain", "lesson": "Abstain on judgement words such as lovely.",
         "trigger": {"on": "instruction", "pattern": "\\blovely\\b"}},
        {"op": "explode"},
        {"op": "add", "section": "early_abstain", "lesson": "bad regex", "trigger": {"on": "instruction",
                                                                                       "pattern": "(unclosed"}},
        {"op": "add", "section": "wishlist", "lesson": "unknown section"},
        {"op": "delete", "bullet_id": "nope"}]}
    script = [text("Let me think.\n```json\n" + json.dumps(REFLECTION) + "\n```\nDone."), text(json.dumps(curated))]
    with ScriptedLLMServer(script) as srv:
        refl = reflector(srv).reflect(RECORD, Playbook())
    prompt = srv.requests[0]["messages"][0]["content"]
    assert "How lovely is Wergate?" in prompt and "turn 2: action answer[a port]" in prompt
    assert "earliest justified ABSTAIN turn (w): 1" in prompt and "(empty)" in prompt
    assert "The question asks for a judgement." in srv.requests[1]["messages"][0]["content"]
    assert "tools" not in srv.requests[0]
    assert refl.source == "llm" and refl.warranted_turn == 1 and refl.evidence == "How lovely"
    assert [op.op for op in refl.operations] == ["add", "delete"]
    assert refl.operations[0].trigger is not None and refl.operations[0].trigger.family == "qa"
    assert refl.operations[0].sources == ("qa-1",)
    assert len(refl.errors) == 3 and any("explode" in e for e in refl.errors)
    result = update(Playbook(), RECORD, refl)
    assert len(result.playbook) == 1 and result.skipped == ["delete: delete: no bullet 'nope'"]
    assert result.playbook.bullets[0].trigger.matches("So lovely?", family="qa", turn=1)  # type: ignore[union-attr]


@pytest.mark.parametrize("script, n_requests, error", [
    ([text("I cannot answer in JSON, sorry.")], 1, "reflector: no JSON object"),
    ([text(json.dumps(REFLECTION)), text('{"operations": "all of them"}')], 2, "not a list"),
    ([text(json.dumps(REFLECTION)), text("[1, 2")], 2, "curator: no JSON object"),
    ([status(400)], 1, "reflector: request failed"),
    ([status(500), status(500), status(500), status(500), status(500)], 5, "gave up"),
])
def test_malformed_output_and_errors_never_raise(script: list, n_requests: int, error: str) -> None:
    with ScriptedLLMServer(script) as srv:
        refl = reflector(srv).reflect(RECORD, Playbook())
    assert len(srv.requests) == n_requests
    assert refl.operations == [] and any(error in e for e in refl.errors), refl.errors
    assert update(Playbook(), RECORD, refl).playbook.bullets == []


def test_extract_json_digs_the_object_out() -> None:
    assert extract_json('noise {"a": 1} noise') == {"a": 1}
    assert extract_json('```json\n{"a": [1, {"b": 2}]}\n```') == {"a": [1, {"b": 2}]}
    with pytest.raises(ValueError):
        extract_json("[]")


def _responder(agent_reply) -> callable:
    """Answers reflector and curator prompts, and agent requests (which carry tools) through ``agent_reply``."""
    def reply(body: dict) -> dict:
        if body.get("tools"):
            return agent_reply(body)
        prompt = body["messages"][0]["content"]
        if "You are the reflection model" in prompt:
            return text(json.dumps(REFLECTION))
        return text(json.dumps({"operations": [
            {"op": "add", "section": "general", "lesson": "Ask whether the question wants a fact or a judgement.",
             "trigger": None}]}))
    return reply


def test_convolve_with_the_llm_reflector_on_a_scripted_agent() -> None:
    with ScriptedLLMServer([], default=_responder(lambda body: tool("abstain", reason="x"))) as srv:
        result = run_convolve(ConvolveConfig(agent="never-abstain", reflector="llm", n_train=2, n_val=1,
                                             n_heldout=3, rounds=1, llm={"base_url": srv.base_url,
                                                                         "model": "reflect-model"}))
    lessons = [b["lesson"] for b in result["playbook"]["bullets"]]
    assert "Ask whether the question wants a fact or a judgement." in lessons
    assert len(srv.requests) == 2 * 2 * 2  # (example + twin) x 2 examples x (reflector + curator)
    assert result["heldout"]["base"]["n_abstain"] == 3
    assert all(row["reflection"]["source"] == "llm" for row in result["training_log"] if row["phase"] == "train")


def test_convolve_with_the_llm_agent_puts_the_playbook_in_the_prompt_only() -> None:
    def agent_reply(body: dict) -> dict:
        if "Playbook:" in body["messages"][0]["content"]:
            return tool("abstain", reason="the playbook says so")
        return tool("answer", text="1900")

    with ScriptedLLMServer([], default=_responder(agent_reply)) as srv:
        result = run_convolve(ConvolveConfig(agent="llm", reflector="llm", n_train=1, n_val=0, n_heldout=2,
                                             rounds=1, llm={"base_url": srv.base_url, "model": "m"}))
    base, pb = result["heldout"]["base"], result["heldout"]["playbook"]
    assert all(r["tau"] is None for r in result["records"]["base"]) and base["over_abstention_rate"] == 0.0
    assert all(r["tau"] == 1 for r in result["records"]["playbook"]) and pb["over_abstention_rate"] == 1.0
    agent_requests = [r for r in srv.requests if r.get("tools")]
    held = agent_requests[-8:]  # 4 held-out episodes (2 examples + 2 twins) per condition, one request each
    plain, with_book = held[:4], held[4:]
    for a, b in zip(plain, with_book, strict=True):
        assert a["tools"] == b["tools"] and a["messages"][1:] == b["messages"][1:]
        assert b["messages"][0]["content"].startswith(a["messages"][0]["content"])
        assert "Playbook:" not in a["messages"][0]["content"]
    assert result["config"]["llm"]["model"] == "m"
    assert all(r["extras"]["transcript"]["playbook"] for r in result["records"]["playbook"])
