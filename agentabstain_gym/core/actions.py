"""The action grammar shared by every family: ``verb[argument]``, ``abstain[reason]`` and tool-call JSON.

Parsing never raises: a malformed action becomes an :class:`ActionError` whose message tells the agent what is
accepted, because a turn spent on a typo should teach, not crash. Limits are checked before any work that could
blow up on hostile text: length, NUL characters and lone surrogates (which no UTF-8 record can hold), JSON nesting
depth (checked by one linear scan before ``json.loads``, whose recursion a 10,000-deep ``[[[...`` would exhaust),
integer size (Python refuses to convert integers of more than 4,300 digits) and non-finite numbers (``NaN``,
``Infinity``, ``1e999``), which strict JSON cannot represent.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

ABSTAIN_VERB = "abstain"
#: The explicit ABSTAIN action with no reason.
ABSTAIN = "abstain[]"
#: Longest action text we parse; longer input is rejected with an explanation rather than processed.
MAX_ACTION_CHARS = 65_536
#: Deepest nesting of JSON arrays and objects accepted in a tool call (the outer object is level 1).
MAX_JSON_DEPTH = 64
#: Longest JSON integer (in digits, sign excluded) accepted in a tool call.
MAX_INT_DIGITS = 100
_VERB_FORM = re.compile(r"\A\s*([A-Za-z_][A-Za-z0-9_ ]{0,40}?)\s*\[(.*)\]\s*\Z", re.DOTALL)


def abstain(reason: str = "") -> str:
    """The ABSTAIN action with an optional reason (brackets in the reason are kept balanced by replacement).

    Examples:
        >>> abstain()
        'abstain[]'
        >>> abstain("no [such] item")
        'abstain[no (such) item]'
    """
    return f"abstain[{_clean_argument(reason)}]"


def tool_call(name: str, /, **arguments: Any) -> str:
    """A tool-sandbox action: ``{"tool": name, "arguments": {...}}`` as one JSON string.

    Examples:
        >>> tool_call("get_order", order_id="A1")
        '{"arguments": {"order_id": "A1"}, "tool": "get_order"}'
    """
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
    """The accepted actions as shown to an agent in error messages: ``search[...], click[...]``."""
    return ", ".join(f"{v}[...]" for v in verbs)


def _lone_surrogate(text: str) -> int | None:
    """Where ``text`` holds a lone surrogate (a code point no UTF-8 text can hold), or None."""
    if text.isascii():
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return exc.start
    return None


def text_problem(text: str) -> str | None:
    """Why ``text`` cannot be an action at all (a NUL character, or a lone surrogate that no UTF-8 record or shell
    can hold), or None. Every family checks this before parsing, so such text costs a turn instead of a crash."""
    nul = text.find("\x00")
    if nul >= 0:
        return f"the action contains a NUL character (at character {nul}); send text without NUL characters"
    at = _lone_surrogate(text)
    if at is not None:
        return (f"the action contains a lone surrogate (U+{ord(text[at]):04X} at character {at}), which is not "
                "valid Unicode text; send UTF-8 text")
    return None


def parse_action(text: object, verbs: Iterable[str], *, allow_tool_calls: bool = False) -> Action | ActionError:
    """Parse ``text`` against the family's ``verbs`` (``abstain`` is always accepted).

    The argument runs from the first ``[`` to the last ``]``, so brackets inside a query are kept.

    Examples:
        >>> parse_action("search[red shoes]", ("search", "click"))
        Action(verb='search', argument='red shoes', arguments=None)
        >>> parse_action("abstain[too vague]", ("search",)).verb
        'abstain'
        >>> parse_action("buy[x]", ("search", "click")).message
        "Invalid action: unknown verb 'buy'. Accepted: search[...], click[...], abstain[...]."
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
        problem = text_problem(text)
        if problem is not None:
            return ActionError(f"Invalid action: {problem}. Accepted: {accepted}.")
        return _parse_tool_call(stripped, accepted)
    match = _VERB_FORM.match(text)
    if not match:
        return ActionError(f"Invalid action: {preview(text)} is not of the form verb[argument]. Accepted: {accepted}.")
    verb = match.group(1).strip().lower()
    if verb != ABSTAIN_VERB and verb not in verbs:
        return ActionError(f"Invalid action: unknown verb {verb!r}. Accepted: {accepted}.")
    problem = text_problem(text)  # a well-formed action whose text no record or search can hold
    if problem is not None:
        return ActionError(f"Invalid action: {problem}. Accepted: {accepted}.")
    return Action(verb=verb, argument=match.group(2))


class _Unaccepted(ValueError):
    """A JSON value the parser refuses (raised from ``json.loads`` hooks; the text says what and why)."""


def _bounded_int(digits: str) -> int:
    if len(digits) - digits.startswith("-") > MAX_INT_DIGITS:
        raise _Unaccepted(f"has an integer of {len(digits) - digits.startswith('-')} digits; integers of at most "
                          f"{MAX_INT_DIGITS} digits are accepted")
    return int(digits)


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise _Unaccepted(f"has a number too large to represent ({preview(text, 20)}); numbers must be finite")
    return value


def _no_constant(name: str) -> Any:
    raise _Unaccepted(f"uses {name}, which is not valid JSON; numbers must be finite")


_JSON_TOKEN = re.compile(r'\\.|["\[\]{}]', re.DOTALL)


def json_too_deep(text: str, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether JSON ``text`` nests ``[``/``{`` more than ``limit`` levels (outside strings), by one linear scan.

    Run before ``json.loads``, whose recursive parser exhausts the stack on thousands of levels. Text with at most
    ``limit`` brackets cannot be too deep, so ordinary tool calls are not scanned at all.
    """
    if text.count("[") + text.count("{") <= limit:
        return False
    depth = 0
    in_string = False
    for match in _JSON_TOKEN.finditer(text):
        token = match.group()
        if token == '"':
            in_string = not in_string
        elif in_string or len(token) == 2:  # inside a string, or an escape
            continue
        elif token in "[{":
            depth += 1
            if depth > limit:
                return True
        else:
            depth = max(0, depth - 1)
    return False


def _bad_string(value: Any) -> bool:
    """Whether any string (or key) of a parsed JSON value holds a lone surrogate (from an escape like ``\\ud800``)."""
    if isinstance(value, str):
        return _lone_surrogate(value) is not None
    if isinstance(value, list):
        return any(_bad_string(v) for v in value)
    if isinstance(value, dict):
        return any(_bad_string(k) or _bad_string(v) for k, v in value.items())
    return False


def _parse_tool_call(text: str, accepted: str) -> Action | ActionError:
    if json_too_deep(text):
        return ActionError(f"Invalid action: the tool call nests arrays or objects more than {MAX_JSON_DEPTH} levels "
                           f"deep. Accepted: {accepted}.")
    try:
        data = json.loads(text, parse_int=_bounded_int, parse_float=_finite_float, parse_constant=_no_constant)
    except _Unaccepted as exc:
        return ActionError(f"Invalid action: the tool call {exc}. Accepted: {accepted}.")
    except json.JSONDecodeError as exc:
        return ActionError(f"Invalid action: the tool call is not valid JSON ({exc.msg} at char {exc.pos}). "
                           f"Accepted: {accepted}.")
    except (ValueError, RecursionError) as exc:  # belt and braces: any other refusal of the parser
        return ActionError(f"Invalid action: the tool call is not valid JSON ({type(exc).__name__}). "
                           f"Accepted: {accepted}.")
    if _bad_string(data):
        return ActionError("Invalid action: the tool call contains a lone surrogate escape (such as \\ud800), which "
                           f"is not valid Unicode text. Accepted: {accepted}.")
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
