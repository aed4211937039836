"""Tool calls written into a reply's text, for models served without a tool-call parser.

A server that parses tool calls (vLLM with ``--tool-call-parser``, llama.cpp with ``--jinja``, Ollama with a tool
model) returns them in ``message.tool_calls``. Without a parser the same model writes them into ``content``; three
shapes are understood here, the ones open models are trained to emit:

* Hermes / Qwen tags: ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` (prose around them is kept as
  the message's text, as vLLM's Hermes parser does; a last tag left unclosed at the end of the reply counts too);
* a fenced code block (```` ```json ```` or a bare fence) whose whole body is a call object or a list of them;
* a reply that is nothing but a call object or a list of them (``<|python_tag|>`` prefix allowed, as Llama 3.1
  writes it).

A call object is ``{"name": str, "arguments": object}`` (``"parameters"`` is accepted for ``"arguments"``, as in
Llama 3.1's format; ``arguments`` may also be a JSON string of an object), or the OpenAI form
``{"type": "function", "function": {...}}``. What is **not** a call: JSON inside running prose (a reply that
explains the format is not a call), a fenced or bare object whose ``name`` is not one of the offered tools (data
that happens to have a ``name`` key), an object without ``arguments``/``parameters``. Inside ``<tool_call>`` tags the
model declared a call, so any name counts: an unknown tool then costs the turn, as a server-parsed one does.

Several calls in one reply are all returned, in order; the agent runs the first (one action per turn) and answers
the others "Not executed", exactly as for server-parsed calls.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Collection
from typing import Any

_TAG = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|\Z)", re.DOTALL)
#: The language tag is optional as a whole (not ``[ \t]*(lang*)[ \t]*``, whose two blank runs around an empty tag made
#: a fence followed by a long run of blanks cost time quadratic in the run).
_FENCE = re.compile(r"```[ \t]*(?:([A-Za-z0-9_-]+)[ \t]*)?\n(.*?)\n?[ \t]*```", re.DOTALL)
_PYTHON_TAG = "<|python_tag|>"
#: A reply longer than this is not searched for bare or fenced JSON (tags are always searched).
_MAX_JSON_CHARS = 64_000


def _call_of(data: Any, names: Collection[str] | None) -> tuple[str, dict[str, Any]] | None:
    """``(name, arguments)`` when ``data`` is one call object (see the module docstring), else None."""
    if not isinstance(data, dict):
        return None
    if data.get("type") == "function" and isinstance(data.get("function"), dict):
        data = data["function"]
    name = data.get("name")
    if not isinstance(name, str) or not name or (names is not None and name not in names):
        return None
    if set(data) - {"name", "arguments", "parameters", "id", "type"}:
        return None
    raw = data.get("arguments", data.get("parameters"))
    if isinstance(raw, str):
        try:
            raw = json.loads(raw) if raw.strip() else {}
        except (ValueError, RecursionError):
            return None
    if raw is None and ("arguments" in data or "parameters" in data):
        raw = {}
    return (name, raw) if isinstance(raw, dict) else None


def _calls_of(text: str, names: Collection[str] | None) -> list[tuple[str, dict[str, Any]]] | None:
    """The calls when ``text`` is exactly one call object or a non-empty list of them, else None."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: a hostile reply nested thousands deep
        return None
    items = data if isinstance(data, list) and data else [data]
    calls = [_call_of(item, names) for item in items]
    return [c for c in calls if c is not None] if all(c is not None for c in calls) else None


def parse_content_calls(content: str, names: Collection[str]) -> tuple[list[tuple[str, dict[str, Any]]], str]:
    """The tool calls written in ``content`` and the text left around them: ``([(name, arguments), ...], text)``.

    ``names`` are the offered tools (fenced and bare JSON must name one of them). No calls: ``([], content)``.
    """
    if not isinstance(content, str) or not content.strip():
        return [], content if isinstance(content, str) else ""
    if "<tool_call>" in content:
        calls: list[tuple[str, dict[str, Any]]] = []
        for match in _TAG.finditer(content):
            found = _calls_of(match.group(1), None)
            if found is None:
                return [], content  # a malformed tag: not guessed at; the reply is parsed as text
            calls.extend(found)
        if calls:
            return calls, _TAG.sub("", content).strip()
    if len(content) > _MAX_JSON_CHARS:
        return [], content
    stripped = content.strip()
    if stripped.startswith(_PYTHON_TAG):
        stripped = stripped[len(_PYTHON_TAG):].strip()
    if stripped[:1] in "{[":
        found = _calls_of(stripped, names)
        if found:
            return found, ""
    fenced: list[tuple[str, dict[str, Any]]] = []
    for match in _FENCE.finditer(content):
        if (match.group(1) or "").lower() not in ("", "json", "tool_call", "tool_code"):
            continue
        found = _calls_of(match.group(2).strip(), names)
        if found:
            fenced.extend(found)
    if fenced:
        rest = _FENCE.sub(lambda m: "" if _calls_of(m.group(2).strip(), names) else m.group(0), content)
        return fenced, rest.strip()
    return [], content


def content_call_id(content: str, index: int) -> str:
    """A stable id for the ``index``-th call found in ``content`` (the server gave none): 9 alphanumerics after
    ``call``, so templates that check ids (Mistral's) accept it."""
    return _call_id(hashlib.sha256(content.encode("utf-8", "surrogatepass")).digest(), index)


def _call_id(digest: bytes, index: int) -> str:
    # the reply is hashed once (content_tool_calls asks for every call of it) and encoded with surrogatepass: a
    # model's reply can hold a lone surrogate, which strict UTF-8 refuses
    return "call" + hashlib.sha256(digest + index.to_bytes(8, "big")).hexdigest()[:9]


def content_tool_calls(content: str, names: Collection[str]) -> tuple[list[dict[str, Any]], str]:
    """The calls in ``content`` as a server's parser would return them (OpenAI ``tool_calls``, arguments as JSON
    text) and the text left around them; ``([], content)`` when there are none."""
    found, rest = parse_content_calls(content, names)
    digest = hashlib.sha256(content.encode("utf-8", "surrogatepass")).digest() if found else b""
    calls = [{"id": _call_id(digest, i), "type": "function",
              "function": {"name": name, "arguments": json.dumps(arguments)}}
             for i, (name, arguments) in enumerate(found)]
    return calls, (rest if found else content)


__all__ = ["content_call_id", "content_tool_calls", "parse_content_calls"]
