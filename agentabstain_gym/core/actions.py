"""The action grammar shared by every family: ``verb[argument]``, ``abstain[reason]`` and tool-call JSON.

Parsing never raises: a malformed action becomes an :class:`ActionError` whose message tells the agent what is
accepted, because a turn spent on a typo should teach, not crash.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

ABSTAIN_VERB = "abstain"
#: The explicit ABSTAIN action with no reason.
ABSTAIN = "abstain[]"
#: Longest action text we parse; longer input is rejected with an explanation rather than processed.
MAX_ACTION_CHARS = 65_536
_VERB_FORM = re.compile(r"\A\s*([A-Za-z_][A-Za-z0-9_ ]{0,40}?)\s*\[(.*)\]\s*\Z", re.DOTALL)


def abstain(reason: str = "") -> str:
    """The ABSTAIN action with an optional reason (brackets in the reason are kept balanced by replacement)."""
    return f"abstain[{_clean_argument(reason)}]"


def tool_call(name: str, /, **arguments: Any) -> str:
    """A tool-sandbox action: ``{"tool": name, "arguments": {...}}`` as one JSON string."""
    return json.dumps({"tool": name, "arguments": arguments}, sort_keys=True)


def _clean_argument(text: str) -> str:
    return text.replace("[", "(").replace("]", ")")


@dataclass(frozen=True)
class Action:
    """A parsed action: ``verb`` in lower case and its raw ``argument`` (for tool calls, ``tool`` and ``arguments``)."""

    verb: str
    argument: str = ""
    arguments: dict[str, Any] | None = None


@dataclass(frozen=True)
class ActionError:
    """Why an action could not be parsed, written for the agent to read."""

    message: str


def describe(verbs: Iterable[str]) -> str:
    return ", ".join(f"{v}[...]" for v in verbs)


def parse_action(text: object, verbs: Iterable[str], *, allow_tool_calls: bool = False) -> Action | ActionError:
    """Parse ``text`` against the family's ``verbs`` (``abstain`` is always accepted).

    The argument runs from the first ``[`` to the last ``]``, so brackets inside a query are kept.
    """
    verbs = tuple(verbs)
    accepted = describe(verbs + (ABSTAIN_VERB,)) + (", or a tool call as JSON" if allow_tool_calls else "")
    if not isinstance(text, str):
        return ActionError(f"Invalid action: expected a string, got {type(text).__name__}. Accepted: {accepted}.")
    if len(text) > MAX_ACTION_CHARS:
        return ActionError(
            f"Invalid action: {len(text)} characters is longer than the limit of {MAX_ACTION_CHARS}. Accepted: {accepted}."
        )
    stripped = text.strip()
    if not stripped:
        return ActionError(f"Invalid action: the action is empty. Accepted: {accepted}.")
    if allow_tool_calls and stripped.startswith("{"):
        return _parse_tool_call(stripped, accepted)
    match = _VERB_FORM.match(text)
    if not match:
        return ActionError(f"Invalid action: {preview(text)} is not of the form verb[argument]. Accepted: {accepted}.")
    verb = match.group(1).strip().lower()
    if verb != ABSTAIN_VERB and verb not in verbs:
        return ActionError(f"Invalid action: unknown verb {verb!r}. Accepted: {accepted}.")
    return Action(verb=verb, argument=match.group(2))


def _parse_tool_call(text: str, accepted: str) -> Action | ActionError:
    try:
        data = json.loads(text)
    except ValueError as exc:
        return ActionError(f"Invalid action: the tool call is not valid JSON ({exc.msg} at char {exc.pos}). "
                           f"Accepted: {accepted}.")
    if not isinstance(data, dict) or not isinstance(data.get("tool"), str):
        return ActionError('Invalid action: a tool call is {"tool": "<name>", "arguments": {...}}.')
    arguments = data.get("arguments", {})
    if not isinstance(arguments, dict):
        return ActionError('Invalid action: "arguments" must be a JSON object.')
    return Action(verb="tool", argument=data["tool"], arguments=arguments)


def preview(text: str, limit: int = 80) -> str:
    """A short, printable, quoted rendering of agent text for error messages."""
    shown = "".join(c if c.isprintable() else "?" for c in text[:limit])
    return repr(shown + ("..." if len(text) > limit else ""))
