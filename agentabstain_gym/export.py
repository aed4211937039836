"""Episode records as chat transcripts (JSONL), for supervised or RL fine-tuning of LLMs.

One line per episode: ``{"messages": [...], "tools": [...], "metadata": {...}}`` in the OpenAI chat format
(system / user / assistant / tool messages). Episodes played by the LLM agent carry their real conversation in
``extras["transcript"]``; it is exported as it was sent, assistant tool calls included. Other episodes are rebuilt
from their steps: the family's system prompt, the instruction as the first user message, then each action as an
assistant message and each observation as the next message, either as ``verb[arg]`` text (``style="text"``) or as
tool calls of the family's tools (``style="tools"``). ``style="auto"`` keeps a transcript where there is one and
writes text otherwise. The metadata (outcome, label, reward) lets a user filter, e.g. to timely abstentions only.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

STYLES = ("auto", "text", "tools")
METADATA_FIELDS = ("env_id", "family", "task_id", "pair_id", "split", "category", "should_abstain", "w", "tau",
                   "outcome", "success", "task_reward", "agent", "seed", "turns")
_VERB = re.compile(r"\A\s*([A-Za-z_][A-Za-z0-9_]*)\s*\[(.*)\]\s*\Z", re.DOTALL)


def _system_prompt(family: str, style: str) -> tuple[str, list[dict[str, Any]]]:
    """The LLM agent's own system prompt for ``family`` (no playbook), and the tool schemas in tools style."""
    from string import Template

    from agentabstain_gym.agents.llm import Tool, family_table, load_text

    table = family_table(family)
    tools = [Tool(t["name"], t["description"], t["parameters"], t["action"]) for t in table["tools"]]
    if style == "tools":
        help_text = load_text("action_help_tools.md").strip()
    else:
        lines = [f"- {t.name}[{t.arg_names[0] if t.arg_names else ''}]: {t.description}" for t in tools]
        help_text = Template(load_text("action_help_text.md")).safe_substitute(actions="\n".join(lines)).strip()
    prompt = Template(load_text("system.md")).safe_substitute(max_turns="{max_turns}", guide=table["guide"],
                                                              action_help=help_text).strip()
    return prompt, [t.schema() for t in tools] if style == "tools" else []


def _tool_call(action: str, family: str, turn: int) -> dict[str, Any] | None:
    """``verb[arg]`` (or a sandbox tool-call JSON) as an assistant tool call of the family's tools, else None."""
    from agentabstain_gym.agents.llm import family_table

    call_id = f"call_{turn}"
    stripped = action.strip()
    if stripped.startswith("{"):
        try:
            data = json.loads(stripped)
        except ValueError:
            return None
        if isinstance(data, dict) and isinstance(data.get("tool"), str):
            return {"id": call_id, "type": "function", "function": {
                "name": data["tool"], "arguments": json.dumps(data.get("arguments") or {}, sort_keys=True)}}
        return None
    for tool in family_table(family)["tools"]:
        template = str(tool["action"])
        params = list((tool["parameters"].get("properties") or {}).keys())
        if "[" in template:
            m = _VERB.match(action)
            if m and m.group(1).lower() == template.split("[", 1)[0]:
                args = {params[0]: m.group(2)} if params else {}
                return {"id": call_id, "type": "function",
                        "function": {"name": tool["name"], "arguments": json.dumps(args)}}
        elif template == "{" + (params[0] if params else "") + "}" and params and not _VERB.match(action):
            return {"id": call_id, "type": "function",  # e.g. a terminal command
                    "function": {"name": tool["name"], "arguments": json.dumps({params[0]: action})}}
        elif template == stripped:
            return {"id": call_id, "type": "function", "function": {"name": tool["name"], "arguments": "{}"}}
    return None


def _from_steps(record: Mapping[str, Any], style: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    family = str(record.get("family") or "qa")
    system, tools = _system_prompt(family, style)
    system = system.replace("{max_turns}", str(record.get("max_turns") or "?"))
    instruction = str((record.get("extras") or {}).get("instruction") or "")
    messages: list[dict[str, Any]] = [{"role": "system", "content": system},
                                      {"role": "user", "content": f"Instruction: {instruction}"}]
    for step in record.get("steps") or []:
        action, observation = str(step.get("action", "")), str(step.get("observation", ""))
        call = _tool_call(action, family, int(step.get("turn", 0))) if style == "tools" else None
        if call is not None:
            messages.append({"role": "assistant", "content": "", "tool_calls": [call]})
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": observation})
        else:
            messages.append({"role": "assistant", "content": action})
            messages.append({"role": "user", "content": observation})
    return messages, tools


def _trim(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """End on the last assistant message: what follows it (the final observation) is nothing to learn from."""
    last = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=len(messages) - 1)
    return messages[: last + 1]


def episode_to_chat(record: Mapping[str, Any], *, style: str = "auto",
                    final_observation: bool = False) -> dict[str, Any]:
    """One record as ``{"messages", "tools", "metadata"}``; ``final_observation`` keeps the env's last answer."""
    if style not in STYLES:
        raise ValueError(f"style must be one of {STYLES}, got {style!r}")
    transcript = (record.get("extras") or {}).get("transcript")
    if style == "auto" and isinstance(transcript, dict) and transcript.get("messages"):
        messages = [dict(m) for m in transcript["messages"]]
        tools = list(transcript.get("tools") or [])
        if final_observation and record.get("steps"):  # the env's answer to the last action
            last = messages[-1] if messages else {}
            obs = str(record["steps"][-1].get("observation", ""))
            if last.get("tool_calls"):
                messages.append({"role": "tool", "tool_call_id": last["tool_calls"][0]["id"], "content": obs})
            else:
                messages.append({"role": "user", "content": obs})
    else:
        messages, tools = _from_steps(record, "text" if style == "auto" else style)
        if not final_observation:
            messages = _trim(messages)
    metadata = {k: record.get(k) for k in METADATA_FIELDS}
    return {"messages": messages, "tools": tools, "metadata": metadata}


def export_chat(records: Iterable[Mapping[str, Any]], *, style: str = "auto",
                final_observation: bool = False) -> Iterator[dict[str, Any]]:
    """Chat examples, one per record, in input order."""
    for record in records:
        yield episode_to_chat(record, style=style, final_observation=final_observation)


def write_chat_jsonl(records: Iterable[Mapping[str, Any]], out: str | os.PathLike[str], *, style: str = "auto",
                     final_observation: bool = False) -> int:
    """Write the chat JSONL atomically (temp file + rename); returns the number of episodes written."""
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    n = 0
    with open(tmp, "w", encoding="utf-8") as fh:
        for example in export_chat(records, style=style, final_observation=final_observation):
            fh.write(json.dumps(example, ensure_ascii=False, sort_keys=True) + "\n")
            n += 1
    os.replace(tmp, path)
    return n


# ----- command line (``abstain-gym export``; also ``python -m agentabstain_gym.export``) ----------------------------
def add_arguments(parser: Any) -> None:
    """The ``export`` options, for the CLI owner to mount under a sub-command."""
    parser.add_argument("files", nargs="+", help="JSONL episode records (from `abstain-gym eval --out`)")
    parser.add_argument("--format", default="chat", choices=["chat"], help="output format (chat: OpenAI messages)")
    parser.add_argument("--out", required=True, help="the chat JSONL to write")
    parser.add_argument("--style", default="auto", choices=list(STYLES),
                        help="auto: real LLM transcripts where present, else verb[arg] text; tools: tool calls")
    parser.add_argument("--outcome", action="append", default=None,
                        help="keep only episodes with this outcome (repeatable), e.g. timely, success")
    parser.add_argument("--final-observation", action="store_true", help="keep the env's answer to the last action")


def run_cli(args: Any) -> int:
    import sys
    import warnings

    from agentabstain_gym.core.record import read_records

    for path in args.files:
        if not Path(path).is_file():
            print(f"abstain-gym: error: no such file: {path}", file=sys.stderr)
            return 2
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        records = read_records(args.files)
    for w in caught:
        print(f"warning: {w.message}", file=sys.stderr)
    if args.outcome:
        records = [r for r in records if r.get("outcome") in set(args.outcome)]
    n = write_chat_jsonl(records, args.out, style=args.style, final_observation=args.final_observation)
    print(f"{n} episodes written to {args.out} ({args.format}, style {args.style})", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="abstain-gym export", description=__doc__.split("\n\n")[0])
    add_arguments(parser)
    return run_cli(parser.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
