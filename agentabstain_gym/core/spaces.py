"""Text spaces for real observations and actions: any printable Unicode, plus newline and tab.

Gymnasium's :class:`~gymnasium.spaces.Text` holds a finite charset (letters and digits by default) and builds a
tuple and an index of it per space; every printable code point would cost megabytes per env. :class:`PrintableText`
keeps a small charset for ``sample()`` and the shared-memory codec, and accepts any printable text in ``contains``.
Everything an env shows goes through :func:`printable`, which removes control and other unprintable characters
(lone surrogates included, which cannot be written as UTF-8), so observations always belong to the space while
``café ✓`` or ``日本語`` reach the agent as they are.
"""

from __future__ import annotations

import string
import unicodedata
from typing import Any

from gymnasium import spaces

#: What ``sample()`` draws from: printable ASCII (with newline and tab) and a few typographic characters.
SAMPLE_CHARSET = (frozenset(string.printable) - frozenset("\r\x0b\x0c")) | frozenset("£€°±×·–—‘’“”…")
#: Kept for code that imported it: the sampling charset (``contains`` accepts any printable text).
CHARSET = SAMPLE_CHARSET
OBSERVATION_MAX_CHARS = 65_536
ACTION_MAX_CHARS = 65_536
_WHITESPACE = str.maketrans({"\n": " ", "\t": " "})


def is_printable(text: str) -> bool:
    """True when every character is printable (``str.isprintable``) or a newline or tab."""
    return text.isprintable() or text.translate(_WHITESPACE).isprintable()


def _printable_char(c: str) -> str:
    if c.isprintable() or c in "\n\t":
        return c
    if c.isspace():  # no-break and other Unicode spaces, vertical tab, form feed, line and paragraph separators
        return "\n" if c in "\u2028\u2029\x85" else " "
    if unicodedata.category(c) == "Cf":  # invisible format characters (bidi overrides, zero-width joiners): dropped
        return ""
    return "?"  # other controls, lone surrogates, private use, unassigned


class PrintableText(spaces.Text):
    """A :class:`~gymnasium.spaces.Text` whose members are printable Unicode strings (newline and tab allowed)."""

    def __init__(self, max_length: int, *, min_length: int = 0, seed: Any = None) -> None:
        super().__init__(max_length=max_length, min_length=min_length, charset=SAMPLE_CHARSET, seed=seed)

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length and is_printable(x)

    def __repr__(self) -> str:
        return f"PrintableText({self.min_length}, {self.max_length})"

    def __eq__(self, other: Any) -> bool:
        return (isinstance(other, PrintableText) and self.min_length == other.min_length
                and self.max_length == other.max_length)

    __hash__ = None  # type: ignore[assignment]  # as gymnasium's spaces: mutable, compared by value


def text_space(max_length: int) -> PrintableText:
    return PrintableText(max_length)


def printable(text: str, max_chars: int = OBSERVATION_MAX_CHARS) -> str:
    """``text`` with unprintable characters replaced (spaces for Unicode spaces, ``?`` otherwise), cut to
    ``max_chars`` with a note saying how much was cut."""
    if not is_printable(text):
        text = "".join(map(_printable_char, text.replace("\r\n", "\n")))
    if len(text) > max_chars:
        note = f"\n[... output cut: {len(text) - max_chars} more characters]"
        text = text[: max_chars - len(note)] + note
    return text
