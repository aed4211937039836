"""The LLM agent: any OpenAI-compatible chat-completions server acting in any family, ABSTAIN included.

Each family's actions are offered as function-calling tools (``data/llm/tools.json``: QA search / answer /
abstain, web search / click / abstain, terminal run / submit / abstain; tool sandboxes: the sandbox's own schemas
from ``info["tools"]`` plus respond / abstain). For models without tool calling, ``use_tools=False`` asks for a
plain-text ``name[argument]`` action and parses it from the reply.

Decisions worth knowing:

* **One action per turn.** The first tool call of a reply is the action; any others get a tool message saying they
  were not run. A reply with no tool call is parsed as text.
* **Calls written in the text.** A server without a tool-call parser leaves calls in ``content``; Hermes
  ``<tool_call>`` tags, a fenced JSON block or a reply that is only a call object are read as the reply's tool calls
  (see :mod:`agentabstain_gym.agents.tool_call_parsing`; prose that merely shows JSON is not a call).
* **Strict schemas.** ``strict_tools=True`` (``$ABSTAIN_GYM_LLM_STRICT_TOOLS=1``, ``--llm-strict-tools``) sends
  OpenAI strict-mode schemas; a ``null`` optional argument is treated as left out.
* **A malformed reply costs the turn.** A reply that names no known action (or calls a tool with unusable
  arguments) is sent to the env as it is (``name(arguments)`` for a tool call), and the env answers "Invalid
  action...", as it would for any agent.
* **Budget.** Per episode at most ``max_requests`` requests (retries count), ``max_tokens`` tokens and
  ``max_episode_reply_chars`` characters of replies. Tokens are counted per request as the larger of what the server
  reports and the reply's length at four characters a token, so a server that under-reports (a 1 MB reply "costing"
  11 tokens) cannot run past the budget. Each reply is also cut to ``max_reply_chars`` characters (with a note in
  the message and ``truncated`` in the transcript entry) before it is kept or acted on, so one reply cannot bloat
  the record; lone surrogates in a reply become U+FFFD, so the conversation can always be sent again. When the
  budget is spent the agent **raises**
  :class:`BudgetExhausted` by default: the runner records the episode as an agent error, a failure on either side
  with the reason in ``extras["error"]``. Abstaining instead (``on_budget="abstain"``) is available but would credit
  a spent budget as a correct ABSTAIN on should-abstain tasks, inflating recall, so it is not the default.
* **Transcript.** ``agent.transcript`` lists every request of the episode: ``messages_upto`` (request i sent
  ``messages[:messages_upto]`` plus the tools), the errors of failed attempts and the response. With ``messages``
  it is returned by :meth:`episode_extras`, which the runner merges into ``record["extras"]["transcript"]``.
* **Playbook.** ``playbook`` (text, a :class:`Playbook` or a path to one) is appended to the system prompt.
"""

from __future__ import annotations

import argparse
import json
import os
import re
from importlib import resources
from pathlib import Path
from string import Template
from typing import Any

from agentabstain_gym.agents import llm_client
from agentabstain_gym.agents.llm_client import ChatCaller, LLMError, MalformedResponse, describe_error
from agentabstain_gym.agents.ratelimit import ENV_RPS, ENV_TPM, GatedChatCaller
from agentabstain_gym.agents.tool_call_parsing import content_tool_calls, parse_content_calls
from agentabstain_gym.core.actions import abstain, tool_call
from agentabstain_gym.core.base_env import valid_utf8

ENV_PLAYBOOK = "ABSTAIN_GYM_LLM_PLAYBOOK"
ENV_TOOLS = "ABSTAIN_GYM_LLM_TOOLS"
ENV_STRICT_TOOLS = "ABSTAIN_GYM_LLM_STRICT_TOOLS"
ENV_TIMEOUT = "ABSTAIN_GYM_LLM_TIMEOUT"
ENV_MAX_RETRIES = "ABSTAIN_GYM_LLM_MAX_RETRIES"
#: The preflight's own timeout: it only has to reach the server, so a dead URL fails within seconds.
PREFLIGHT_TIMEOUT = 5.0
BUDGET_MODES = ("raise", "abstain")
#: Defaults: a reply longer than any action needs is cut; an episode's replies together are bounded.
MAX_REPLY_CHARS = 32_000
MAX_EPISODE_REPLY_CHARS = 256_000
_CHARS_PER_TOKEN = 4
#: A kept reply holds at most this many items per list (choices, tool calls) and keys per object, this deep.
_MAX_ITEMS = 16
_MAX_DEPTH = 12
_NOT_RUN = "Not executed: one action per turn, and only the first tool call of a reply is run."


class BudgetExhausted(RuntimeError):
    """The episode's request or token budget is spent."""


def load_text(name: str) -> str:
    """A prompt or data file shipped in ``agentabstain_gym/data/llm``."""
    return resources.files("agentabstain_gym").joinpath("data", "llm", name).read_text(encoding="utf-8")


def family_table(family: str) -> dict[str, Any]:
    """The family's guide paragraph and tool definitions (raises ``KeyError`` naming the known families)."""
    table = json.loads(load_text("tools.json"))
    if family not in table or family.startswith("_"):
        raise KeyError(f"no LLM tools for family {family!r}; known: {', '.join(k for k in table if k[0] != '_')}")
    return dict(table[family])


def guess_family(info: dict[str, Any]) -> str:
    """A family from what an env shows when none was given: tools -> tool sandbox, clickables -> web, else QA."""
    if info.get("tools"):
        return "tools"
    return "web" if isinstance(info.get("available_actions"), dict) else "qa"


class Tool:
    """One action offered to the model: its function schema and how a call becomes an env action."""

    def __init__(self, name: str, description: str, parameters: dict[str, Any], action: str | None) -> None:
        self.name, self.description, self.parameters, self.action = name, description, parameters, action

    def schema(self) -> dict[str, Any]:
        """The tool as an OpenAI function-calling schema."""
        return {"type": "function", "function": {"name": self.name, "description": self.description,
                                                 "parameters": self.parameters}}

    @property
    def arg_names(self) -> list[str]:
        """The names of the tool's parameters, in schema order."""
        return list((self.parameters.get("properties") or {}).keys())

    def to_action(self, arguments: dict[str, Any]) -> str | None:
        """The env action for a call with ``arguments`` (None when a required argument is missing)."""
        if self.action is None:  # a sandbox tool: the env takes the call itself
            return tool_call(self.name, **arguments)
        required = self.parameters.get("required") or []
        if any(arguments.get(r) is None for r in required):  # null is an omitted argument (strict-mode schemas)
            return None
        out = self.action
        for name in self.arg_names:
            value = "" if arguments.get(name) is None else arguments[name]
            out = out.replace("{" + name + "}", value if isinstance(value, str) else json.dumps(value))
        return out


def _sandbox_tools(info: dict[str, Any]) -> list[Tool]:
    out = []
    for item in info.get("tools") or []:
        fn = item.get("function", item) if isinstance(item, dict) else None
        if isinstance(fn, dict) and isinstance(fn.get("name"), str):
            out.append(Tool(fn["name"], str(fn.get("description", "")),
                            fn.get("parameters") or {"type": "object", "properties": {}}, None))
    return out


class LLMAgent:
    """An OpenAI-compatible chat model as an agent of this suite (see the module docstring for the contract)."""

    def __init__(self, *, family: str | None = None, env_id: str | None = None, base_url: str | None = None,
                 model: str | None = None, api_key: str | None = None, use_tools: bool | None = None,
                 playbook: Any = None, max_requests: int = 40, max_tokens: int | None = 200_000,
                 max_reply_chars: int = MAX_REPLY_CHARS, max_episode_reply_chars: int | None = MAX_EPISODE_REPLY_CHARS,
                 on_budget: str = "raise", name: str = "llm", strict_tools: bool | None = None,
                 **client: Any) -> None:
        if on_budget not in BUDGET_MODES:
            raise ValueError(f"on_budget must be one of {BUDGET_MODES}, got {on_budget!r}")
        if max_reply_chars < 1 or (max_episode_reply_chars is not None and max_episode_reply_chars < 1):
            raise ValueError("max_reply_chars and max_episode_reply_chars must be positive")
        self.max_reply_chars, self.max_episode_reply_chars = max_reply_chars, max_episode_reply_chars
        if family is None and env_id is not None:
            from agentabstain_gym.agents import env_family

            family = env_family(env_id)
        self.family = family
        if family is not None:
            family_table(family)  # fail early on an unknown family
        if os.environ.get(ENV_TIMEOUT) and "timeout" not in client:
            client["timeout"] = float(os.environ[ENV_TIMEOUT])
        if os.environ.get(ENV_MAX_RETRIES) and "max_retries" not in client:
            client["max_retries"] = int(os.environ[ENV_MAX_RETRIES])
        # gated: requests of all episodes running in this process share rate limits and Retry-After pauses
        self.caller: ChatCaller = GatedChatCaller(base_url=base_url, model=model, api_key=api_key, **client)
        if use_tools is None:
            use_tools = os.environ.get(ENV_TOOLS, "1").strip().lower() not in ("0", "false", "no", "text")
        self.use_tools = use_tools
        if strict_tools is None:  # OpenAI strict-mode schemas: all properties required, optional ones nullable
            strict_tools = os.environ.get(ENV_STRICT_TOOLS, "0").strip().lower() in ("1", "true", "yes")
        self.strict_tools = strict_tools
        self.max_requests, self.max_tokens, self.on_budget = max_requests, max_tokens, on_budget
        self.name = name
        self.playbook_text: str | None = None
        self.set_playbook(playbook if playbook is not None else os.environ.get(ENV_PLAYBOOK) or None)
        self.reset()

    # ----- configuration --------------------------------------------------------------------------------------------
    def set_playbook(self, playbook: Any) -> None:
        """Use ``playbook`` (text, a Playbook, a path to a playbook JSON, or None) in the next episodes' prompts."""
        if playbook is None:
            self.playbook_text = None
            return
        if hasattr(playbook, "render"):
            self.playbook_text = playbook.render(self.family)
            return
        text = str(playbook)
        if os.path.isfile(text):  # a playbook JSON (or a plain-text file of lessons)
            from agentabstain_gym.agents.playbook import Playbook, PlaybookError

            try:
                text = Playbook.load(text).render(self.family)
            except PlaybookError:
                text = Path(text).read_text(encoding="utf-8")
        elif text.endswith(".json"):
            raise FileNotFoundError(f"no playbook file {text!r}")
        self.playbook_text = text.strip() or None

    # ----- the agent protocol ---------------------------------------------------------------------------------------
    def reset(self) -> None:
        """Forget the conversation, the tools and the episode's token count."""
        self.messages: list[dict[str, Any]] = []
        self.tools: list[Tool] = []
        self._pending: tuple[str, list[str]] = ("none", [])
        self._budget_exhausted = False
        self.tokens = 0  # the episode's tokens as budgeted: per request, max(reported, reply length / 4)
        self.reply_chars = 0  # characters of every reply received this episode, before any cut
        self.caller.reset_counters()

    @property
    def transcript(self) -> list[dict[str, Any]]:
        """One entry per request of the current episode (see the module docstring)."""
        return self.caller.calls

    def act(self, observation: str, info: dict[str, Any]) -> str:
        """Send the observation to the model and turn its reply (tool call or text) into one env action."""
        if not self.messages:
            self._start(observation, info)
        else:
            self._deliver(observation, info)
        reason = self._budget_spent()
        if reason is not None:
            self._budget_exhausted = True
            if self.on_budget == "raise":
                raise BudgetExhausted(reason)
            return abstain(f"LLM budget exhausted ({reason})")
        schemas = self.tool_schemas() if self.use_tools else None
        reported = self.caller.tokens
        try:
            response = self.caller.complete(self.messages, tools=schemas)
        except MalformedResponse as exc:  # the turn is spent, as for any unusable action
            kept = self.caller.calls[-1].get("response") if self.caller.calls else None
            chars = self._clip(kept) if isinstance(kept, dict) else 0
            self.reply_chars += chars
            self.tokens += max(self.caller.tokens - reported, -(-chars // _CHARS_PER_TOKEN))
            self.messages.append({"role": "assistant", "content": ""})
            self._pending = ("text", [])
            self.caller.calls[-1]["malformed"] = describe_error(exc)
            return ""
        chars = self._clip(response)
        self.reply_chars += chars
        self.tokens += max(self.caller.tokens - reported, -(-chars // _CHARS_PER_TOKEN))
        message = dict(response["choices"][0].get("message") or {})
        return self._take(message)

    def _clip(self, response: dict[str, Any]) -> int:
        """Cut the reply in place so the conversation and the transcript keep a bounded, sendable copy, note each cut
        in the transcript entry (``truncated``), and return how many characters the reply's strings had before cutting.

        Lone surrogates (which a server can send as ``\\ud800`` escapes) become U+FFFD: the conversation is sent back
        with the next request, which cannot be encoded otherwise.

        Every string is cut to ``max_reply_chars`` (with a note appended), every list to its first
        :data:`_MAX_ITEMS` items and every object to its first :data:`_MAX_ITEMS` keys; only the first choice's
        first tool call is ever acted on, so nothing an agent needs is lost.
        """
        cuts: list[dict[str, Any]] = []
        total = 0
        cap = self.max_reply_chars

        def clip(value: Any, where: str, depth: int) -> Any:
            nonlocal total
            if isinstance(value, str):
                total += len(value)
                value = valid_utf8(value)  # a lone surrogate would make every later request fail to encode
                if len(value) <= cap:
                    return value
                cuts.append({"where": where, "chars": len(value), "kept": cap})
                return value[:cap] + f"\n[... reply cut: {len(value) - cap} more characters]"
            if depth >= _MAX_DEPTH and isinstance(value, dict | list):
                cuts.append({"where": where, "nested_deeper_than": _MAX_DEPTH})
                return None
            if isinstance(value, list):
                if len(value) > _MAX_ITEMS:
                    cuts.append({"where": where, "items": len(value), "kept": _MAX_ITEMS})
                return [clip(v, f"{where}[{i}]", depth + 1) for i, v in enumerate(value[:_MAX_ITEMS])]
            if isinstance(value, dict):
                if len(value) > _MAX_ITEMS:
                    cuts.append({"where": where, "keys": len(value), "kept": _MAX_ITEMS})
                items = list(value.items())[:_MAX_ITEMS]
                return {clip(k, f"{where}.<key>", depth + 1) if isinstance(k, str) else k:
                        clip(v, f"{where}.{str(k)[:40]}", depth + 1) for k, v in items}
            return value

        clipped = {k: clip(v, str(k), 1) for k, v in response.items()}
        response.clear()
        response.update(clipped)
        if cuts and self.caller.calls:
            self.caller.calls[-1]["truncated"] = cuts
        return total

    def episode_extras(self) -> dict[str, Any]:
        """What the runner stores in ``record["extras"]``: the whole conversation and every request."""
        return {"transcript": {
            "model": self.caller.model, "tool_mode": self.use_tools, "messages": list(self.messages),
            "tools": self.tool_schemas() if self.use_tools else [], "calls": list(self.caller.calls),
            "usage": {"requests": self.caller.requests, "tokens": self.tokens},
            "reply_chars": self.reply_chars,
            "budget_exhausted": self._budget_exhausted, "playbook": self.playbook_text is not None}}

    def tool_schemas(self) -> list[dict[str, Any]]:
        """The schemas sent with each request (strict-mode forms with ``strict_tools``)."""
        from agentabstain_gym.envs.tools.schemas import strict_schema

        return [strict_schema(t.schema()) if self.strict_tools else t.schema() for t in self.tools]

    # ----- conversation -------------------------------------------------------------------------------------------
    def _start(self, observation: str, info: dict[str, Any]) -> None:
        family = self.family or guess_family(info)
        self.family = family
        table = family_table(family)
        builtin = [Tool(t["name"], t["description"], t["parameters"], t["action"]) for t in table["tools"]]
        names = {t.name for t in builtin}
        self.tools = [t for t in _sandbox_tools(info) if t.name not in names] + builtin
        self.messages = [{"role": "system", "content": self.system_prompt(table["guide"], info)},
                         {"role": "user", "content": self._observation_text(observation, info, first=True)}]

    def system_prompt(self, guide: str, info: dict[str, Any]) -> str:
        """The system prompt for this family: the shipped template with the family guide, the action help and
        the turn budget.
        """
        if self.use_tools:
            help_text = load_text("action_help_tools.md").strip()
        else:
            lines = []
            for t in self.tools:
                if t.action is None:
                    lines.append(f'- {{"tool": "{t.name}", "arguments": {{...}}}}: {t.description} '
                                 f"Parameters: {json.dumps(t.parameters, sort_keys=True)}")
                else:
                    arg = t.arg_names[0] if t.arg_names else ""
                    lines.append(f"- {t.name}[{arg}]: {t.description}")
            help_text = Template(load_text("action_help_text.md")).safe_substitute(actions="\n".join(lines)).strip()
        prompt = Template(load_text("system.md")).safe_substitute(
            max_turns=info.get("max_turns", "?"), guide=guide, action_help=help_text).strip()
        if self.playbook_text:
            prompt += "\n\n" + Template(load_text("playbook.md")).safe_substitute(playbook=self.playbook_text).strip()
        return prompt

    @staticmethod
    def _observation_text(observation: str, info: dict[str, Any], *, first: bool = False) -> str:
        text = observation
        instruction = str(info.get("instruction") or "")
        if first and instruction and instruction not in observation:
            text = f"Instruction: {instruction}\n\n{observation}"
        available = info.get("available_actions")
        if isinstance(available, dict) and available.get("clickables"):
            text += "\n\nClickable: " + ", ".join(map(str, available["clickables"]))
        return text

    def _deliver(self, observation: str, info: dict[str, Any]) -> None:
        kind, ids = self._pending
        text = self._observation_text(observation, info)
        if kind == "tool" and ids:
            self.messages.append({"role": "tool", "tool_call_id": ids[0], "content": text})
            self.messages.extend({"role": "tool", "tool_call_id": i, "content": _NOT_RUN} for i in ids[1:])
        else:
            self.messages.append({"role": "user", "content": text})

    def _budget_spent(self) -> str | None:
        if self.caller.requests >= self.max_requests:
            return f"{self.caller.requests} requests of {self.max_requests}"
        if self.max_tokens is not None and self.tokens >= self.max_tokens:
            return f"{self.tokens} tokens of {self.max_tokens}"
        if self.max_episode_reply_chars is not None and self.reply_chars >= self.max_episode_reply_chars:
            return f"{self.reply_chars} reply characters of {self.max_episode_reply_chars}"
        return None

    def _take(self, message: dict[str, Any]) -> str:
        """Record the assistant message and turn it into one env action."""
        content = message.get("content")
        content = content if isinstance(content, str) else ""
        calls = [c for c in message.get("tool_calls") or [] if isinstance(c, dict)]
        if not calls and self.use_tools and content:  # a server without a tool parser: calls written in the text
            calls, content = content_tool_calls(content, [t.name for t in self.tools])
            if calls and self.caller.calls:
                self.caller.calls[-1]["content_tool_calls"] = len(calls)
        kept: dict[str, Any] = {"role": "assistant", "content": content}
        if calls:
            kept["tool_calls"] = [{"id": str(c.get("id") or f"call_{i}"), "type": "function",
                                   "function": {"name": str((c.get("function") or {}).get("name", "")),
                                                "arguments": str((c.get("function") or {}).get("arguments") or "")}}
                                  for i, c in enumerate(calls)]
        self.messages.append(kept)
        if calls:
            self._pending = ("tool", [c["id"] for c in kept["tool_calls"]])
            fn = kept["tool_calls"][0]["function"]
            return self._call_action(fn["name"], fn["arguments"])
        self._pending = ("text", [])
        return self.parse_text(kept["content"])

    def _tool(self, name: str) -> Tool | None:
        for t in self.tools:
            if t.name == name:
                return t
        return None

    def _call_action(self, name: str, raw: str) -> str:
        tool = self._tool(name)
        try:
            arguments = json.loads(raw) if raw.strip() else {}
        except (ValueError, RecursionError):
            arguments = None
        action = tool.to_action(arguments) if tool is not None and isinstance(arguments, dict) else None
        return action if action is not None else f"{name}({raw})"  # malformed: sent as is, costs the turn

    def parse_text(self, text: str) -> str:
        """The action in a plain-text reply: the last ``name[argument]`` of a known action, else a tool-call JSON
        object, else the reply unchanged (the env will call it invalid)."""
        names = [t.name for t in self.tools if t.action is not None]
        if names:
            starts = list(re.finditer(r"(?<![A-Za-z0-9_])(" + "|".join(map(re.escape, names)) + r")\[", text))
            for m in reversed(starts):
                end = text.rfind("]")
                if end > m.end() - 1:
                    tool = self._tool(m.group(1))
                    assert tool is not None
                    arg = text[m.end():end]
                    args = {tool.arg_names[0]: arg} if tool.arg_names else {}
                    action = tool.to_action(args)
                    if action is not None:
                        return action
        m = re.search(r"\{.*\}", text, re.DOTALL)
        if m and any(t.action is None for t in self.tools):
            try:
                data = json.loads(m.group(0))
                if isinstance(data, dict) and isinstance(data.get("tool"), str):
                    return m.group(0)
            except (ValueError, RecursionError):
                pass
        found, _rest = parse_content_calls(text, [t.name for t in self.tools])
        if found:  # a tool-call shape (Hermes tags, fenced or bare JSON) from a model used without tools
            return self._call_action(found[0][0], json.dumps(found[0][1]))
        return text.strip()


def add_llm_arguments(parser: Any) -> None:
    """``--base-url``, ``--model``, ``--api-key``, ``--llm-text``, ``--playbook``: the options of ``--agent llm``."""
    parser.add_argument("--base-url", default=None, help="OpenAI-compatible server, e.g. http://localhost:8000/v1 "
                        "(default $ABSTAIN_GYM_LLM_BASE_URL)")
    parser.add_argument("--model", default=None, help="model name (default $ABSTAIN_GYM_LLM_MODEL)")
    parser.add_argument("--api-key", default=None, help="API key (default $ABSTAIN_GYM_LLM_API_KEY, $OPENAI_API_KEY)")
    parser.add_argument("--llm-text", action="store_true",
                        help="plain-text name[argument] actions instead of tool calls (models without tools)")
    parser.add_argument("--playbook", default=None, help="a playbook JSON appended to the LLM's system prompt")
    parser.add_argument("--llm-strict-tools", action="store_true",
                        help="send OpenAI strict-mode tool schemas (optional arguments required but nullable)")
    parser.add_argument("--llm-rps", type=_positive_float, default=None,
                        help="at most this many LLM requests per second, shared by all running episodes (default off)")
    parser.add_argument("--llm-tpm", type=_positive_float, default=None,
                        help="at most this many LLM tokens per minute, shared by all running episodes (default off)")
    parser.add_argument("--llm-timeout", type=_positive_float, default=None,
                        help="seconds before one LLM request times out (default 60)")
    parser.add_argument("--llm-max-retries", type=_nonnegative_int, default=None,
                        help="retries of a transient LLM error (429, 5xx, timeout) per request (default 4)")


def _positive_float(text: str) -> float:
    """argparse ``type=``: a rate or timeout, which must be > 0, so a typo fails at once with one line."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number, not {text}")
    return value


def _nonnegative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {value}")
    return value


def preflight_llm(timeout: float = PREFLIGHT_TIMEOUT) -> None:
    """Raise :class:`LLMError` with one line when the configured server cannot be reached or does not serve the
    model; called once before any episode, so a wrong URL or model costs seconds instead of every episode's retry
    loop. It lists the server's models (``GET /models``, no retries); a server without that route is accepted once
    it answers at all, since checking the model then would cost a completion.
    """
    caller = ChatCaller()
    openai = llm_client._openai()
    where = caller.base_url or "the default OpenAI endpoint"
    client = openai.OpenAI(base_url=caller.base_url, api_key=caller.api_key,
                           timeout=min(timeout, caller.timeout), max_retries=0)
    try:
        served = [str(m.id) for m in client.models.list()]
    except openai.APIConnectionError as exc:  # refused, DNS, timeout
        raise LLMError(f"cannot reach the LLM server at {where}: {describe_error(exc)}") from None
    except openai.APIStatusError as exc:
        if exc.status_code in (401, 403):
            raise LLMError(f"the LLM server at {where} refused the API key (HTTP {exc.status_code})") from None
        return  # no model listing (404, 405, 501...): the server is up, which is all that can be checked cheaply
    except Exception as exc:  # noqa: BLE001 - an unparseable listing: the server is up, the model unchecked
        del exc
        return
    if served and caller.model not in served:
        shown = ", ".join(served[:10]) + (" ..." if len(served) > 10 else "")
        raise LLMError(f"model {caller.model!r} is not served by {where}; it serves: {shown}")


def check_llm_config() -> None:
    """Raise ``ValueError`` (with what to set) when ``--agent llm`` could not be built from the environment, so a
    CLI can refuse before starting workers."""
    LLMAgent(family="qa")


def apply_llm_arguments(args: Any) -> None:
    """Put the LLM options into the environment, where ``make_agent("llm", ...)`` reads them in every worker."""
    from agentabstain_gym.agents.llm_client import ENV_API_KEY, ENV_BASE_URL, ENV_MODEL

    for value, var in ((getattr(args, "base_url", None), ENV_BASE_URL), (getattr(args, "model", None), ENV_MODEL),
                       (getattr(args, "api_key", None), ENV_API_KEY), (getattr(args, "playbook", None), ENV_PLAYBOOK)):
        if value:
            os.environ[var] = str(value)
    if getattr(args, "llm_text", False):
        os.environ[ENV_TOOLS] = "0"
    if getattr(args, "llm_strict_tools", False):
        os.environ[ENV_STRICT_TOOLS] = "1"
    # limits are per process: with --workers W each process gets 1/W of them, so the run's total stays as asked
    workers = max(1, int(getattr(args, "workers", 1) or 1))
    for value, var in ((getattr(args, "llm_rps", None), ENV_RPS), (getattr(args, "llm_tpm", None), ENV_TPM)):
        if value is not None:
            os.environ[var] = repr(float(value) / workers)
    for value, var in ((getattr(args, "llm_timeout", None), ENV_TIMEOUT),
                       (getattr(args, "llm_max_retries", None), ENV_MAX_RETRIES)):
        if value is not None:
            os.environ[var] = str(value)


__all__ = ["BudgetExhausted", "LLMAgent", "LLMError", "add_llm_arguments", "apply_llm_arguments",
           "check_llm_config", "family_table", "guess_family", "preflight_llm"]
