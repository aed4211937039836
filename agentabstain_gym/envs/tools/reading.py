"""Reading a user's request: dates, times, durations, names, quoted text (for the heuristic tool agent).

Plain regular expressions over English requests; no model, no randomness. Dates are resolved against the "Now:"
line every AbstainTools episode starts with.
"""

from __future__ import annotations

import datetime as dt
import re

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")
_NOW = re.compile(r"Now: \w+ (\d{1,2}) (\w+) (\d{4}), (\d{2}):(\d{2})")
_TIME = re.compile(r"\b(?:at |to |from |by )?(\d{1,2})(?::(\d{2}))?\s*(am|pm)\b|\b(\d{1,2}):(\d{2})\b|\b(noon|midday)\b",
                   re.IGNORECASE)
_WINDOW = re.compile(r"\bbetween (\d{1,2})(?::(\d{2}))?\s*(am|pm)? and (\d{1,2})(?::(\d{2}))?\s*(am|pm)\b",
                     re.IGNORECASE)
_DURATION = re.compile(r"\b(\d+)[- ]?(minute|min|hour|hr)s?\b", re.IGNORECASE)
EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
HANDLE = re.compile(r"(?<![\w.])@([a-z0-9_.]+[a-z0-9_])", re.IGNORECASE)
QUOTED = re.compile(r"(?<!\w)'([^']{3,})'(?!\w)|\"([^\"]{3,})\"|‘([^’]{3,})’|“([^”]{3,})”")
PHONE = re.compile(r"\+?\d[\d ()-]{6,}\d")
_CAPS = re.compile(r"\b[A-Z][\w'&.-]*(?:\s+(?:of |the |and )?[A-Z0-9][\w'&.-]*)*")
_LEADING = {"What", "Which", "When", "Who", "Where", "How", "Is", "Are", "Can", "Could", "Please", "I", "My",
            "Move", "Cancel", "Book", "Accept", "Decline", "Change", "Make", "Add", "Invite", "Set", "Send",
            "Delete", "Remove", "Update", "Schedule", "Create", "Find", "Tell", "Show", "Put", "Clear", "Deal",
            "Sort", "Reply", "Share"}


def today(observation: str) -> dt.datetime | None:
    """The frozen 'now' of the episode, from the first observation."""
    m = _NOW.search(observation)
    if not m or m.group(2).lower() not in MONTHS:
        return None
    return dt.datetime(int(m.group(3)), MONTHS.index(m.group(2).lower()) + 1, int(m.group(1)), int(m.group(4)),
                       int(m.group(5)))


def mentioned_date(text: str, now: dt.datetime | None) -> dt.date | None:
    """The day the request talks about: a weekday (the next one, today included), today, tomorrow, or 14 March."""
    low = text.lower()
    if now is None:
        return None
    if re.search(r"\btoday\b|\btonight\b", low):
        return now.date()
    if re.search(r"\btomorrow\b", low):
        return now.date() + dt.timedelta(days=1)
    for i, day in enumerate(WEEKDAYS):
        if re.search(rf"\b{day}(?:'s)?\b", low):
            ahead = (i - now.weekday()) % 7
            if re.search(rf"\bnext {day}\b", low):
                ahead = ahead or 7
            return now.date() + dt.timedelta(days=ahead)
    m = re.search(r"\b(\d{1,2}) (" + "|".join(MONTHS) + r")\b", low)
    if m:
        return dt.date(now.year, MONTHS.index(m.group(2)) + 1, int(m.group(1)))
    return None


def _hour(h: str, minute: str | None, ampm: str | None) -> tuple[int, int]:
    hour = int(h) % 12 if ampm else int(h)
    if ampm and ampm.lower() == "pm":
        hour += 12
    return hour, int(minute or 0)


def window(text: str) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """'between 2 and 3 pm' -> ((14, 0), (15, 0)); the first time takes the second's am/pm when it has none."""
    m = _WINDOW.search(text)
    if not m:
        return None
    ampm_end = m.group(6)
    return _hour(m.group(1), m.group(2), m.group(3) or ampm_end), _hour(m.group(4), m.group(5), ampm_end)


def times(text: str) -> list[tuple[int, int]]:
    """Clock times in order of appearance ('3:30 pm' -> (15, 30), 'noon' -> (12, 0))."""
    out = []
    for m in _TIME.finditer(text):
        if m.group(6):
            out.append((12, 0))
        elif m.group(1):
            out.append(_hour(m.group(1), m.group(2), m.group(3)))
        else:
            out.append((int(m.group(4)), int(m.group(5))))
    return out


def target_time(text: str) -> tuple[int, int] | None:
    """The time a thing should move *to* ('move X to 3:30 pm')."""
    m = re.search(r"\bto (\d{1,2}(?::\d{2})?\s*(?:am|pm)|\d{1,2}:\d{2}|noon)\b", text, re.IGNORECASE)
    found = times(m.group(1)) if m else []
    return found[0] if found else None


def duration_minutes(text: str) -> int | None:
    """A duration in a request (``45 minutes``, ``2 hours``, ``half an hour``) in minutes, or None."""
    m = _DURATION.search(text)
    if not m:
        return 30 if re.search(r"\bhalf an hour\b", text, re.IGNORECASE) else None
    n = int(m.group(1))
    return n * 60 if m.group(2).lower().startswith("h") else n


def quoted(text: str) -> list[str]:
    """The quoted phrases of a request, in order."""
    return [next(g for g in m.groups() if g) for m in QUOTED.finditer(text)]


def names(text: str) -> list[str]:
    """Capitalised phrases that are not the sentence's first command word ('Ana', 'Marcus Webb', 'Q2')."""
    out = []
    for m in _CAPS.finditer(text):
        words = m.group(0).split()
        while words and words[0] in _LEADING:
            words = words[1:]
        phrase = " ".join(words).rstrip(".,'")
        phrase = re.sub(r"'s$", "", phrase)
        if phrase and phrase.lower() not in WEEKDAYS and phrase.lower() not in MONTHS:
            out.append(phrase)
    return out


def clock(value: str) -> str:
    """'2025-03-13T12:00' -> '12:00'."""
    return value[11:16] if len(value) >= 16 and value[10] == "T" else value
