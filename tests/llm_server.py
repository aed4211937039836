"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1, for end-to-end tests of the LLM parts.

Real HTTP through the real ``openai`` client: each POST to ``/v1/chat/completions`` is answered by the next item of
the script. Items: ``tool(name, **args)`` / ``tools(...)`` (tool calls), ``text("...")`` (plain content),
``status(429, retry_after=...)`` / ``status(500)`` (HTTP errors), ``slow(seconds, item)`` (delay, for timeouts),
``garbage()`` (a 200 whose body is not JSON), ``body({...})`` (a recorded response body, sent as it is), or a
callable taking the request JSON and returning an item.
Every request body is kept in ``server.requests`` (and its arrival time in ``server.times``). For concurrent runs:
``latency`` delays every answer, ``stable_ids=True`` derives reply ids from the request (so records do not depend
on the order requests arrive in) and ``models=[...]`` answers ``GET /v1/models`` (else it is a 404).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Item = dict[str, Any] | Callable[[dict[str, Any]], dict[str, Any]]


def tool(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [(name, json.dumps(arguments))]}


def raw_tool(name: str, raw_arguments: str) -> dict[str, Any]:
    return {"tool_calls": [(name, raw_arguments)]}


def tools(*calls: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    return {"tool_calls": [(n, json.dumps(a)) for n, a in calls]}


def text(content: str) -> dict[str, Any]:
    return {"content": content}


def status(code: int, retry_after: float | None = None) -> dict[str, Any]:
    return {"status": code, "retry_after": retry_after}


def slow(seconds: float, item: dict[str, Any]) -> dict[str, Any]:
    return {**item, "delay": seconds}


def garbage() -> dict[str, Any]:
    return {"garbage": True}


def body(payload: dict[str, Any]) -> dict[str, Any]:
    """A whole response body sent as it is (a recorded reply of a real server)."""
    return {"body": payload}


class ScriptedLLMServer:
    """Start with ``with ScriptedLLMServer([...]) as server:``; ``server.base_url`` is the ``/v1`` URL."""

    def __init__(self, script: list[Item], default: Item | None = None, *, latency: float = 0.0,
                 stable_ids: bool = False, models: list[str] | None = None) -> None:
        self.script = list(script)
        self.default = default
        self.latency, self.stable_ids, self.models = latency, stable_ids, models
        self.times: list[float] = []
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._counter = 0
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:  # noqa: N802 - the http.server API
                found = owner.models is not None and self.path.rstrip("/").endswith("/models")
                payload = json.dumps({"object": "list", "data": [{"id": m, "object": "model", "created": 0,
                                                                   "owned_by": "test"} for m in owner.models or []]}
                                     if found else {"error": {"message": "not found", "type": "test"}}).encode()
                self.send_response(200 if found else 404)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_POST(self) -> None:  # noqa: N802 - the http.server API
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                item = owner._next(body)
                if item.get("delay") or owner.latency:
                    time.sleep(float(item.get("delay") or 0) + owner.latency)
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the client gave up (timeout)
                    owner._answer(self, body, item)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def _next(self, body: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            self.times.append(time.monotonic())
            self.requests.append(body)
            self._counter += 1
            item = self.script.pop(0) if self.script else self.default
        if item is None:
            return {"status": 500, "retry_after": None, "message": "script exhausted"}
        return item(body) if callable(item) else item

    def _answer(self, handler: BaseHTTPRequestHandler, body: dict[str, Any], item: dict[str, Any]) -> None:
        if item.get("status"):
            payload = json.dumps({"error": {"message": item.get("message", "scripted error"), "type": "test"}})
            handler.send_response(int(item["status"]))
            handler.send_header("content-type", "application/json")
            if item.get("retry_after") is not None:
                handler.send_header("retry-after", str(item["retry_after"]))
            handler.send_header("content-length", str(len(payload)))
            handler.end_headers()
            handler.wfile.write(payload.encode())
            return
        if item.get("garbage") or item.get("body") is not None:
            data = json.dumps(item["body"]).encode() if item.get("body") is not None else b"<html>this is not json"
            handler.send_response(200)
            handler.send_header("content-type", "application/json")
            handler.send_header("content-length", str(len(data)))
            handler.end_headers()
            handler.wfile.write(data)
            return
        message: dict[str, Any] = {"role": "assistant", "content": item.get("content")}
        tag = (hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:12] if self.stable_ids
               else str(self._counter))
        if item.get("tool_calls"):
            message["tool_calls"] = [{"id": f"call_{tag}_{i}", "type": "function",
                                      "function": {"name": n, "arguments": a}}
                                     for i, (n, a) in enumerate(item["tool_calls"])]
        payload = json.dumps({
            "id": f"chatcmpl-{tag}", "object": "chat.completion", "created": 0,
            "model": body.get("model", "scripted"),
            "choices": [{"index": 0, "message": message,
                         "finish_reason": "tool_calls" if item.get("tool_calls") else "stop"}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}})
        handler.send_response(200)
        handler.send_header("content-type", "application/json")
        handler.send_header("content-length", str(len(payload)))
        handler.end_headers()
        handler.wfile.write(payload.encode())

    def __enter__(self) -> ScriptedLLMServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def require_openai() -> None:
    """Skip without the ``openai`` client (the ``llm`` extra), or fail when CI demands every component."""
    from conftest import skip_or_fail

    try:
        import openai  # noqa: F401
    except ImportError:
        skip_or_fail("the openai client is not installed (pip install openai)",
                     allow_module_level=True)
