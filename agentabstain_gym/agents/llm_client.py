"""One chat-completions call with retries, budget accounting and a transcript, shared by the LLM agent and the LLM
reflector / curator.

Any OpenAI-compatible server works (vLLM, llama.cpp's server, Ollama, hosted APIs) through the official ``openai``
client, whose own retries are switched off so that ours are the only ones: exponential backoff on transient errors
(HTTP 408/409/425/429/5xx, timeouts, refused connections), honouring ``Retry-After`` up to the cap, with an
injectable ``sleep`` so tests never wait. Other HTTP errors (400, 401, 404...) are raised at once as
:class:`LLMError`: retrying cannot fix a wrong model name or key.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

ENV_BASE_URL = "ABSTAIN_GYM_LLM_BASE_URL"
ENV_MODEL = "ABSTAIN_GYM_LLM_MODEL"
ENV_API_KEY = "ABSTAIN_GYM_LLM_API_KEY"
TRANSIENT_STATUS = frozenset({408, 409, 425, 429})
_KEPT_RESPONSE_FIELDS = ("id", "model", "choices", "usage")


class LLMError(RuntimeError):
    """A request that failed for good (non-transient error, or retries used up)."""


class MalformedResponse(LLMError):
    """The server answered, but not with a usable chat completion (bad JSON, no choices)."""


def _openai() -> Any:
    try:
        import openai
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise ImportError("the LLM agent needs the openai client: pip install openai (the [llm] extra)") from exc
    return openai


def _status(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    return int(status) if isinstance(status, int) else None


def is_transient(exc: BaseException) -> bool:
    """Whether retrying may help: timeouts, connection errors, HTTP 408/409/425/429 and 5xx."""
    openai = _openai()
    if isinstance(exc, openai.APIConnectionError):  # includes APITimeoutError
        return True
    status = _status(exc)
    return status is not None and (status in TRANSIENT_STATUS or status >= 500)


def _retry_after(exc: BaseException) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    value = headers.get("retry-after")
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def describe_error(exc: BaseException) -> str:
    """A one-line description of a client error (type, HTTP status, message), for records and logs."""
    status = _status(exc)
    text = " ".join(str(exc).split())[:300]
    return f"{type(exc).__name__}" + (f" (HTTP {status})" if status else "") + (f": {text}" if text else "")


class ChatCaller:
    """Sends chat-completion requests; counts requests and tokens; keeps one transcript entry per request.

    ``base_url``, ``model`` and ``api_key`` default to ``$ABSTAIN_GYM_LLM_BASE_URL``, ``$ABSTAIN_GYM_LLM_MODEL``
    and ``$ABSTAIN_GYM_LLM_API_KEY`` (then ``$OPENAI_API_KEY``; local servers accept any key, so ``EMPTY`` is the
    last default). The client is made on first use, so building an agent never needs a server.
    """

    def __init__(self, *, base_url: str | None = None, model: str | None = None, api_key: str | None = None,
                 timeout: float = 60.0, max_retries: int = 4, backoff: float = 1.0, max_backoff: float = 30.0,
                 temperature: float | None = 0.0, max_reply_tokens: int | None = 1024,
                 extra_body: dict[str, Any] | None = None, sleep: Callable[[float], None] = time.sleep) -> None:
        self.base_url = base_url or os.environ.get(ENV_BASE_URL) or None
        self.model = model or os.environ.get(ENV_MODEL) or ""
        if not self.model:
            raise ValueError(f"no model name: pass model=... or set ${ENV_MODEL}")
        self.api_key = api_key or os.environ.get(ENV_API_KEY) or os.environ.get("OPENAI_API_KEY") or "EMPTY"
        if max_retries < 0 or backoff < 0 or timeout <= 0:
            raise ValueError("need max_retries >= 0, backoff >= 0 and timeout > 0")
        self.timeout, self.max_retries, self.backoff, self.max_backoff = timeout, max_retries, backoff, max_backoff
        self.temperature, self.max_reply_tokens, self.extra_body = temperature, max_reply_tokens, extra_body
        self.sleep = sleep
        self._client: Any = None
        self.calls: list[dict[str, Any]] = []
        self.requests = 0
        self.tokens = 0

    @property
    def client(self) -> Any:
        """The OpenAI client, made on first use (retries are ours, so the client's own are off)."""
        if self._client is None:
            self._client = _openai().OpenAI(base_url=self.base_url, api_key=self.api_key, timeout=self.timeout,
                                            max_retries=0)
        return self._client

    def reset_counters(self) -> None:
        """Zero the per-episode call log, request and token counts."""
        self.calls, self.requests, self.tokens = [], 0, 0

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None,
                 **extra: Any) -> dict[str, Any]:
        """The chat completion for ``messages`` as a plain dict (id, model, choices, usage).

        Raises :class:`MalformedResponse` when the server's answer is not a usable completion and
        :class:`LLMError` on a non-transient error or when retries are used up. Each request (retries included)
        counts against the request budget.
        """
        params: dict[str, Any] = {"model": self.model, "messages": messages}
        if tools:
            params["tools"] = tools
        if self.temperature is not None:
            params["temperature"] = self.temperature
        if self.max_reply_tokens is not None:
            params["max_tokens"] = self.max_reply_tokens
        if self.extra_body:
            params["extra_body"] = self.extra_body
        params.update(extra)
        entry: dict[str, Any] = {"messages_upto": len(messages), "tools": bool(tools), "errors": [],
                                 "response": None}
        self.calls.append(entry)
        openai = _openai()
        for attempt in range(self.max_retries + 1):
            self.requests += 1
            try:
                raw = self.client.chat.completions.create(**params)
            except openai.APIResponseValidationError as exc:
                entry["errors"].append(describe_error(exc))
                raise MalformedResponse(describe_error(exc)) from exc
            except Exception as exc:  # noqa: BLE001 - classified below; anything else is re-raised
                if not isinstance(exc, openai.OpenAIError):
                    entry["errors"].append(describe_error(exc))
                    raise MalformedResponse(describe_error(exc)) from exc
                entry["errors"].append(describe_error(exc))
                if not is_transient(exc):
                    raise LLMError(describe_error(exc)) from exc
                if attempt == self.max_retries:
                    raise LLMError(f"gave up after {attempt + 1} attempts: {describe_error(exc)}") from exc
                delay = min(self.max_backoff, self.backoff * (2 ** attempt))
                hinted = _retry_after(exc)
                self.sleep(min(self.max_backoff, hinted) if hinted is not None else delay)
                continue
            response = self._as_dict(raw)
            entry["response"] = response
            self.tokens += self._tokens(response, messages)
            if not response.get("choices"):
                raise MalformedResponse("the completion has no choices")
            return response
        raise AssertionError("unreachable")  # pragma: no cover

    @staticmethod
    def _as_dict(raw: Any) -> dict[str, Any]:
        if hasattr(raw, "model_dump"):
            data = raw.model_dump(exclude_none=True)
        elif isinstance(raw, dict):
            data = raw
        else:
            raise MalformedResponse(f"the server returned {type(raw).__name__}, not a chat completion")
        return {k: data[k] for k in _KEPT_RESPONSE_FIELDS if k in data}

    @staticmethod
    def _tokens(response: dict[str, Any], messages: list[dict[str, Any]]) -> int:
        """Tokens the server reports, else an estimate of four characters a token."""
        usage = response.get("usage") or {}
        total = usage.get("total_tokens")
        if isinstance(total, int):
            return total
        chars = sum(len(str(m.get("content") or "")) for m in messages)
        chars += sum(len(str((c.get("message") or {}).get("content") or "")) for c in response.get("choices", []))
        return chars // 4
