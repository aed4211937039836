"""Any agent input, however hostile, costs a turn and leaves a strict-JSON record; env failures are recorded apart.

Reproduced before the fix: a 4,300-digit JSON integer (AttributeError in the tool-call parser), 10,000 levels of
``[`` (RecursionError), a lone surrogate in an action or an LLM reply (UnicodeEncodeError when the record was
written), NaN in a record (not strict JSON), and a 1 MB reply that the server called 11 tokens (a 20 MB record).
Each crashed a whole ``abstain-gym eval``. The fuzz test feeds 2,000+ adversarial strings to every Text-action id.
"""

from __future__ import annotations

import json
import math
import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest
from gymnasium import spaces

import agentabstain_gym
from agentabstain_gym.agents import env_family
from agentabstain_gym.cli import main
from agentabstain_gym.core.actions import (
    MAX_INT_DIGITS,
    MAX_JSON_DEPTH,
    ActionError,
    json_too_deep,
    parse_action,
)
from agentabstain_gym.core.base_env import json_safe
from agentabstain_gym.envs.qa.env import AbstainQAEnv

FUZZ_IDS = [e for e in agentabstain_gym.ENV_IDS if env_family(e) != "terminal"]
TERMINAL_SAMPLE = 60

HUGE_INT = "1" * 4300
DEEP = 10_000
UNENCODABLE = ("\ud800", "\udfff", "\udc80", "\ud83d", "\x00", "\ufffe", "\uffff", "\U0010ffff", "\u2028", "\u2029",
               "\ufeff", "\u200b", "\x85", "\x1b[31m", "\r", "\r\n", "\x7f", "\x9f", "\U0001f600")
WRONG_VALUES: list[Any] = [None, True, False, 0, -1, 1.5, 10**20, "", "x" * 5000, [], {}, [1, [2, [3]]],
                           {"a": {"b": {}}}, [None], ["\u0000"], "2025-13-45", "2025-03-13T25:99", "NaN"]


# ----- the adversarial strings --------------------------------------------------------------------------------------
def adversarial_strings(seed: int = 0) -> list[tuple[str, str]]:
    """(kind, text) pairs: the input classes that crashed runs, and seeded random text around them."""
    out: list[tuple[str, str]] = []
    for digits in (4300, 4301, 5000, 20_000, 100_000):
        num = "1" * digits
        for text in (num, "-" + num, f"search[{num}]", f"answer[{num}]", f"click[{num}]", f"abstain[{num}]",
                     f"respond[{num}]", f'{{"tool": "x", "arguments": {{"n": {num}}}}}',
                     f'{{"tool": {num}, "arguments": {{}}}}', f'{{"tool": "x", "arguments": [{num}]}}',
                     f'{{"tool": "x", "arguments": {{"n": {num}.5e3}}}}', f"[{num}]", f"{{{num}}}"):
            out.append(("huge_number", text))
    for lit in ("NaN", "Infinity", "-Infinity", "1e999", "-1e999", "1e-999", "0.1e99999999"):
        for text in (f'{{"tool": "x", "arguments": {{"n": {lit}}}}}', lit, f"search[{lit}]",
                     f'{{"tool": "search_clients", "arguments": {{"query": {lit}}}}}'):
            out.append(("huge_number", text))
    for depth in (63, 64, 65, 100, 1000, DEEP, 100_000):
        for opener, closer in (("[", "]"), ("{", "}"), ('{"a":', "}")):
            body = opener * depth
            for text in (body, body + "1" + closer * depth, f"abstain[{body}]", f"search[{body}",
                         f'{{"tool": "x", "arguments": {body}}}',
                         f'{{"tool": "x", "arguments": {{"a": {body}1{closer * depth}}}}}',
                         f'{{"tool": "x", "arguments": {{"a": {body}}}}}'):
                out.append(("deep_nesting", text))
    for ch in UNENCODABLE:
        for text in (ch, ch * 10, f"abstain[{ch}]", f"search[{ch}]", f"answer[{ch}]", f"click[{ch}]",
                     f"respond[{ch}]", f"search[a{ch}b]", f"ab{ch}stain[x]", f"{ch}abstain[x]", "echo " + ch,
                     json.dumps({"tool": "x", "arguments": {"q": ch}}), json.dumps({"tool": ch, "arguments": {}}),
                     '{"tool": "x", "arguments": {"q": "' + ch + '"}}', json.dumps({"tool": "x", "arguments": {ch: 1}})):
            out.append(("unencodable", text))
    for text in ('{"tool": "x", "arguments": {"q": "\\ud800"}}', '{"tool": "\\udfff"}', '"\\ud800"',
                 '{"tool": "x", "arguments": {"\\u0000": "\\u0000"}}', "search[\\ud800]"):
        out.append(("unencodable", text))
    for c in range(32):
        for text in (chr(c), f"search[{chr(c)}]", f"abstain[{chr(c)}]", chr(c) + "search[x]"):
            out.append(("control", text))
    mb = 1_000_000
    for text in ("a" * mb, "[" * mb, "{" * mb, f"search[{'a' * mb}]", f"abstain[{'x' * mb}]", "\ud800" * mb,
                 "a" * 65_536, "a" * 65_537, f"search[{'b ' * 32_760}]", f"answer[{'a' * 65_000}]", " " * mb,
                 '{"tool": "x", "arguments": {"q": "' + "a" * 65_000 + '"}}', "\x00" * 70_000):
        out.append(("huge_text", text))
    for text in ("abstain[", "abstain", "abstain]", "abstain[]", "abstain[]]", "abstain[[]", "ABSTAIN[x]",
                 "Abstain[ x ]", " abstain [ x ] ", "abstain[x]garbage", "abstain\n[x]", "abstain[x\n]", "abstain[[[[",
                 "abstain]]]][[[[", "abstain[]abstain[]", "abstain[" * 1000, "abstain[" * 1000 + "]" * 1000,
                 "abstain()", "abstain{}", "abstain[\\]", "abstain[`rm -rf /`]", "abstain[$(reboot)]",
                 "abstain [x]", "abstain\t[x]", "a bstain[x]", "abstain[" + "]" * 500, "search[abstain[x]]",
                 "abstain[search[x]]", "[abstain]", "{abstain}", '{"tool": "abstain", "arguments": {"reason": "x"}}',
                 "abstain[x" + "\n" * 1000 + "]", "respond[abstain]", "abstain[%s%n%x]", "abstain[{}]"):
        out.append(("abstain_variant", text))
    for tool in ("search_clients", "calculate_chart", "list_readings", "save_chart", "x", "", "abstain", "respond",
                 "search", "__class__", "../etc/passwd"):
        for value in WRONG_VALUES:
            for arg in ("query", "client_id", "date_from"):
                out.append(("tool_call_types", json.dumps({"tool": tool, "arguments": {arg: value}})))
        out += [("tool_call_types", json.dumps({"tool": tool, "arguments": v})) for v in WRONG_VALUES]
        for text in (json.dumps({"tool": tool}), json.dumps({"tool": [tool]}), json.dumps({"name": tool}),
                     json.dumps([tool]), json.dumps({"tool": tool, "arguments": {}, "extra": 1}),
                     '{"tool": "' + tool + '", "arguments": {"query": "a", "query": "b"}}',
                     '{"tool": "' + tool + '", "arguments": {', '{"tool": "' + tool + '"',
                     '{"tool": "' + tool + '",}'):
            out.append(("tool_call_types", text))
    rng = random.Random(seed)
    soup = "[]{}()\"':,\\ \n"
    out += [("bracket_soup", "".join(rng.choice(soup) for _ in range(rng.randint(1, 200)))) for _ in range(200)]
    alphabet = [chr(c) for c in range(128)] + ["\ud800", "\udfff", "é", "中", "\U0001f600", "\u2028", "\ufeff",
                                               "\x85", "\uffff"]
    pieces = ["search[", "click[", "answer[", "abstain[", "respond[", "submit", '{"tool": "', "{", "[", "]", "}",
              '"arguments": ', ": ", ", ", "null", "true", "1e999", "-0", HUGE_INT + "1", "NaN"]
    for _ in range(600):
        roll = rng.random()
        if roll < 0.4:
            text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 80)))
        elif roll < 0.8:
            text = "".join(rng.choice(pieces + alphabet) for _ in range(rng.randint(1, 30)))
        else:
            value = rng.choice([*WRONG_VALUES, HUGE_INT, "\ud800", {"a": [None] * 3}])
            text = json.dumps({"tool": rng.choice(["search_clients", "x", "save_chart"]),
                               "arguments": {rng.choice(["query", "client_id", "title"]): value}})
            if value == HUGE_INT:  # as a JSON number, not a string
                text = text.replace(f'"{HUGE_INT}"', HUGE_INT)
        out.append(("random", text))
    return out


STRINGS = adversarial_strings()


def env_tool_calls(info: dict[str, Any], rng: random.Random, limit: int = 150) -> list[str]:
    """Calls of the env's own tools (so they reach argument validation) with wrong, huge and deep arguments."""
    calls = []
    deepest = "[" * (MAX_JSON_DEPTH - 2) + "]" * (MAX_JSON_DEPTH - 2)  # as deep as a tool call may nest
    for schema in info.get("tools") or []:
        name = schema["function"]["name"]
        for param in schema["function"]["parameters"].get("properties") or {}:
            calls.append(json.dumps({"tool": name, "arguments": {param: rng.choice(WRONG_VALUES)}}))
            for raw in (deepest, "9" * MAX_INT_DIGITS, HUGE_INT, "1e308", "-0.0"):
                calls.append(f'{{"tool": "{name}", "arguments": {{"{param}": {raw}}}}}')
    rng.shuffle(calls)
    return calls[:limit]


def strict_line(record: dict[str, Any]) -> bytes:
    """The record as the strict UTF-8 JSON line a reader expects (raises if it cannot be one)."""
    return json.dumps(record, allow_nan=False, ensure_ascii=False, sort_keys=True, default=dict).encode("utf-8")


def strict_loads(line: bytes) -> dict[str, Any]:
    """Parse a record line, refusing NaN/Infinity and invalid UTF-8."""
    def refuse(name: str) -> Any:
        raise ValueError(f"{name} is not strict JSON")

    return json.loads(line.decode("utf-8", errors="strict"), parse_constant=refuse)


def fuzz(env_id: str, strings: list[str]) -> int:
    """Step ``strings`` through one env (resetting when an episode ends); return how many episodes ended."""
    env = gym.make(env_id)
    assert isinstance(env.action_space, spaces.Text), f"{env_id} is not a Text-action env"
    obs, info = env.reset(seed=0)
    extra = env_tool_calls(info, random.Random(env_id))
    ended = 0
    try:
        for i, text in enumerate([*strings, *extra]):
            try:
                obs, _reward, terminated, truncated, info = env.step(text)
            except Exception as exc:  # noqa: BLE001 - report which string broke which env
                pytest.fail(f"{env_id}: step({text[:60]!r}...) raised {exc!r}")
            assert isinstance(obs, str) and env.observation_space.contains(obs), (env_id, i, text[:60])
            assert "Traceback" not in obs, (env_id, text[:60], obs[:300])
            if terminated or truncated:
                strict_line(info["abstention"])
                ended += 1
                obs, info = env.reset(seed=i)
    finally:
        env.close()
    return ended


# ----- fuzzing every Text-action id --------------------------------------------------------------------------------
def test_the_fuzz_corpus_covers_every_input_class() -> None:
    kinds = {kind for kind, _ in STRINGS}
    assert len(STRINGS) >= 2000
    assert kinds == {"huge_number", "deep_nesting", "unencodable", "control", "huge_text", "abstain_variant",
                     "tool_call_types", "bracket_soup", "random"}


@pytest.mark.parametrize("env_id", FUZZ_IDS)
def test_step_survives_every_adversarial_string(env_id: str) -> None:
    assert fuzz(env_id, [text for _, text in STRINGS]) > 0


def test_terminal_step_survives_a_sample_of_adversarial_strings() -> None:
    from test_terminal_sandbox import require_backend

    require_backend("bwrap")
    by_kind: dict[str, list[str]] = {}
    for kind, text in STRINGS:
        by_kind.setdefault(kind, []).append(text)
    rng = random.Random(1)
    sample = [text for texts in by_kind.values() for text in rng.sample(texts, 6)]  # 9 kinds x 6
    sample += ["echo a\x00b", "echo \ud800", "printf 'a\\x00b'", "head -c 64 /dev/urandom", "exit", "kill -9 $$"]
    assert len(sample) == TERMINAL_SAMPLE
    assert fuzz("AbstainTerminal-v1", sample) > 0


# ----- the reproduced bugs, one by one -----------------------------------------------------------------------------
TOOLS_ID = "AbstainTools/Calendar-v0"


def one_step(env_id: str, action: str) -> tuple[str, dict[str, Any], Any]:
    env = gym.make(env_id)
    env.reset(seed=3)
    before = env.unwrapped.state_key()
    obs, _reward, terminated, truncated, info = env.step(action)
    assert not (terminated or truncated) and info["turn"] == 1  # the turn is spent
    assert env.unwrapped.state_key() == before  # and nothing changed
    return obs, info, env


def test_a_4300_digit_integer_is_refused_with_an_explanation() -> None:
    obs, _info, _env = one_step(TOOLS_ID, f'{{"tool": "list_events", "arguments": {{"limit": {HUGE_INT}}}}}')
    assert obs.startswith("Invalid action: the tool call has an integer of 4300 digits")
    assert f"at most {MAX_INT_DIGITS} digits" in obs and "\n" not in obs
    obs, *_ = one_step(TOOLS_ID, f'{{"tool": "list_events", "arguments": {{"limit": {"9" * MAX_INT_DIGITS}}}}}')
    assert "digits" not in obs  # the longest accepted integer reaches the tool, which judges it


def test_10000_levels_of_nesting_are_refused_before_parsing() -> None:
    for body in ("[" * DEEP, "{" * DEEP, '{"a":' * DEEP, "[" * DEEP + "]" * DEEP):
        obs, *_ = one_step(TOOLS_ID, f'{{"tool": "list_events", "arguments": {{"x": {body}}}}}')
        assert obs.startswith(f"Invalid action: the tool call nests arrays or objects more than {MAX_JSON_DEPTH}")
    obs, *_ = one_step(TOOLS_ID, json.dumps({"tool": "list_events", "arguments": {"x": "[" * DEEP}}))
    assert "nests" not in obs  # brackets inside a string are text, not nesting
    assert json_too_deep("[" * 65) and not json_too_deep("[" * 64 + "]" * 64)
    assert not json_too_deep('["' + "[" * 100 + '"]') and json_too_deep('["\\"' + "[" * 100 + '"]' + "[" * 65)


def test_nonfinite_numbers_are_refused() -> None:
    for literal in ("NaN", "Infinity", "-Infinity", "1e999"):
        parsed = parse_action(f'{{"tool": "x", "arguments": {{"n": {literal}}}}}', ["respond"], allow_tool_calls=True)
        assert isinstance(parsed, ActionError) and "finite" in parsed.message


@pytest.mark.parametrize("env_id", ["AbstainQA-v0", "AbstainWebShop-v1", TOOLS_ID])
def test_surrogates_and_nul_in_an_action_are_explained(env_id: str) -> None:
    verb = "respond" if env_id == TOOLS_ID else "search"
    cases = [("abstain[\ud800]", "lone surrogate (U+D800 at character 8)"),
             (f"{verb}[a\x00b]", f"NUL character (at character {len(verb) + 2})")]
    if env_id == TOOLS_ID:  # an escaped surrogate inside tool-call JSON is refused too
        cases.append(('{"tool": "list_events", "arguments": {"q": "\\udfff"}}', "lone surrogate escape"))
    for action, what in cases:
        obs, *_ = one_step(env_id, action)
        assert obs.startswith("Invalid action:") and what in obs and "\n" not in obs, obs


class _OneHostileAction:
    """A user agent that sends one hostile action, then abstains, so the record shows what the env answered."""

    name = "hostile"
    action = ""

    def reset(self) -> None:
        self.turn = 0

    def act(self, observation: str, info: dict[str, Any]) -> str:
        self.turn += 1
        return self.action if self.turn == 1 else "abstain[done]"


class HugeIntAgent(_OneHostileAction):
    action = f'{{"tool": "list_events", "arguments": {{"limit": {HUGE_INT}}}}}'


class DeepAgent(_OneHostileAction):
    action = '{"tool": "list_events", "arguments": ' + "[" * DEEP + "]" * DEEP + "}"


class SurrogateAgent(_OneHostileAction):
    action = "respond[caf\udce9]"


class NaNExtrasAgent(_OneHostileAction):
    """Its extras hold what strict JSON cannot: NaN, infinities, a lone surrogate, a huge int, a set."""

    action = "abstain[nan]"

    def episode_extras(self) -> dict[str, Any]:
        return {"score": math.nan, "limits": [math.inf, -math.inf], "note\udc80": "caf\udce9",
                "big": 10**5000, "tags": {"b", "a"}}


def eval_lines(tmp_path: Path, agent: str, env_id: str = TOOLS_ID) -> Iterator[dict[str, Any]]:
    out = tmp_path / "runs.jsonl"
    assert main(["eval", env_id, "--agent", f"test_integrity_inputs:{agent}", "--episodes", "3", "--out", str(out),
                 "--quiet", "--json"]) == 0
    lines = out.read_bytes().splitlines()
    assert len(lines) == 3
    yield from (strict_loads(line) for line in lines)


@pytest.mark.parametrize(("agent", "explained"), [
    ("HugeIntAgent", "integer of 4300 digits"), ("DeepAgent", "more than 64 levels deep"),
    ("SurrogateAgent", "lone surrogate (U+DCE9 at character 11)")])
def test_a_hostile_action_no_longer_stops_the_run(tmp_path: Path, agent: str, explained: str) -> None:
    for record in eval_lines(tmp_path, agent):
        first, second = record["steps"]
        assert explained in first["observation"] and "error" not in record["extras"]
        assert second["action"] == "abstain[done]" and record["tau"] == 2
        if agent == "SurrogateAgent":
            assert first["action"] == "respond[caf\ufffd]"  # the recorded text is valid UTF-8


def test_nan_and_unencodable_extras_are_written_as_strict_json(tmp_path: Path) -> None:
    for record in eval_lines(tmp_path, "NaNExtrasAgent", "AbstainQA-v0"):
        extras = record["extras"]
        assert extras["score"] is None and extras["limits"] == [None, None]  # NaN is written as null
        assert extras["note\ufffd"] == "caf\ufffd" and extras["tags"] == ["a", "b"]
        assert extras["big"] == "<integer of 16610 bits>"


def test_json_safe_leaves_clean_values_alone_and_fixes_the_rest() -> None:
    clean = {"a": [1, 2.5, "x", None, True], "b": {"c": "é 😀"}}
    assert json_safe(clean) == clean
    nested: list[Any] = []
    for _ in range(DEEP):  # deeper than json.dumps can encode
        nested = [nested]
    assert "nested too deep" in json.dumps(json_safe(nested))
    assert json_safe({1: "a", None: "b", 2.5: math.nan, ("t",): "u"}) == {"1": "a", "null": "b", "2.5": None,
                                                                           "('t',)": "u"}
    assert json_safe("\ud83d\ude00") == "😀"  # a surrogate pair split in two code points is joined


# ----- env errors are recorded apart from agent errors -------------------------------------------------------------
def test_an_env_whose_step_raises_is_recorded_as_an_env_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    def broken(self: AbstainQAEnv, action: Any) -> Any:
        raise RuntimeError("the index is gone")

    monkeypatch.setattr(AbstainQAEnv, "_act", broken)
    out = tmp_path / "runs.jsonl"
    capsys.readouterr()
    assert main(["eval", "AbstainQA-v0", "--agent", "never-abstain", "--episodes", "4", "--out", str(out), "--quiet",
                 "--json"]) == 0
    captured = capsys.readouterr()
    records = [strict_loads(line) for line in out.read_bytes().splitlines()]
    assert len(records) == 4
    for record in records:
        assert "the index is gone" in record["extras"]["env_error"] and "error" not in record["extras"]
        assert record["success"] is False and record["tau"] is None and record["outcome"] in ("missed", "failure")
    assert "agent errors: 0; env errors: 4" in captured.err
    assert json.loads(captured.out)["overall"]["errors"] == {"agent": 0, "env": 4}


def test_an_env_whose_reset_raises_is_recorded_and_the_run_goes_on(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    original = AbstainQAEnv._begin
    calls = {"n": 0}

    def sometimes_broken(self: AbstainQAEnv, task: Any) -> str:
        calls["n"] += 1
        if calls["n"] % 2:
            raise OSError("corpus unreadable")
        return original(self, task)

    monkeypatch.setattr(AbstainQAEnv, "_begin", sometimes_broken)
    out = tmp_path / "runs.jsonl"
    assert main(["eval", "AbstainQA-v0", "--agent", "heuristic", "--episodes", "6", "--out", str(out), "--quiet",
                 "--json"]) == 0
    records = [strict_loads(line) for line in out.read_bytes().splitlines()]
    failed = [r for r in records if "env_error" in r["extras"]]
    assert len(records) == 6 and len(failed) == 3
    assert all(r["turns"] == 0 and r["steps"] == [] and "corpus unreadable" in r["extras"]["env_error"]
               for r in failed)
    assert all(r["turns"] > 0 for r in records if r not in failed)  # the env recovered for the next episode
    assert main(["report", str(out), "--json"]) == 0


class _BrokenResetAgent(_OneHostileAction):
    def reset(self) -> None:
        raise RuntimeError("reset is broken")


class _BrokenExtrasAgent(_OneHostileAction):
    action = "abstain[x]"

    def episode_extras(self) -> dict[str, Any]:
        return {"note": 1 / 0}


class _ClaimingAgent(_OneHostileAction):
    action = "abstain[x]"

    def episode_extras(self) -> dict[str, Any]:
        return {"env_error": "claimed by the agent", "error": "also claimed", "note": "kept"}


def test_agent_hooks_that_raise_are_agent_errors_and_cannot_claim_env_errors() -> None:
    from agentabstain_gym.runner import run_episode

    env = gym.make("AbstainQA-v0")
    task_id = env.unwrapped.tasks(split="test")[0].task_id
    record = run_episode(env, _BrokenResetAgent(), task_id, seed=0)
    assert "reset is broken" in record["extras"]["error"] and record["turns"] == 0
    assert "env_error" not in record["extras"]
    record = run_episode(env, _BrokenExtrasAgent(), task_id, seed=0)
    assert "ZeroDivisionError" in record["extras"]["error"] and "env_error" not in record["extras"]
    assert record["tau"] == 1  # the episode itself is kept as played
    record = run_episode(env, _ClaimingAgent(), task_id, seed=0)
    assert record["extras"]["note"] == "kept" and not {"error", "env_error"} & set(record["extras"])


# ----- the LLM agent: surrogates in replies, under-reported usage, huge replies ------------------------------------
def scripted_server(script: list[dict[str, Any]], default: dict[str, Any] | None = None) -> Any:
    """The scripted chat server, able to report the usage an item names (as a server that under-counts does)."""
    from llm_server import ScriptedLLMServer, require_openai

    require_openai()

    class UsageServer(ScriptedLLMServer):
        def _answer(self, handler: Any, body: dict[str, Any], item: dict[str, Any]) -> None:
            if "usage" not in item:
                super()._answer(handler, body, item)
                return
            payload = json.dumps({
                "id": "chatcmpl-u", "object": "chat.completion", "created": 0, "model": "scripted",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": item["content"]},
                             "finish_reason": "stop"}],
                "usage": item["usage"]}).encode()
            handler.send_response(200)
            handler.send_header("content-type", "application/json")
            handler.send_header("content-length", str(len(payload)))
            handler.end_headers()
            handler.wfile.write(payload)

    return UsageServer(script, default=default)


def qa_task(category: str) -> str:
    env = gym.make("AbstainQA-v0")
    return next(t.task_id for t in env.unwrapped.tasks(split="test") if t.category == category)


def test_a_surrogate_in_an_llm_reply_is_explained_and_recorded(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from llm_server import text, tool

    with scripted_server([tool("search", query="Wer\ud800gate"), text("search[caf\udce9]")],
                         default=tool("abstain", reason="done")) as srv:
        monkeypatch.setenv("ABSTAIN_GYM_LLM_BASE_URL", srv.base_url)
        monkeypatch.setenv("ABSTAIN_GYM_LLM_MODEL", "scripted-model")
        out = tmp_path / "llm.jsonl"
        assert main(["eval", "AbstainQA-v0", "--agent", "llm", "--episodes", "1", "--out", str(out), "--quiet",
                     "--json"]) == 0
    (record,) = [strict_loads(line) for line in out.read_bytes().splitlines()]
    first, second, third = record["steps"]
    # a surrogate escaped in tool-call arguments reaches the env, which explains it (the record keeps U+FFFD)
    assert first["action"] == "search[Wer\ufffdgate]" and "lone surrogate (U+D800" in first["observation"]
    # a raw one in the reply text is repaired by the agent, so the next request can still be sent
    assert second["action"] == "search[caf\ufffd]" and not second["observation"].startswith("Invalid action")
    assert third["action"] == "abstain[done]" and "error" not in record["extras"]
    assert record["extras"]["transcript"]["messages"][4]["content"] == "search[caf\ufffd]"


def test_a_1mb_reply_reported_as_11_tokens_is_cut_and_spends_the_budget(tmp_path: Path) -> None:
    from agentabstain_gym.agents.llm import MAX_REPLY_CHARS, LLMAgent
    from agentabstain_gym.core.record import append_records
    from agentabstain_gym.runner import run_episode

    huge = {"content": "search[" + "x" * 1_000_000 + "]", "usage": {"prompt_tokens": 1, "completion_tokens": 10,
                                                                    "total_tokens": 11}}
    env = gym.make("AbstainQA-v0")
    with scripted_server([huge], default=huge) as srv:
        agent = LLMAgent(family="qa", base_url=srv.base_url, model="m", api_key="k", timeout=10.0)
        record = run_episode(env, agent, qa_task("answer_unknown"), seed=0)
    transcript = record["extras"]["transcript"]
    assert "BudgetExhausted" in record["extras"]["error"] and "tokens of 200000" in record["extras"]["error"]
    assert record["turns"] == 1 and transcript["usage"]["tokens"] >= 250_000  # not 11
    assert transcript["reply_chars"] > 1_000_000  # every string of the reply, before the cut
    kept = transcript["messages"][2]["content"]
    assert len(kept) < MAX_REPLY_CHARS + 60 and kept.endswith("[... reply cut: 968008 more characters]")
    assert transcript["calls"][0]["truncated"] == [{"where": "choices[0].message.content", "chars": 1_000_008,
                                                    "kept": MAX_REPLY_CHARS}]
    assert transcript["calls"][0]["response"]["choices"][0]["message"]["content"] == kept
    out = tmp_path / "llm.jsonl"
    append_records(out, [record])
    assert out.stat().st_size < 200_000  # it was 2 MB for this one reply


def test_reply_characters_per_episode_are_a_budget(tmp_path: Path) -> None:
    from agentabstain_gym.agents.llm import LLMAgent
    from agentabstain_gym.runner import run_episode

    reply = {"content": "search[" + "y " * 10_000 + "]", "usage": {"total_tokens": 11}}
    env = gym.make("AbstainQA-v0")
    with scripted_server([], default=reply) as srv:
        agent = LLMAgent(family="qa", base_url=srv.base_url, model="m", api_key="k", timeout=10.0,
                         max_episode_reply_chars=50_000)
        record = run_episode(env, agent, qa_task("answer_unknown"), seed=0)
    assert record["turns"] == 3 and re.search(r"BudgetExhausted: 6\d{4} reply characters of 50000",
                                              record["extras"]["error"])
    assert record["extras"]["transcript"]["budget_exhausted"] is True and record["outcome"] == "missed"
    with pytest.raises(ValueError):
        LLMAgent(family="qa", model="m", max_reply_chars=0)


# ----- the tool engine, called directly ----------------------------------------------------------------------------
def test_the_tool_engine_never_raises_on_huge_or_deep_arguments() -> None:
    from agentabstain_gym.envs.tools.engine import Engine, world

    sandbox = world(("Calendar",))
    engine = Engine(sandbox, sandbox.snapshot)
    deep: list[Any] = []
    for _ in range(DEEP):
        deep = [deep]
    for name, arguments in (("list_events", {"limit": 10**5000}), ("get_event", {"event_id": 10**5000}),
                            ("get_event", {"event_id": deep}), ("list_events", {"date_from": deep})):
        call = engine.call(name, arguments)
        assert call.error is not None and call.error["code"] == "invalid_request", call.error
        assert "internal error" not in call.error["message"]
        strict_line({"arguments": call.arguments, "observation": call.observation})
    assert not engine.committed and engine.diff() == {}


def test_a_result_that_overflows_is_refused_not_shown_as_infinity() -> None:
    from agentabstain_gym.envs.tools.tasks import make_engine, pairs_for

    pair = next(p for p in pairs_for("TradingPortfolio", None)
                if any(c["tool"] == "preview_order" for c in p.positive.gold))
    call = next(c for c in pair.positive.gold if c["tool"] == "preview_order")
    engine = make_engine(pair.positive)
    result = engine.call("preview_order", {**call["arguments"], "quantity": 1e308})  # an int of 309 digits
    assert result.error == {"code": "invalid_request", "message": "preview_order: these arguments lead to numbers "
                            "too large to represent; use realistic values."}
    assert "Infinity" not in result.observation
    assert engine.call("preview_order", call["arguments"]).error is None  # realistic values still work
