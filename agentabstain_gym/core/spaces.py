"""Text spaces with a charset wide enough for real observations and actions.

Gymnasium's default :class:`~gymnasium.spaces.Text` charset is letters and digits only, so a space or a bracket makes
an observation fall outside its space and ``check_env`` fails. Everything an env shows goes through
:func:`printable`, which maps characters outside the charset to ``?``, so observations always belong to the space.
"""

from __future__ import annotations

import re
import string

from gymnasium import spaces

#: Printable ASCII plus newline and tab, and a few typographic characters our own texts use.
CHARSET = frozenset(string.printable) | frozenset("£€°±×·–—‘’“”…")
OBSERVATION_MAX_CHARS = 65_536
ACTION_MAX_CHARS = 65_536


_OUTSIDE = re.compile("[^" + "".join(re.escape(c) for c in sorted(CHARSET)) + "]")


def text_space(max_length: int) -> spaces.Text:
    """A ``Text`` space over the suite's printable charset (Gymnasium's default charset fails ``check_env``).
    """
    return spaces.Text(max_length=max_length, min_length=0, charset=CHARSET)


def printable(text: str, max_chars: int = OBSERVATION_MAX_CHARS) -> str:
    """``text`` restricted to :data:`CHARSET` and ``max_chars`` (with a note when cut)."""
    text = _OUTSIDE.sub("?", text)
    if len(text) > max_chars:
        note = f"\n[... output cut: {len(text) - max_chars} more characters]"
        text = text[: max_chars - len(note)] + note
    return text
