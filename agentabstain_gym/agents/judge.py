"""An LLM judge for free-text replies in the tool sandboxes (the env's optional judge hook).

``AbstainToolsEnv(judge=...)`` calls ``judge(reply) -> bool`` once per ``respond[<reply>]`` action, with the stripped
reply text; ``True`` means the reply counts as the episode's ABSTAIN (at that turn), for agents that decline in words
instead of calling ``abstain``. :class:`LLMJudge` is such a callable backed by any OpenAI-compatible server::

    judge = LLMJudge(model="qwen2.5-7b-instruct", base_url="http://localhost:8000/v1", cache_path="judge.jsonl")
    env = gym.make("AbstainTools-v0", judge=judge)
    evaluate(EvalConfig(["AbstainTools-v0"], ["llm"], env_kwargs=judge_env_kwargs(["AbstainTools-v0"], judge)))

Decisions worth knowing:

* **The judge lives in ``agents/``** and is passed *into* the env, so no family imports ``agents/`` (the layering of docs/design.md, section 2). The env
  only knows the string ``"keyword"``; there is deliberately no ``judge="llm"`` string: a name would need a
  process-global registry that the env cannot fill itself without importing ``agents/``, and that a spawned runner
  worker would not see. Pass the instance; it pickles (without its HTTP client), so ``workers > 1`` works.
* **Prompt as data**: ``data/llm/judge.md`` (a ``string.Template`` with ``$reply``) asks for one strict JSON object
  ``{"abstains": bool, "kind": ..., "reason": ...}``. Requests use temperature 0 and a small token cap.
* **Robust parsing**: the first JSON object with a verdict is taken from anywhere in the answer (code fences and
  chatter are ignored; ``"yes"`` / ``"false"`` strings are accepted). An answer with no usable verdict is
  *malformed*: the keyword judge (``envs.tools.scoring.keyword_judge``) decides instead and the verdict says so
  (``source="fallback"``).
* **Failures**: transient HTTP errors are retried with backoff by the shared client (``agents.llm_client``). A
  request that fails for good raises :class:`~agentabstain_gym.agents.llm_client.LLMError` by default
  (``on_error="raise"``), because a run that silently mixed LLM and keyword verdicts would be mislabelled; the runner
  resumes a run from its output file. ``on_error="fallback"`` uses the keyword judge instead (``source="error"``,
  never cached, with one warning per judge).
* **Cache**: verdicts are keyed by sha256 of (model, prompt version, reply); the prompt version is a hash of the
  prompt text, so editing the prompt never reuses stale verdicts. The cache is in memory and, with ``cache_path``,
  in a JSON lines file that is only ever appended to (one ``write`` per line under an exclusive lock, so several
  worker processes can share it; a torn last line is skipped on load). Model answers are cached, malformed ones
  included (at temperature 0 the model would answer the same), so a re-run never re-queries; errors are not.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import threading
import time
import warnings
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path
from string import Template
from typing import Any

from agentabstain_gym.agents.llm_client import (
    ENV_API_KEY,
    ENV_BASE_URL,
    ENV_MODEL,
    ChatCaller,
    LLMError,
    describe_error,
)
from agentabstain_gym.envs.tools.scoring import keyword_judge

try:  # POSIX: an exclusive lock around each append; elsewhere O_APPEND alone
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

PROMPT_FILE = "judge.md"
ENV_JUDGE_MODEL = "ABSTAIN_GYM_JUDGE_MODEL"
ENV_JUDGE_BASE_URL = "ABSTAIN_GYM_JUDGE_BASE_URL"
ENV_JUDGE_API_KEY = "ABSTAIN_GYM_JUDGE_API_KEY"
ENV_JUDGE_CACHE = "ABSTAIN_GYM_JUDGE_CACHE"
ON_ERROR = ("raise", "fallback")
SOURCES = ("llm", "fallback", "error", "empty")
_TRUE = frozenset({"true", "yes", "y", "1", "abstain", "abstains", "abstained", "abstention"})
_FALSE = frozenset({"false", "no", "n", "0", "act", "acts", "acted", "answered", "not_abstain", "no_abstention"})
_BOOL_KEYS = ("abstains", "abstain", "abstention", "is_abstention", "abstained")
_LABEL_KEYS = ("verdict", "label", "decision", "classification")


def load_prompt() -> str:
    """The judge prompt shipped in ``agentabstain_gym/data/llm/judge.md``."""
    return resources.files("agentabstain_gym").joinpath("data", "llm", PROMPT_FILE).read_text(encoding="utf-8")


def prompt_version(prompt: str) -> str:
    """A short hash of the judge prompt, stored with each verdict so a changed prompt never reuses cached
    ones.
    """
    return "sha256:" + hashlib.sha256(prompt.encode("utf-8")).hexdigest()[:16]


def cache_key(model: str, version: str, reply: str) -> str:
    """sha256 of (model, prompt version, reply), the cache's key."""
    return hashlib.sha256(json.dumps([model, version, reply], ensure_ascii=False).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Verdict:
    """One judgement. ``source``: ``llm`` (the model's verdict), ``fallback`` (malformed answer: keyword judge),
    ``error`` (the request failed, ``on_error="fallback"``: keyword judge), ``empty`` (empty reply: not asked)."""

    abstains: bool
    source: str
    kind: str | None = None
    reason: str = ""
    raw: str | None = None
    cached: bool = False

    def to_dict(self) -> dict[str, Any]:
        """The verdict as a plain ``dict`` (for the cache file and records)."""
        return asdict(self)


def _boolish(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        word = value.strip().lower().replace("-", "_").replace(" ", "_")
        if word in _TRUE:
            return True
        if word in _FALSE:
            return False
    return None


def _verdict_of(data: dict[str, Any]) -> bool | None:
    lowered = {str(k).strip().lower(): v for k, v in data.items()}
    for key in _BOOL_KEYS + _LABEL_KEYS:
        if key in lowered:
            found = _boolish(lowered[key])
            if found is not None:
                return found
    return None


def parse_verdict(text: str) -> tuple[bool, str | None, str]:
    """``(abstains, kind, reason)`` from a model answer; raises ``ValueError`` when it holds no usable verdict.

    Every ``{`` starts a decode attempt, so a JSON object is found inside code fences, after chatter or before
    trailing text; the first object (at any nesting level) that carries a verdict key wins.
    """
    decoder = json.JSONDecoder()
    seen_object = False
    start = text.find("{")
    while start >= 0:
        try:
            data, _end = decoder.raw_decode(text, start)
        except ValueError:
            data = None
        if isinstance(data, dict):
            seen_object = True
            abstains = _verdict_of(data)
            if abstains is not None:
                kind = data.get("kind")
                reason = data.get("reason")
                return (abstains, str(kind) if isinstance(kind, str | int) else None,
                        str(reason) if isinstance(reason, str | int | float) else "")
        start = text.find("{", start + 1)
    raise ValueError("a JSON object but no abstains verdict" if seen_object else "no JSON object in the answer")


class LLMJudge:
    """``judge(reply) -> bool``: does this final reply decline / abstain? Asked of an OpenAI-compatible model.

    ``model``, ``base_url``, ``api_key`` default to ``$ABSTAIN_GYM_JUDGE_MODEL`` / ``_BASE_URL`` / ``_API_KEY``, then
    to the LLM agent's ``$ABSTAIN_GYM_LLM_*`` variables; ``cache_path`` defaults to ``$ABSTAIN_GYM_JUDGE_CACHE``
    (unset: memory only). ``prompt`` replaces the shipped prompt (a template with ``$reply``). ``fallback`` decides
    malformed answers (default: the keyword judge). Other keywords (``timeout``, ``max_retries``, ``backoff``,
    ``sleep``, ``extra_body``...) go to :class:`~agentabstain_gym.agents.llm_client.ChatCaller`.

    :meth:`judge` returns the full :class:`Verdict`; ``last`` is the latest one and ``stats`` counts queries,
    HTTP requests (retries included), cache hits, fallbacks and errors.
    """

    def __init__(self, model: str | None = None, base_url: str | None = None, api_key: str | None = None,
                 cache_path: str | os.PathLike[str] | None = None, *, prompt: str | None = None,
                 fallback: Callable[[str], bool] = keyword_judge, on_error: str = "raise",
                 max_reply_chars: int = 8000, max_verdict_tokens: int = 200, json_mode: bool = False,
                 sleep: Callable[[float], None] = time.sleep, **client: Any) -> None:
        if on_error not in ON_ERROR:
            raise ValueError(f"on_error must be one of {ON_ERROR}, got {on_error!r}")
        if max_reply_chars < 1:
            raise ValueError("max_reply_chars must be >= 1")
        client.setdefault("temperature", 0.0)
        self.caller = ChatCaller(
            model=model or os.environ.get(ENV_JUDGE_MODEL) or os.environ.get(ENV_MODEL),
            base_url=base_url or os.environ.get(ENV_JUDGE_BASE_URL) or os.environ.get(ENV_BASE_URL),
            api_key=api_key or os.environ.get(ENV_JUDGE_API_KEY) or os.environ.get(ENV_API_KEY),
            max_reply_tokens=max_verdict_tokens, sleep=sleep, **client)
        self.model: str = self.caller.model
        self.prompt = load_prompt() if prompt is None else prompt
        if "$reply" not in self.prompt and "${reply}" not in self.prompt:
            raise ValueError("the judge prompt must contain $reply")
        self.prompt_version = prompt_version(self.prompt)
        self.fallback, self.on_error = fallback, on_error
        self.max_reply_chars, self.json_mode = max_reply_chars, json_mode
        cache_path = cache_path if cache_path is not None else os.environ.get(ENV_JUDGE_CACHE) or None
        self.cache_path = Path(cache_path) if cache_path is not None else None
        self._cache: dict[str, Verdict] = {}
        self._lock = threading.Lock()
        self._warned = False
        self.last: Verdict | None = None
        self.stats = {"queries": 0, "requests": 0, "hits": 0, "fallbacks": 0, "errors": 0, "bad_cache_lines": 0}
        if self.cache_path is not None:
            self._load()

    # ----- the env-facing callable ------------------------------------------------------------------------------
    def __call__(self, reply: str) -> bool:
        return self.judge(reply).abstains

    def judge(self, reply: str) -> Verdict:
        """The verdict on ``reply``, from the cache when this (model, prompt, reply) was judged before."""
        if not reply.strip():  # nothing said: no request, and nothing declined
            verdict = Verdict(bool(self.fallback(reply)), "empty", reason="empty reply")
            self.last = verdict
            return verdict
        key = self.key(reply)
        with self._lock:
            hit = self._cache.get(key)
        if hit is not None:
            self.stats["hits"] += 1
            self.last = hit
            return hit
        verdict = self._ask(reply)
        if verdict.source != "error":
            self._store(key, reply, verdict)
        self.last = verdict
        return verdict

    def key(self, reply: str) -> str:
        """The cache key of a reply: model, prompt version and the reply itself."""
        return cache_key(self.model, self.prompt_version, reply)

    def messages(self, reply: str) -> list[dict[str, str]]:
        """The chat messages that ask the model to classify ``reply`` (cut to ``max_reply_chars``)."""
        shown = reply
        if len(shown) > self.max_reply_chars:
            shown = shown[: self.max_reply_chars] + f"\n[... {len(reply) - self.max_reply_chars} more characters]"
        return [{"role": "user", "content": Template(self.prompt).safe_substitute(reply=shown)}]

    # ----- asking the model -------------------------------------------------------------------------------------
    def _ask(self, reply: str) -> Verdict:
        self.stats["queries"] += 1
        extra: dict[str, Any] = {"response_format": {"type": "json_object"}} if self.json_mode else {}
        try:
            response = self.caller.complete(self.messages(reply), **extra)
        except LLMError as exc:
            self.stats["errors"] += 1
            if self.on_error == "raise":
                raise LLMError(f"LLM judge ({self.model}): {exc}") from exc
            if not self._warned:
                self._warned = True
                warnings.warn(f"LLM judge request failed, keyword judge used instead: {describe_error(exc)}",
                              RuntimeWarning, stacklevel=3)
            return Verdict(bool(self.fallback(reply)), "error", reason=f"request failed: {describe_error(exc)}")
        finally:
            self.stats["requests"] += self.caller.requests
            self.caller.reset_counters()  # the judge keeps no per-request transcript: it would grow without bound
        message = (response["choices"][0] or {}).get("message") or {}
        content = message.get("content")
        raw = content if isinstance(content, str) else ""
        try:
            abstains, kind, reason = parse_verdict(raw)
        except ValueError as exc:
            self.stats["fallbacks"] += 1
            return Verdict(bool(self.fallback(reply)), "fallback",
                           reason=f"malformed verdict ({exc}); keyword judge used", raw=raw)
        return Verdict(abstains, "llm", kind, reason, raw)

    # ----- the cache --------------------------------------------------------------------------------------------
    def _load(self) -> None:
        assert self.cache_path is not None
        if not self.cache_path.exists():
            return
        with self.cache_path.open(encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if not line.strip():
                    continue
                try:
                    entry = json.loads(line)
                    key, abstains, source = entry["key"], entry["abstains"], entry["source"]
                    if not isinstance(key, str) or not isinstance(abstains, bool) or source not in SOURCES:
                        raise ValueError(line[:80])
                except (ValueError, KeyError, TypeError):
                    self.stats["bad_cache_lines"] += 1  # e.g. a line torn by a crash: skip, it is asked again
                    continue
                self._cache[key] = Verdict(abstains, source, entry.get("kind"), str(entry.get("reason") or ""),
                                           entry.get("raw"), cached=True)

    def _store(self, key: str, reply: str, verdict: Verdict) -> None:
        cached = Verdict(verdict.abstains, verdict.source, verdict.kind, verdict.reason, verdict.raw, cached=True)
        with self._lock:
            self._cache[key] = cached
            if self.cache_path is not None:
                entry = {"key": key, "model": self.model, "prompt_version": self.prompt_version, "reply": reply,
                         **{k: v for k, v in verdict.to_dict().items() if k != "cached"}}
                _append_line(self.cache_path, json.dumps(entry, ensure_ascii=False, sort_keys=True))

    def __len__(self) -> int:
        return len(self._cache)

    # ----- pickling (runner workers) and display ----------------------------------------------------------------
    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state.pop("_lock", None)
        caller = copy.copy(self.caller)
        caller._client = None  # an HTTP client does not cross processes; it is rebuilt on first use
        state["caller"] = caller
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return (f"LLMJudge(model={self.model!r}, base_url={self.caller.base_url!r}, "
                f"prompt_version={self.prompt_version!r}, cache_path={str(self.cache_path) if self.cache_path else None!r})")


def _append_line(path: Path, line: str) -> None:
    """Append one line with a single ``write`` under an exclusive lock; starts on a fresh line after a torn one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = (line + "\n").encode("utf-8")
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            data = b"\n" + data
        written = os.write(fd, data)
        while written < len(data):  # pragma: no cover - regular files take the whole write
            written += os.write(fd, data[written:])
    finally:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def judge_env_kwargs(env_ids: Iterable[str], judge: Callable[[str], bool] | None = None,
                     **judge_kwargs: Any) -> dict[str, dict[str, Any]]:
    """``EvalConfig.env_kwargs`` giving every tool-sandbox id among ``env_ids`` the same judge (one shared cache).

    ``judge`` defaults to ``LLMJudge(**judge_kwargs)`` (configured from the environment variables when empty).
    Ids of other families are left out: their envs take no judge.
    """
    from agentabstain_gym.agents import env_family

    ids = [e for e in env_ids if env_family(e) == "tools"]
    if not ids:
        return {}
    shared = judge if judge is not None else LLMJudge(**judge_kwargs)
    return {env_id: {"judge": shared} for env_id in ids}


__all__ = ["LLMJudge", "Verdict", "cache_key", "judge_env_kwargs", "load_prompt", "parse_verdict", "prompt_version"]
