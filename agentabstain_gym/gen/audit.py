"""Model calls through the audit log: live against an OpenAI-compatible server, or replayed from an earlier log.

Every reply and every gate verdict is one JSON line, written (and flushed) as it happens, so an interrupted run
keeps what it learned. A reply line holds the role (actor or critic), the model, a hash of the whole prompt, the
prompt's last message and the reply text. Replaying reads the reply lines of an old log in order and hands them
back instead of asking a server; each replayed call's prompt must hash to the logged one, so a replay that drifts
(other settings, another package version) stops with the call where it drifted instead of writing other files.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO

ROLES = ("actor", "critic")
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL)


class GenError(RuntimeError):
    """What stops a generation run with one line: no server, unknown model, a log that does not fit."""


def prompt_hash(messages: list[dict[str, Any]]) -> str:
    return hashlib.sha256(json.dumps(messages, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


class LiveModel:
    """One model on one server (the ``openai`` client with our retries: see :mod:`agentabstain_gym.agents.llm_client`)."""

    def __init__(self, model: str, *, base_url: str | None, api_key: str | None, timeout: float,
                 max_reply_tokens: int, max_retries: int = 4) -> None:
        from agentabstain_gym.agents.llm_client import ChatCaller

        self.model = model
        self.caller = ChatCaller(base_url=base_url, model=model, api_key=api_key, timeout=timeout,
                                 max_retries=max_retries, max_reply_tokens=max_reply_tokens)

    def ask(self, messages: list[dict[str, Any]]) -> str:
        from agentabstain_gym.agents.llm_client import LLMError

        try:
            response = self.caller.complete(messages)
        except LLMError as exc:
            raise GenError(f"model {self.model!r} at {self.caller.base_url or 'the default endpoint'}: {exc}") from None
        message = (response["choices"][0] or {}).get("message") or {}
        content = message.get("content")
        return content if isinstance(content, str) else ""

    def preflight(self) -> None:
        """One line instead of a retry loop when the server is down or does not serve the model."""
        from agentabstain_gym.agents import llm_client

        openai = llm_client._openai()
        where = self.caller.base_url or "the default OpenAI endpoint"
        client = openai.OpenAI(base_url=self.caller.base_url, api_key=self.caller.api_key,
                               timeout=min(5.0, self.caller.timeout), max_retries=0)
        try:
            served = [str(m.id) for m in client.models.list()]
        except openai.APIConnectionError as exc:
            raise GenError(f"cannot reach the server at {where}: {llm_client.describe_error(exc)}") from None
        except openai.APIStatusError as exc:
            if exc.status_code in (401, 403):
                raise GenError(f"the server at {where} refused the API key (HTTP {exc.status_code})") from None
            return  # no model listing: the server is up, the model is checked by the first request
        except Exception:  # noqa: BLE001 - an unparseable listing: the server answered
            return
        if served and self.model not in served:
            shown = ", ".join(served[:10]) + (" ..." if len(served) > 10 else "")
            raise GenError(f"model {self.model!r} is not served by {where}; it serves: {shown}")


class Audit:
    """The audit log of one run, and the way every model call goes (live models, or the replies of ``replay``)."""

    def __init__(self, path: Path, *, models: Mapping[str, LiveModel] | None = None,
                 replay: Path | None = None) -> None:
        self.path = path
        self.models = dict(models or {})
        self.replies: list[dict[str, Any]] = read_log(replay, "reply") if replay is not None else []
        self.replaying = replay is not None
        self.calls = 0
        self._fh: TextIO = open(path, "w", encoding="utf-8")  # noqa: SIM115 - closed by close()

    def close(self) -> None:
        self._fh.close()

    def write(self, event: str, **fields: Any) -> None:
        self._fh.write(json.dumps({"event": event, **fields}, sort_keys=True, ensure_ascii=False) + "\n")
        self._fh.flush()

    def ask(self, role: str, model: str, messages: list[dict[str, Any]], **context: Any) -> str:
        """The reply of ``role``'s model to ``messages`` (logged with ``context``, e.g. the proposal number)."""
        self.calls += 1
        digest = prompt_hash(messages)
        if self.replaying:
            if self.calls > len(self.replies):
                raise GenError(f"--replay: the log has {len(self.replies)} replies; this run asks for more (its "
                               "settings differ from the logged run's)")
            logged = self.replies[self.calls - 1]
            if logged.get("role") != role or logged.get("prompt_sha256") != digest:
                raise GenError(f"--replay: request {self.calls} ({role}) differs from the logged one "
                               f"({logged.get('role')}): the settings, the inputs or the package are not those of "
                               "the logged run")
            content = str(logged.get("content", ""))
        else:
            content = self.models[role].ask(messages)
        self.write("reply", call=self.calls, role=role, model=model, prompt_sha256=digest,
                   prompt=messages[-1]["content"], content=content, **context)
        return _THINK.sub("", content).strip()

    def verdict(self, gate: str, ok: bool, problems: list[str], **context: Any) -> None:
        self.write("verdict", gate=gate, ok=ok, problems=problems, **context)


def read_log(path: Path, event: str | None = None) -> list[dict[str, Any]]:
    """The entries of an audit log (of one ``event`` kind); :class:`GenError` when it cannot be read."""
    if not path.is_file():
        raise GenError(f"--replay: no such audit log: {path}")
    out = []
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, start=1):
            try:
                entry = json.loads(line)
            except ValueError:
                raise GenError(f"--replay: {path} line {n} is not JSON") from None
            if not isinstance(entry, dict):
                raise GenError(f"--replay: {path} line {n} is not an audit entry")
            if event is None or entry.get("event") == event:
                out.append(entry)
    return out


def logged_settings(path: Path) -> dict[str, Any]:
    """The settings of the run that wrote the log (its ``start`` entry)."""
    starts = read_log(path, "start")
    if not starts:
        raise GenError(f"--replay: {path} has no start entry; is it an audit log of abstain-gym gen?")
    return dict(starts[0].get("settings") or {})
