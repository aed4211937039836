"""The stdio wire of ``abstain-gym mcp``: every request line gets an answer.

The MCP SDK's stdio transport drops a line it cannot parse without answering, so a client that sent one waits
forever: invalid JSON, nesting deeper than its parser allows, an integer too long for Python, or a lone UTF-16
surrogate (``"\\ud800"``: valid JSON text, and an LLM's tool call can carry one). Here each line is read first
(:func:`screen_line`): lone surrogates become U+FFFD and the message goes on; a line that still is no JSON-RPC
message is answered with a JSON-RPC error for its id (dropped only when it has none, as a notification has none).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import AsyncIterator
from typing import Any

_ID = re.compile(r'"id"\s*:\s*(-?\d{1,18}|"(?:[^"\\]|\\.){0,200}")')
_SURROGATE = re.compile("[\ud800-\udfff]")


def _without_surrogates(data: Any) -> Any:
    """``data`` (parsed JSON) with each lone surrogate replaced by U+FFFD; iterative, so depth costs no stack."""
    def fix(value: Any) -> Any:
        return _SURROGATE.sub("\ufffd", value) if isinstance(value, str) else value

    root = [fix(data)]
    stack: list[Any] = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            for i, value in enumerate(node):
                node[i] = fix(value)
                if isinstance(node[i], (list, dict)):
                    stack.append(node[i])
        elif isinstance(node, dict):
            for key in list(node):
                value = fix(node.pop(key))
                node[fix(key)] = value
                if isinstance(value, (list, dict)):
                    stack.append(value)
    return root[0]


def _error(ident: Any, code: int, message: str) -> str | None:
    if isinstance(ident, bool) or not isinstance(ident, (int, str)):
        return None
    return json.dumps({"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": message}})


def screen_line(line: str) -> tuple[str | None, str | None]:
    """(the line to hand the SDK, or None; a JSON-RPC error line to answer with, or None)."""
    import mcp_types as types

    if not line.strip():
        return None, None
    with contextlib.suppress(Exception):
        types.jsonrpc_message_adapter.validate_json(line, by_name=False)
        return line, None
    try:
        data = json.loads(line)
    except (ValueError, RecursionError):  # not JSON, an integer too long, or nested past Python's parser
        match = _ID.search(line)
        ident = None
        if match is not None:
            with contextlib.suppress(ValueError):
                ident = json.loads(match.group(1))
        return None, _error(ident, -32700, "Parse error: the line is not JSON this server can read")
    fixed = json.dumps(_without_surrogates(data), ensure_ascii=False)
    with contextlib.suppress(Exception):
        types.jsonrpc_message_adapter.validate_json(fixed, by_name=False)
        return fixed, None
    ident = data.get("id") if isinstance(data, dict) else None
    return None, _error(ident, -32600, "Invalid request: not a JSON-RPC message this server can read "
                                       "(nested too deeply, or of the wrong shape)")


class _Lines:
    """The SDK's stdin: screened lines; the answers to unreadable ones go straight to ``sink``."""

    def __init__(self, source: Any, sink: Any) -> None:
        self.source, self.sink = source, sink

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        async for line in self.source:
            passed, error = screen_line(line)
            if error is not None:
                await self.sink.write(error + "\n")
                await self.sink.flush()
            if passed is not None:
                yield passed


@contextlib.asynccontextmanager
async def sane_stdio() -> AsyncIterator[Any]:
    """The SDK's ``stdio_server`` over screened lines. As the SDK does for its own streams, fd 0 reads /dev/null and
    fd 1 writes to stderr while serving, so stray output of a handler or a child process never reaches the wire."""
    import anyio
    from mcp.server.stdio import stdio_server

    saved = os.dup(0), os.dup(1)
    wire_in, wire_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    try:
        stdin = anyio.wrap_file(open(wire_in, encoding="utf-8", errors="replace"))  # noqa: SIM115 - closed below
        stdout = anyio.wrap_file(open(wire_out, "w", encoding="utf-8"))  # noqa: SIM115 - closed below
        try:
            async with stdio_server(stdin=_Lines(stdin, stdout), stdout=stdout) as streams:
                yield streams
        finally:  # stdin is left open: a reader thread may be blocked on it, and closing would wait for that read
            with contextlib.suppress(Exception):
                await stdout.aclose()
    finally:
        os.dup2(saved[0], 0)
        os.dup2(saved[1], 1)
        for fd in saved:
            os.close(fd)
