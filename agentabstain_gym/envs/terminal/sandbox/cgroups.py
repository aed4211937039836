"""Sandbox-wide memory and process limits through cgroups, where this process may create them (as root, usually).

``ulimit`` bounds each process, so four 200 MB processes fit under a 256 MB "limit"; a cgroup bounds the sandbox.
We use cgroup v2 when the unified hierarchy has the memory and pids controllers, else the v1 ``memory`` and ``pids``
hierarchies (as on hybrid hosts), each nested under this process's own cgroup. The launcher joins the group in its
``preexec_fn`` (before it drops privileges and before the sandbox exists), so every process of the sandbox is
counted from the first. Where no cgroup can be made, :func:`create` returns None and only the per-process limits
apply; :func:`why_unavailable` says why (the README lists what is enforced where).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path("/sys/fs/cgroup")
_counter = itertools.count()


@dataclass(frozen=True)
class SandboxCgroup:
    """The cgroup directories of one sandbox (one for v2, one per controller for v1)."""

    dirs: tuple[str, ...]

    def procs_files(self) -> list[str]:
        return [os.path.join(d, "cgroup.procs") for d in self.dirs]

    def join(self) -> None:
        """Move the calling process into every directory (async-signal-safe enough for a ``preexec_fn``)."""
        pid = str(os.getpid()).encode()
        for path in self.procs_files():
            fd = os.open(path, os.O_WRONLY)
            try:
                os.write(fd, pid)
            finally:
                os.close(fd)

    def pids(self) -> list[int]:
        found: list[int] = []
        for path in self.procs_files():
            with contextlib.suppress(OSError), open(path, encoding="ascii") as handle:
                found += [int(line) for line in handle if line.strip()]
        return sorted(set(found))

    def kill_all(self, wait: float = 3.0) -> list[int]:
        """SIGKILL every member until none is left (new forks are caught by the next pass); returns survivors."""
        deadline = time.monotonic() + wait
        for d in self.dirs:  # v2 has a one-shot kill for the whole group
            with contextlib.suppress(OSError):
                Path(d, "cgroup.kill").write_text("1")
        while True:
            left = self.pids()
            if not left or time.monotonic() > deadline:
                return left
            for pid in left:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.01)

    def remove(self) -> None:
        """Kill what is left and remove the directories (an empty cgroup is removed with rmdir)."""
        self.kill_all()
        for d in self.dirs:
            for _ in range(50):
                try:
                    os.rmdir(d)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)


def _own_path(controller: str) -> str | None:
    """This process's cgroup path in the v1 hierarchy ``controller`` ("" means v2)."""
    try:
        lines = Path("/proc/self/cgroup").read_text(encoding="ascii").splitlines()
    except OSError:
        return None
    for line in lines:
        _, names, path = line.split(":", 2)
        if (controller == "" and names == "") or controller in names.split(","):
            return path
    return None


def _v2_base() -> Path | None:
    controllers = ROOT / "cgroup.controllers"
    if not controllers.exists():
        return None
    have = controllers.read_text(encoding="ascii").split()
    own = _own_path("")
    if own is None or "memory" not in have or "pids" not in have:
        return None
    return ROOT / own.lstrip("/")


def why_unavailable() -> str | None:
    """None if sandbox-wide limits can be set here, else why not."""
    try:
        group = create(64, 16)
    except OSError as exc:
        return f"cannot create a cgroup here ({exc.strerror or exc})"
    if group is None:
        return "no writable cgroup hierarchy with the memory and pids controllers"
    group.remove()
    return None


def create(memory_mb: int, max_processes: int) -> SandboxCgroup | None:
    """A new cgroup with the limits set, or None where this process may not make one."""
    name = f"agentabstain-gym-{os.getpid()}-{next(_counter)}"
    made: list[str] = []
    try:
        base = _v2_base()
        if base is not None and os.access(base, os.W_OK):
            d = base / name
            d.mkdir()
            made.append(str(d))
            (d / "memory.max").write_text(str(memory_mb << 20))
            with contextlib.suppress(OSError):
                (d / "memory.swap.max").write_text("0")
            (d / "pids.max").write_text(str(max_processes))
            return SandboxCgroup(tuple(made))
        for controller, settings in (("memory", {"memory.limit_in_bytes": memory_mb << 20}),
                                     ("pids", {"pids.max": max_processes})):
            own = _own_path(controller)
            parent = ROOT / controller / (own or "/").lstrip("/")
            if own is None or not os.access(parent, os.W_OK):
                _remove_dirs(made)
                return None
            d = parent / name
            d.mkdir()
            made.append(str(d))
            for key, value in settings.items():
                (d / key).write_text(str(value))
            if controller == "memory":
                with contextlib.suppress(OSError):  # swap accounting is optional; without it swap is the host's
                    (d / "memory.memsw.limit_in_bytes").write_text(str(memory_mb << 20))
        return SandboxCgroup(tuple(made))
    except PermissionError:
        _remove_dirs(made)
        return None
    except OSError:
        _remove_dirs(made)
        raise


def _remove_dirs(dirs: list[str]) -> None:
    for d in reversed(dirs):
        with contextlib.suppress(OSError):
            os.rmdir(d)
