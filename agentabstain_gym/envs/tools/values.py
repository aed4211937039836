"""Typed values of sandbox fields and tool parameters: checking and normalising what agents send.

Dates and times are local, timezone-free ISO strings (``2025-03-13``, ``2025-03-13T15:30``), normalised so that
string order is time order and agents' harmless variants (``15:30:00``, a space for ``T``, a trailing ``Z``) match.
Every check returns a message instead of raising, because the message goes back to the agent.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

SCALAR_TYPES = ("string", "integer", "number", "boolean", "date", "datetime")
FIELD_TYPES = (*SCALAR_TYPES, "array", "object")
PARAM_TYPES = (*SCALAR_TYPES, "array")
#: JSON Schema type and format shown to agents for each of our types.
JSON_TYPES: dict[str, tuple[str, str | None]] = {
    "string": ("string", None), "integer": ("integer", None), "number": ("number", None),
    "boolean": ("boolean", None), "date": ("string", "date"), "datetime": ("string", "date-time"),
    "array": ("array", None), "object": ("object", None),
}
EXAMPLES = {"date": "2025-03-13", "datetime": "2025-03-13T15:30"}


class Invalid(ValueError):
    """A value that does not fit its declared type; the message is written for the agent."""


def normalize_date(value: str) -> str:
    """An ISO date as ``YYYY-MM-DD``; anything else is :class:`Invalid` with an example."""
    try:
        return dt.date.fromisoformat(value.strip()).isoformat()
    except ValueError:
        raise Invalid(f"expected a date like {EXAMPLES['date']}, got {_short(value)}") from None


def normalize_datetime(value: str) -> str:
    """A local date and time as ``YYYY-MM-DDTHH:MM[:SS]`` (a time zone is dropped); else :class:`Invalid`."""
    text = value.strip().replace(" ", "T", 1)
    if text.endswith(("Z", "z")):
        text = text[:-1]
    try:
        moment = dt.datetime.fromisoformat(text)
    except ValueError:
        raise Invalid(f"expected a local date and time like {EXAMPLES['datetime']}, got {_short(value)}") from None
    if moment.tzinfo is not None:
        moment = moment.replace(tzinfo=None)
    return moment.strftime("%Y-%m-%dT%H:%M:%S" if moment.second else "%Y-%m-%dT%H:%M")


def _short(value: Any, limit: int = 60) -> str:
    """``repr(value)`` cut to ``limit``; never raises (Python refuses to print integers of 4,300+ digits and
    recursion-deep containers), because the text goes into a message for the agent."""
    try:
        text = repr(value)
    except (ValueError, RecursionError):
        text = (f"<an integer of about {int(value.bit_length() * 0.30103) + 1} digits>" if isinstance(value, int)
                else f"<{type(value).__name__} too large to show>")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def coerce(kind: str, value: Any, *, items: str | None = None, enum: tuple[Any, ...] | None = None,
           max_length: int | None = None, max_items: int | None = None, minimum: float | None = None,
           maximum: float | None = None) -> Any:
    """``value`` checked against ``kind`` (and its limits) and normalised; raises :class:`Invalid` with a message."""
    if kind == "string":
        if not isinstance(value, str):
            raise Invalid(f"expected a string, got {_type_name(value)}")
        if max_length is not None and len(value) > max_length:
            raise Invalid(f"is {len(value)} characters long; the limit is {max_length}")
        out: Any = value
    elif kind == "integer":
        if isinstance(value, bool) or not isinstance(value, int):
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            else:
                raise Invalid(f"expected an integer, got {_type_name(value)}")
        out = value
    elif kind == "number":
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise Invalid(f"expected a number, got {_type_name(value)}")
        if value != value or value in (float("inf"), float("-inf")):
            raise Invalid("expected a finite number")
        out = value
    elif kind == "boolean":
        if not isinstance(value, bool):
            raise Invalid(f"expected true or false, got {_type_name(value)}")
        out = value
    elif kind in ("date", "datetime"):
        if not isinstance(value, str) or len(value) > 40:
            raise Invalid(f"expected a {kind} string like {EXAMPLES[kind]}, got {_type_name(value)}")
        out = normalize_date(value) if kind == "date" else normalize_datetime(value)
    elif kind == "array":
        if not isinstance(value, list):
            raise Invalid(f"expected a list, got {_type_name(value)}")
        if max_items is not None and len(value) > max_items:
            raise Invalid(f"has {len(value)} items; the limit is {max_items}")
        inner = items or "string"
        converted = []
        for i, item in enumerate(value):
            try:
                converted.append(coerce(inner, item, max_length=max_length))
            except Invalid as exc:
                raise Invalid(f"item {i}: {exc}") from None
        out = converted
    elif kind == "object":
        if not isinstance(value, dict):
            raise Invalid(f"expected an object, got {_type_name(value)}")
        out = value
    else:
        raise Invalid(f"unknown type {kind!r}")
    if enum is not None and kind != "array" and out not in enum:
        raise Invalid(f"must be one of {', '.join(repr(e) for e in enum)}; got {_short(out)}")
    if enum is not None and kind == "array":
        bad = [x for x in out if x not in enum]
        if bad:
            raise Invalid(f"items must be among {', '.join(repr(e) for e in enum)}; got {_short(bad[0])}")
    if minimum is not None and isinstance(out, int | float) and out < minimum:
        raise Invalid(f"must be at least {minimum}; got {out}")
    if maximum is not None and isinstance(out, int | float) and out > maximum:
        raise Invalid(f"must be at most {maximum}; got {out}")
    return out


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "a list",
            dict: "an object"}.get(type(value), type(value).__name__)


def add_minutes(moment: str, minutes: int) -> str:
    """A normalised datetime ``minutes`` after ``moment``."""
    base = dt.datetime.fromisoformat(moment)
    return (base + dt.timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M")


def minutes_between(start: str, end: str) -> int:
    """Whole minutes from ``start`` to ``end`` (ISO date-times)."""
    return int((dt.datetime.fromisoformat(end) - dt.datetime.fromisoformat(start)).total_seconds() // 60)


def weekday(moment: str) -> str:
    """The weekday name of an ISO date or date-time."""
    return dt.date.fromisoformat(moment[:10]).strftime("%A")
