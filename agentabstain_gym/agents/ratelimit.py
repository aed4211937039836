"""A client-side gate shared by every LLM episode running in one process (``eval --concurrency N``).

Why shared: with N episodes at once, per-agent limits would let N times the intended rate through, and a server's
``429 Retry-After`` seen by one episode would be ignored by the N-1 others, which would keep hammering it. So one
:class:`Gate` per process paces requests (``--llm-rps``), keeps a tokens-per-minute bucket (``--llm-tpm``; tokens
are only known after a reply, so the bucket goes into debt and later requests wait it out) and holds every thread
until a Retry-After deadline has passed.

The gate wraps the ``openai`` client (:class:`GatedChatCaller`), so the retry and budget logic of
:class:`~agentabstain_gym.agents.llm_client.ChatCaller` is unchanged.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from agentabstain_gym.agents import llm_client
from agentabstain_gym.agents.llm_client import ChatCaller, _retry_after

ENV_RPS = "ABSTAIN_GYM_LLM_RPS"
ENV_TPM = "ABSTAIN_GYM_LLM_TPM"
_POLL = 0.25  # longest single sleep, so a pause set meanwhile by another thread is seen soon


class Gate:
    """Requests/s pacing, a tokens/min bucket and a shared Retry-After pause (each optional; thread-safe)."""

    def __init__(self, rps: float | None = None, tpm: float | None = None, *,
                 clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep) -> None:
        if (rps is not None and rps <= 0) or (tpm is not None and tpm <= 0):
            raise ValueError("rate limits must be positive")
        self.rps, self.tpm = rps, tpm
        self.clock, self.sleep = clock, sleep
        self._lock = threading.Lock()
        self._next_free = 0.0  # earliest time the next request may start (rps)
        self._tokens = float(tpm or 0)  # the tpm bucket's level; negative = debt to wait out
        self._refilled = clock()
        self._pause_until = 0.0

    def _wait_needed(self, now: float) -> float:
        """Seconds to wait before a request may start (0 = go now, and the slot is taken). Holds the lock."""
        wait = self._pause_until - now
        if wait > 0:
            return wait
        if self.tpm is not None:
            self._tokens = min(self.tpm, self._tokens + (now - self._refilled) * self.tpm / 60.0)
            self._refilled = now
            if self._tokens <= 0:
                return -self._tokens * 60.0 / self.tpm + 1e-3
        if self.rps is not None:
            if self._next_free > now:
                return self._next_free - now
            self._next_free = now + 1.0 / self.rps
        return 0.0

    def before_request(self) -> None:
        """Block until this request may be sent (every limit satisfied and no Retry-After pause in force)."""
        while True:
            with self._lock:
                wait = self._wait_needed(self.clock())
            if wait <= 0:
                return
            self.sleep(min(wait, _POLL))

    def spent(self, tokens: int) -> None:
        """Charge a finished request's tokens to the per-minute bucket."""
        if self.tpm is not None and tokens > 0:
            with self._lock:
                self._tokens -= tokens

    def pause(self, seconds: float) -> None:
        """Hold every thread's next request for ``seconds`` (a server's Retry-After)."""
        with self._lock:
            self._pause_until = max(self._pause_until, self.clock() + max(0.0, seconds))

    @property
    def paused_until(self) -> float:
        """The time (on the gate's clock) until which a server's ``Retry-After`` pauses every thread."""
        return self._pause_until


_shared: dict[tuple[float | None, float | None], Gate] = {}
_shared_lock = threading.Lock()


def _env_float(name: str) -> float | None:
    text = os.environ.get(name, "").strip()
    return float(text) if text else None


def shared_gate(rps: float | None = None, tpm: float | None = None) -> Gate:
    """The process-wide gate for these limits (default: ``$ABSTAIN_GYM_LLM_RPS`` / ``$ABSTAIN_GYM_LLM_TPM``)."""
    rps = rps if rps is not None else _env_float(ENV_RPS)
    tpm = tpm if tpm is not None else _env_float(ENV_TPM)
    with _shared_lock:
        gate = _shared.get((rps, tpm))
        if gate is None:
            gate = _shared[(rps, tpm)] = Gate(rps, tpm)
        return gate


def _direct_post(client: Any) -> Callable[..., Any] | None:
    """``chat.completions.create`` without its request transform, which walks every message and tool schema as a
    typed dict (half the client's CPU per request, and CPU is what caps episodes/s at high concurrency). Our
    params are plain JSON already, so the body sent is the same. None when this ``openai`` version lacks the parts."""
    try:
        from openai._base_client import make_request_options
        from openai.types.chat import ChatCompletion
    except ImportError:
        return None
    if not callable(getattr(client, "post", None)):
        return None

    def create(**params: Any) -> Any:
        body = dict(params)
        extra = body.pop("extra_body", None)
        return client.post("/chat/completions", body=body, cast_to=ChatCompletion,
                           options=make_request_options(extra_body=extra))

    return create


class _GatedCompletions:
    """``client.chat.completions`` with the gate in front and Retry-After broadcast to the gate."""

    def __init__(self, client: Any, gate: Gate, cap: float) -> None:
        self.gate, self.cap = gate, cap
        self.send = _direct_post(client) or client.chat.completions.create

    def create(self, **params: Any) -> Any:
        self.gate.before_request()
        try:
            raw = self.send(**params)
        except Exception as exc:
            hinted = _retry_after(exc)
            if hinted is not None and getattr(exc, "status_code", None) == 429:
                self.gate.pause(min(self.cap, hinted))
            raise
        usage = getattr(raw, "usage", None)
        total = getattr(usage, "total_tokens", None)
        if not isinstance(total, int):
            total = sum(len(str(m.get("content") or "")) for m in params.get("messages") or []) // 4
        self.gate.spent(total)
        return raw


_clients: dict[tuple[str | None, str, float], Any] = {}


def shared_client(base_url: str | None, api_key: str, timeout: float) -> Any:
    """One ``openai`` client (and connection pool) per server for the whole process: building one costs ~25 ms of
    CPU (TLS context), which N threads would pay N times while holding the GIL; the client is thread-safe."""
    key = (base_url, api_key, timeout)
    with _shared_lock:
        client = _clients.get(key)
        if client is None:
            client = _clients[key] = llm_client._openai().OpenAI(base_url=base_url, api_key=api_key,
                                                                 timeout=timeout, max_retries=0)
        return client


class GatedChatCaller(ChatCaller):
    """A :class:`ChatCaller` whose requests pass through a shared :class:`Gate`, on a shared client."""

    def __init__(self, *, gate: Gate | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.gate = gate if gate is not None else shared_gate()
        self._gated: Any = None

    @property
    def client(self) -> Any:
        """A client whose chat completions pass through the shared gate (rate limits and back-off)."""
        if self._gated is None:
            inner = shared_client(self.base_url, self.api_key, self.timeout)
            completions = _GatedCompletions(inner, self.gate, self.max_backoff)
            self._gated = SimpleNamespace(chat=SimpleNamespace(completions=completions), models=inner.models)
        return self._gated
