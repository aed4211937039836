"""Process bookkeeping through /proc for the backends whose processes the host can see (bwrap, unshare, local).

Killing by process id, never by name: we only ever touch processes that descend from the sandbox we started.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import time
from collections.abc import Callable, Iterable

from agentabstain_gym.envs.terminal.sandbox import seccomp
from agentabstain_gym.envs.terminal.sandbox.cgroups import SandboxCgroup

#: Host uid the sandboxed processes run as when we are root: a uid other than 0 is what makes the kernel enforce
#: RLIMIT_NPROC (processes of real uid 0 are exempt even without capabilities).
SANDBOX_UID = 65534
_PR_SET_PDEATHSIG = 1


def stat(pid: int) -> tuple[int, int, int, int] | None:
    """(ppid, pgrp, session, tpgid) of ``pid``, or None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    fields = data[data.rfind(b")") + 2:].split()
    try:
        return int(fields[1]), int(fields[2]), int(fields[3]), int(fields[5])
    except (IndexError, ValueError):
        return None


def _all_pids() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def descendants(root: int) -> list[int]:
    """Every live process below ``root`` (not ``root`` itself), found by walking parent ids."""
    children: dict[int, list[int]] = {}
    for pid in _all_pids():
        info = stat(pid)
        if info is not None:
            children.setdefault(info[0], []).append(pid)
    found: list[int] = []
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def ns_pid(pid: int) -> int | None:
    """The id ``pid`` has inside its innermost pid namespace."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as handle:
            for line in handle:
                if line.startswith("NSpid:"):
                    return int(line.split()[-1])
    except (OSError, ValueError):
        return None
    return None


def host_pid(root: int, inner: int) -> int | None:
    """The host id of the process below ``root`` whose id in its own namespace is ``inner``."""
    for pid in descendants(root):
        if ns_pid(pid) == inner:
            return pid
    return None


def kill_all(pids: Iterable[int], wait: float = 3.0) -> list[int]:
    """SIGKILL each pid, then wait until they are gone; returns the ids still alive after ``wait`` seconds."""
    pids = list(pids)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + wait
    left = pids
    while left and time.monotonic() < deadline:
        left = [pid for pid in left if alive(pid)]
        if left:
            time.sleep(0.01)
    return left


def alive(pid: int) -> bool:
    """Whether ``pid`` exists and is not a zombie."""
    info = stat(pid)
    if info is None:
        return False
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            state = handle.read().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in (b"Z", b"X")


def child_setup(drop_to: int | None, cgroup: SandboxCgroup | None = None,
                filtered: bool = False) -> Callable[[], None]:
    """A ``preexec_fn``: join ``cgroup`` (while still privileged), optionally become uid/gid ``drop_to``, die with
    SIGKILL when our parent dies, and with ``filtered`` install the seccomp filter (:mod:`.seccomp`)."""
    libc = ctypes.CDLL(None, use_errno=True)

    def setup() -> None:
        if cgroup is not None:
            cgroup.join()
        if drop_to is not None:
            os.setgroups([])
            os.setresgid(drop_to, drop_to, drop_to)
            os.setresuid(drop_to, drop_to, drop_to)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if filtered:
            seccomp.install()

    return setup


def drop_uid() -> int | None:
    """The uid to drop to before starting a sandbox: :data:`SANDBOX_UID` when we are root, else None."""
    return SANDBOX_UID if os.geteuid() == 0 else None
