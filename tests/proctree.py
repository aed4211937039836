"""A process's live descendants from /proc, for tests that kill a run and look for what it left behind."""

from __future__ import annotations

import time
from pathlib import Path


def descendants(pid: int) -> set[int]:
    """Every live process below ``pid`` (workers, their sandboxes and reapers)."""
    found: set[int] = set()
    frontier = [pid]
    while frontier:
        parent = frontier.pop()
        for task in Path(f"/proc/{parent}/task").glob("*"):
            try:
                children = (task / "children").read_text().split()
            except OSError:
                continue
            for child in map(int, children):
                if child not in found:
                    found.add(child)
                    frontier.append(child)
    return found


def alive(pids: set[int]) -> set[int]:
    living = set()
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            living.add(pid)
    return living


def assert_gone(pids: set[int], within: float = 5.0) -> None:
    deadline = time.monotonic() + within
    while alive(pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(pids), f"left behind: {sorted(alive(pids))}"
