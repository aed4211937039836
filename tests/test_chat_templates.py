"""Exported chat rows through real tool-calling chat templates and through TRL.

The templates are vLLM's Hermes, Llama 3.1 JSON and Mistral Jinja files (tests/data/chat_templates, Apache-2.0),
rendered by transformers' own ``apply_chat_template`` on a byte-level tokenizer built here (no download). Rows of
every family are exported from real episodes (heuristic agents, and LLM-agent transcripts from the scripted server
with several calls in one reply, a call of an unknown tool, unparseable arguments and calls written in the text).
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest
from conftest import skip_or_fail

import agentabstain_gym  # noqa: F401 - registers the ids
from agentabstain_gym.agents import make_agent
from agentabstain_gym.export import episode_to_chat, write_chat_jsonl
from agentabstain_gym.runner import run_episode

try:
    import transformers  # noqa: F401
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast
except ImportError:
    skip_or_fail("transformers is not installed (pip install transformers)", allow_module_level=True)

TEMPLATE_DIR = Path(__file__).parent / "data" / "chat_templates"
TEMPLATES = {"hermes": "tool_chat_template_hermes.jinja", "llama3.1_json": "tool_chat_template_llama3.1_json.jinja",
             "mistral": "tool_chat_template_mistral.jinja"}
FAMILIES = ("qa", "web", "terminal", "tools", "llm")
_ID = re.compile(r"\A[A-Za-z0-9]{9}\Z")


def byte_tokenizer(template: str) -> PreTrainedTokenizerFast:
    """A byte-level tokenizer (256 byte symbols, no merges) with ``template`` as its chat template."""
    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    specials = ["<s>", "</s>", "<pad>"]
    vocab = {c: i for i, c in enumerate([*alphabet, *specials])}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    tok.decoder = decoders.ByteLevel()
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>", pad_token="<pad>")
    fast.chat_template = template
    return fast


@cache
def tokenizer(name: str) -> PreTrainedTokenizerFast:
    return byte_tokenizer((TEMPLATE_DIR / TEMPLATES[name]).read_text(encoding="utf-8"))


def _play(env_id: str, agent_name: str, n: int, **env_kwargs: Any) -> list[dict[str, Any]]:
    env = gym.make(env_id, **env_kwargs)
    agent = make_agent(agent_name, env_id)
    out = []
    for i, task in enumerate(env.unwrapped.tasks(split="test")[:n]):
        record = run_episode(env, agent, task.task_id, seed=i)
        record["agent"] = agent_name
        out.append(json.loads(json.dumps(record)))
    env.close()
    return out


def _llm_records() -> list[dict[str, Any]]:
    from llm_server import ScriptedLLMServer, raw_tool, require_openai, text, tool, tools

    from agentabstain_gym.agents.llm import LLMAgent

    require_openai()
    out = []
    qa = gym.make("AbstainQA-v0")
    task = next(t.task_id for t in qa.unwrapped.tasks(split="test") if t.category == "answer_unknown")
    script = [tools(("search", {"query": "Wergate"}), ("answer", {"text": "x"})), raw_tool("search", "{not json"),
              tool("teleport", to="x"), text("Let me look.\n<tool_call>\n{\"name\": \"search\", \"arguments\": "
                                            "{\"query\": \"port \\\"Wergate\\\" é\"}}\n</tool_call>"),
              text("I think so."), tool("abstain", reason="not in the corpus")]
    with ScriptedLLMServer(script) as srv:
        out.append(run_episode(qa, LLMAgent(family="qa", base_url=srv.base_url, model="m"), task, seed=0))
    tools_env = gym.make("AbstainTools-v0")
    task = tools_env.unwrapped.tasks(split="test")[0]
    with ScriptedLLMServer([], default=lambda body: tool(body["tools"][0]["function"]["name"])
                           if len(body["messages"]) < 5 else tool("respond", text="Done.")) as srv:
        out.append(run_episode(tools_env, LLMAgent(family="tools", base_url=srv.base_url, model="m",
                                                   strict_tools=True), task.task_id, seed=0))
    return [json.loads(json.dumps(r)) for r in out]


@cache
def records(family: str) -> tuple[dict[str, Any], ...]:
    if family == "qa":
        return tuple(_play("AbstainQA-v0", "heuristic", 4))
    if family == "web":
        return tuple(_play("AbstainWebShop-v1", "heuristic", 3))
    if family == "terminal":
        from conftest import require_backend

        require_backend("bwrap")
        return tuple(_play("AbstainTerminal-v1", "heuristic", 3, backend="bwrap"))
    if family == "tools":
        return tuple(_play("AbstainTools-v0", "heuristic", 10) + _play("AbstainTools-v0", "rules", 6))
    return tuple(_llm_records())


def _render(name: str, row: dict[str, Any]) -> str:
    return tokenizer(name).apply_chat_template(row["messages"], tools=row["tools"] or None, tokenize=False)


def _calls(row: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for m in row["messages"] for c in m.get("tool_calls") or []]


def _shown(text: str, rendered: str) -> bool:
    """Whether ``text`` is in ``rendered`` as it is or JSON-escaped (templates write tool results either way)."""
    return text in rendered or json.dumps(text, ensure_ascii=False)[1:-1] in rendered


@pytest.mark.parametrize("family", FAMILIES)
def test_rows_follow_the_openai_and_hugging_face_conventions(family: str) -> None:
    rows = [episode_to_chat(r, style=s) for r in records(family) for s in ("tools", "auto")]
    assert sum(len(_calls(r)) for r in rows) > 0
    for row in rows:
        names = [t["function"]["name"] for t in row["tools"]]
        assert len(names) == len(set(names))
        ids = [c["id"] for c in _calls(row)]
        assert len(ids) == len(set(ids)) and all(_ID.match(i) for i in ids)
        for i, m in enumerate(row["messages"]):
            assert isinstance(m["content"], str)
            for call in m.get("tool_calls") or []:
                assert call["function"]["name"] in names and isinstance(call["function"]["arguments"], dict)
                assert len(m["tool_calls"]) == 1
            if m["role"] == "tool":
                before = row["messages"][i - 1]["tool_calls"][0]
                assert (m["tool_call_id"], m["name"]) == (before["id"], before["function"]["name"])
    again = [episode_to_chat(r, style=s) for r in records(family) for s in ("tools", "auto")]
    assert again == rows  # ids are derived from the record, not drawn


@pytest.mark.parametrize("template", sorted(TEMPLATES))
@pytest.mark.parametrize("family", FAMILIES)
def test_rows_render_through_real_templates(family: str, template: str) -> None:
    for record in records(family):
        for style, strict in (("tools", False), ("tools", True), ("auto", False)):
            row = episode_to_chat(record, style=style, final_observation=True, strict_tools=strict)
            rendered = _render(template, row)  # raises TemplateError on a broken row
            for m in row["messages"]:
                if m["role"] == "tool":
                    assert _shown(m["content"], rendered), (template, m["content"][:80])
            for call in _calls(row):
                args = call["function"]["arguments"]
                once = json.dumps(args, ensure_ascii=False)
                assert once in rendered
                assert json.dumps(once, ensure_ascii=False) not in rendered  # never a JSON string of JSON
                if template == "mistral":
                    assert f'"id": "{call["id"]}"' in rendered


def test_string_arguments_are_for_openai_and_double_encode_in_hf_templates() -> None:
    record = next(r for r in records("qa") if any(s["action"].startswith("search[") for s in r["steps"]))
    obj, text = (episode_to_chat(record, style="tools", arguments=a) for a in ("object", "string"))
    args = _calls(obj)[0]["function"]["arguments"]
    assert _calls(text)[0]["function"]["arguments"] == json.dumps(args, ensure_ascii=False)
    assert json.dumps(json.dumps(args)) in _render("llama3.1_json", text)  # why object is the default
    assert json.dumps(json.dumps(args)) not in _render("llama3.1_json", obj)


def test_llm_transcripts_keep_the_run_call_and_write_the_others_as_the_env_saw_them() -> None:
    qa = records("llm")[0]
    row = episode_to_chat(qa)
    roles = [m["role"] for m in row["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "user", "assistant", "user", "assistant",
                     "tool", "assistant", "user", "assistant"]
    texts = [m["content"] for m in row["messages"] if m["role"] == "assistant" and "tool_calls" not in m]
    assert texts == ["search({not json)", 'teleport({"to": "x"})', "I think so."]
    content_call = row["messages"][8]
    assert content_call["content"] == "Let me look." and content_call["tool_calls"][0]["function"] == {
        "name": "search", "arguments": {"query": 'port "Wergate" é'}}
    assert [s["action"] for s in qa["steps"]][3] == 'search[port "Wergate" é]'


def test_trl_sft_trainer_trains_two_steps_under_each_template(tmp_path: Path) -> None:
    try:
        import datasets
        import torch
        import trl
        from transformers import LlamaConfig, LlamaForCausalLM
    except ImportError:
        skip_or_fail("trl, datasets or torch is not installed (pip install trl)")
    torch.set_num_threads(1)
    torch.manual_seed(0)
    recs = [r for f in ("qa", "tools", "llm") for r in records(f)][:12]
    path = tmp_path / "chat.jsonl"
    write_chat_jsonl(recs, path, style="tools")
    data = datasets.load_dataset("json", data_files=str(path), split="train")  # how a user loads the export
    for name in sorted(TEMPLATES):
        tok = tokenizer(name)
        config = LlamaConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                             num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=512,
                             bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id,
                             pad_token_id=tok.pad_token_id)
        args = trl.SFTConfig(output_dir=str(tmp_path / name), max_steps=2, per_device_train_batch_size=2,
                             max_length=256, learning_rate=1e-3, report_to=[], save_strategy="no",
                             logging_steps=1, use_cpu=True, dataloader_num_workers=0, seed=0)
        trainer = trl.SFTTrainer(model=LlamaForCausalLM(config), args=args, train_dataset=data, processing_class=tok)
        result = trainer.train()
        assert result.global_step == 2 and result.training_loss == result.training_loss  # finite, not NaN
        first = trainer.train_dataset[0]["input_ids"]
        assert tok.decode(first).startswith(_render(name, json.loads(path.read_text().splitlines()[0]))[:200])


def test_a_task_from_a_pair_file_lists_the_sandbox_tools_it_called() -> None:
    record = next(r for r in records("tools") if any(s["action"].startswith("{") for s in r["steps"]))
    known = episode_to_chat(record, style="tools")
    unknown = episode_to_chat({**record, "task_id": "tt-from-a-pair-file"}, style="tools")
    called = {c["function"]["name"] for c in _calls(known)}
    assert called and {c["function"]["name"] for c in _calls(unknown)} == called
    assert {t["function"]["name"] for t in unknown["tools"]} == called | {"respond", "abstain"}
    assert len(known["tools"]) >= len(unknown["tools"])
