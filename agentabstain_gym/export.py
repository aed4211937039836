"""Episode records as chat transcripts (JSONL), for supervised or RL fine-tuning of LLMs.

One line per episode: ``{"messages": [...], "tools": [...], "metadata": {...}}`` in the OpenAI chat format
(system / user / assistant / tool messages). Episodes played by the LLM agent carry their real conversation in
``extras["transcript"]``; it is exported as it was sent, assistant tool calls included. Other episodes are rebuilt
from their steps: the family's system prompt, the instruction as the first user message, then each action as an
assistant message and each observation as the next message, either as ``verb[arg]`` text (``style="text"``) or as
tool calls of the family's tools (``style="tools"``). ``style="auto"`` keeps a transcript where there is one and
writes text otherwise. The metadata (outcome, label, reward) lets a user filter, e.g. to timely abstentions only.

Rows follow the conventions real chat templates (Hermes, Llama 3.1 JSON, Mistral...) and TRL rely on:

* an assistant turn holds one call, ``{"id", "type": "function", "function": {"name", "arguments"}}``; its ``id``
  is 9 alphanumeric characters (Mistral's templates require that), derived from the record and the message's
  position, so the same record exports the same ids;
* a tool message carries ``tool_call_id`` and the called tool's ``name`` (Hermes-style templates read it);
* ``arguments`` is a JSON object by default (templates write ``arguments | tojson``; a string is encoded twice),
  or JSON text with ``arguments="string"`` (the OpenAI API and fine-tuning format);
* every called tool is in the row's ``tools``: a tool-sandbox row lists the task's own inventory (as the LLM agent
  was shown it) plus ``respond`` / ``abstain``; an action that names a tool outside it (or whose arguments are not an
  object) is written as the text the env received, its answer as a user turn;
* of a reply with several calls only the first, the one the env ran, is kept (with its answer); the others were
  answered "Not executed" and are left out, since Llama 3.1's template accepts one call per message.

``strict_tools=True`` (``--strict-tools``) writes OpenAI strict-mode schemas
(:func:`agentabstain_gym.envs.tools.schemas.strict_schema`) and writes each optional argument a call left out as
``null``, as a model held to those schemas would.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

STYLES = ("auto", "text", "tools")
#: ``object``: tool-call arguments as JSON objects (what Hugging Face chat templates and TRL expect: they write
#: ``arguments | tojson``, so a string would be encoded twice); ``string``: JSON text, as the OpenAI API and its
#: fine-tuning format carry them.
ARGUMENT_MODES = ("object", "string")
METADATA_FIELDS = ("env_id", "family", "task_id", "pair_id", "split", "category", "should_abstain", "w", "tau",
                   "outcome", "success", "task_reward", "agent", "seed", "turns")
_VERB = re.compile(r"\A\s*([A-Za-z_][A-Za-z0-9_]*)\s*\[(.*)\]\s*\Z", re.DOTALL)
_ID_CHARS = 9
Call = tuple[str, dict[str, Any]]


def _tool_table(family: str) -> list[Any]:
    from agentabstain_gym.agents.llm import Tool, family_table

    return [Tool(t["name"], t["description"], t["parameters"], t["action"]) for t in family_table(family)["tools"]]


def _system_prompt(family: str, style: str) -> str:
    """The LLM agent's own system prompt for ``family`` (no playbook)."""
    from string import Template

    from agentabstain_gym.agents.llm import family_table, load_text

    if style == "tools":
        help_text = load_text("action_help_tools.md").strip()
    else:
        lines = [f"- {t.name}[{t.arg_names[0] if t.arg_names else ''}]: {t.description}" for t in _tool_table(family)]
        help_text = Template(load_text("action_help_text.md")).safe_substitute(actions="\n".join(lines)).strip()
    return Template(load_text("system.md")).safe_substitute(max_turns="{max_turns}", guide=family_table(family)["guide"],
                                                            action_help=help_text).strip()


def _sandbox_schemas(record: Mapping[str, Any], called: list[str]) -> list[dict[str, Any]]:
    """The tool inventory the episode's agent was shown: the task's own (built-in tasks), else the sandbox's schemas
    of the tools the episode called (a task from a pair file the record does not name)."""
    from agentabstain_gym.envs.tools import catalog
    from agentabstain_gym.envs.tools.schemas import tool_schemas
    from agentabstain_gym.envs.tools.tasks import task_setups

    setup = task_setups().get(str(record.get("task_id")))
    if setup is not None:
        return list(json.loads(setup.schemas))
    sandbox = str((record.get("extras") or {}).get("sandbox") or "")
    if sandbox not in catalog.sandbox_names():
        return []
    return [s for s in tool_schemas(sandbox) if s["function"]["name"] in set(called)]


def _inventory(record: Mapping[str, Any], family: str) -> list[dict[str, Any]]:
    """The row's tools, in the LLM agent's order: a sandbox's own tools first, then the family's."""
    builtin = [t.schema() for t in _tool_table(family)]
    if family != "tools":
        return builtin
    called = []
    for step in record.get("steps") or []:
        try:
            data = json.loads(str(step.get("action", "")))
        except (ValueError, RecursionError):
            continue
        if isinstance(data, dict) and isinstance(data.get("tool"), str):
            called.append(data["tool"])
    names = {t["function"]["name"] for t in builtin}
    return [s for s in _sandbox_schemas(record, called) if s["function"]["name"] not in names] + builtin


def _tool_call(action: str, family: str, tools: Mapping[str, dict[str, Any]]) -> Call | None:
    """``verb[arg]``, a sandbox tool-call JSON or a bare terminal command as a call of one of ``tools``, else None."""
    stripped = action.strip()
    if stripped.startswith("{"):
        try:
            data = json.loads(stripped)
        except (ValueError, RecursionError):
            return None
        ok = (isinstance(data, dict) and isinstance(data.get("tool"), str) and data["tool"] in tools
              and isinstance(data.get("arguments") or {}, dict))
        return (data["tool"], dict(data.get("arguments") or {})) if ok else None
    fallback: Call | None = None
    for tool in _tool_table(family):
        template, params = str(tool.action), tool.arg_names
        if tool.name not in tools:
            continue
        if "[" in template:
            m = _VERB.match(action)
            if m and m.group(1).lower() == template.split("[", 1)[0]:
                return tool.name, ({params[0]: m.group(2)} if params else {})
        elif template == stripped:
            return tool.name, {}
        elif params and template == "{" + params[0] + "}" and stripped:
            fallback = (tool.name, {params[0]: action})  # e.g. a terminal command, when no verb matched
    return fallback


def _from_steps(record: Mapping[str, Any], style: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    family = str(record.get("family") or "qa")
    tools = _inventory(record, family) if style == "tools" else []
    by_name = {t["function"]["name"]: t for t in tools}
    system = _system_prompt(family, style).replace("{max_turns}", str(record.get("max_turns") or "?"))
    instruction = str((record.get("extras") or {}).get("instruction") or "")
    messages: list[dict[str, Any]] = [{"role": "system", "content": system},
                                      {"role": "user", "content": f"Instruction: {instruction}"}]
    for step in record.get("steps") or []:
        action, observation = str(step.get("action", "")), str(step.get("observation", ""))
        call = _tool_call(action, family, by_name) if style == "tools" else None
        if call is not None:
            messages.append({"role": "assistant", "content": "", "_call": call})
            messages.append({"role": "tool", "content": observation, "_reply_to": len(messages) - 1})
        else:
            messages.append({"role": "assistant", "content": action})
            messages.append({"role": "user", "content": observation})
    return messages, tools


def _arguments(raw: Any) -> dict[str, Any] | None:
    if isinstance(raw, dict):
        return dict(raw)
    try:
        value = json.loads(raw) if isinstance(raw, str) and raw.strip() else ({} if not raw else None)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _from_transcript(messages: list[Mapping[str, Any]], names: set[str]) -> list[dict[str, Any]]:
    """The LLM agent's conversation in the row's conventions. The first call of a reply is the action the env ran;
    the others were answered "Not executed" and are left out with those answers (one call per message, which
    every template renders: Llama 3.1's accepts no more). A call of a tool not offered, or with arguments that are
    not a JSON object, reached the env as text (``name(arguments)``), and is written so, its answer as a user turn."""
    out: list[dict[str, Any]] = []
    placed: dict[str, int] = {}  # the transcript's call id -> index of the assistant message in ``out``
    dropped: set[str] = set()
    as_text: set[str] = set()
    for m in messages:
        role, content = m.get("role"), m.get("content")
        text = content if isinstance(content, str) else ""
        calls = [c for c in m.get("tool_calls") or [] if isinstance(c, dict)]
        if role == "assistant" and calls:
            first, fn = calls[0], calls[0].get("function") or {}
            dropped.update(str(c.get("id")) for c in calls[1:])
            name, args = str(fn.get("name", "")), _arguments(fn.get("arguments"))
            if name in names and args is not None:
                placed[str(first.get("id"))] = len(out)
                out.append({"role": "assistant", "content": text, "_call": (name, args)})
            else:
                as_text.add(str(first.get("id")))
                raw = fn.get("arguments") if isinstance(fn.get("arguments"), str) else json.dumps(fn.get("arguments"))
                out.append({"role": "assistant", "content": (text + "\n" if text else "") + f"{name}({raw})"})
        elif role == "tool":
            tid = str(m.get("tool_call_id"))
            if tid in dropped:
                continue
            if tid in placed:
                out.append({"role": "tool", "content": text, "_reply_to": placed[tid]})
            else:
                out.append({"role": "user", "content": text})
        else:
            out.append({"role": str(role), "content": text})
    return out


def _trim(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """End on the last assistant message: what follows it (the final observation) is nothing to learn from."""
    last = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=len(messages) - 1)
    return messages[: last + 1]


def call_id(key: str, index: int, taken: set[str]) -> str:
    """A tool-call id of 9 alphanumeric characters (Mistral's templates require exactly that), derived from the
    row and the message's position, so the same record always exports the same ids; unique within the row."""
    salt = 0
    while True:
        digest = hashlib.sha256(f"{key}\0{index}\0{salt}".encode()).hexdigest()[:_ID_CHARS]
        if digest not in taken:
            taken.add(digest)
            return digest
        salt += 1


def _finish(messages: list[dict[str, Any]], key: str, arguments: str,
            tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Internal calls -> OpenAI / Hugging Face messages: ``tool_calls`` with ids, tool messages with ``name`` and
    ``tool_call_id``; with strict schemas, optional arguments left out are written as null."""
    strict = {t["function"]["name"]: list(t["function"]["parameters"].get("properties") or {})
              for t in tools if t["function"].get("strict")}
    ids: dict[int, tuple[str, str]] = {}
    taken: set[str] = set()
    out = []
    for i, m in enumerate(messages):
        if "_call" in m:
            name, args = m["_call"]
            args = {**{p: None for p in strict.get(name, [])}, **args}
            ids[i] = (call_id(key, i, taken), name)
            fn = {"name": name, "arguments": args if arguments == "object" else json.dumps(args, ensure_ascii=False)}
            out.append({"role": "assistant", "content": m["content"],
                        "tool_calls": [{"id": ids[i][0], "type": "function", "function": fn}]})
        elif "_reply_to" in m:
            cid, name = ids[m["_reply_to"]]
            out.append({"role": "tool", "tool_call_id": cid, "name": name, "content": m["content"]})
        else:
            out.append(m)
    return out


def _row_key(record: Mapping[str, Any]) -> str:
    return json.dumps([record.get(k) for k in ("env_id", "task_id", "seed", "agent", "split", "pair_id")],
                      default=str)


def episode_to_chat(record: Mapping[str, Any], *, style: str = "auto", final_observation: bool = False,
                    arguments: str = "object", strict_tools: bool = False) -> dict[str, Any]:
    """One record as ``{"messages", "tools", "metadata"}``; ``final_observation`` keeps the env's last answer;
    ``arguments`` is ``object`` or ``string`` (see :data:`ARGUMENT_MODES`); ``strict_tools`` writes OpenAI
    strict-mode schemas."""
    if style not in STYLES:
        raise ValueError(f"style must be one of {STYLES}, got {style!r}")
    if arguments not in ARGUMENT_MODES:
        raise ValueError(f"arguments must be one of {ARGUMENT_MODES}, got {arguments!r}")
    transcript = (record.get("extras") or {}).get("transcript")
    if style == "auto" and isinstance(transcript, dict) and transcript.get("messages"):
        tools = [dict(t) for t in transcript.get("tools") or [] if isinstance(t, dict) and "function" in t]
        messages = _from_transcript(transcript["messages"], {str(t["function"].get("name")) for t in tools})
        if final_observation and record.get("steps"):  # the env's answer to the last action
            obs = str(record["steps"][-1].get("observation", ""))
            if messages and "_call" in messages[-1]:
                messages.append({"role": "tool", "content": obs, "_reply_to": len(messages) - 1})
            else:
                messages.append({"role": "user", "content": obs})
    else:
        messages, tools = _from_steps(record, "text" if style == "auto" else style)
        if not final_observation:
            messages = _trim(messages)
    if strict_tools:
        from agentabstain_gym.envs.tools.schemas import strict_schema

        tools = [strict_schema(t) for t in tools]
    metadata = {k: record.get(k) for k in METADATA_FIELDS}
    return {"messages": _finish(messages, _row_key(record), arguments, tools), "tools": tools, "metadata": metadata}


def export_chat(records: Iterable[Mapping[str, Any]], **options: Any) -> Iterator[dict[str, Any]]:
    """Chat examples, one per record, in input order (``options`` as for :func:`episode_to_chat`)."""
    for record in records:
        yield episode_to_chat(record, **options)


def write_chat_jsonl(records: Iterable[Mapping[str, Any]], out: str | os.PathLike[str], **options: Any) -> int:
    """Write the chat JSONL atomically (temp file + rename); returns the number of episodes written."""
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    n = 0
    with open(tmp, "w", encoding="utf-8") as fh:
        for example in export_chat(records, **options):
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
    parser.add_argument("--arguments", default="object", choices=list(ARGUMENT_MODES),
                        help="tool-call arguments as JSON objects (Hugging Face templates, TRL; default) or as JSON "
                             "strings (the OpenAI API and fine-tuning format)")
    parser.add_argument("--strict-tools", action="store_true",
                        help="OpenAI strict-mode tool schemas: every property required, optional ones nullable, "
                             "additionalProperties false")


def run_cli(args: Any) -> int:
    """Export run files as chat JSONL from parsed arguments; bad input gives one line and exit code 2."""
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
    n = write_chat_jsonl(records, args.out, style=args.style, final_observation=args.final_observation,
                         arguments=getattr(args, "arguments", "object"),
                         strict_tools=bool(getattr(args, "strict_tools", False)))
    print(f"{n} episodes written to {args.out} ({args.format}, style {args.style})", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    """``abstain-gym export`` as a standalone command."""
    import argparse

    parser = argparse.ArgumentParser(prog="abstain-gym export", description=__doc__.split("\n\n")[0])
    add_arguments(parser)
    return run_cli(parser.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
