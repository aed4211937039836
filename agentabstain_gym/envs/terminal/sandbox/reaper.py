"""A watchdog that removes a process's sandboxes when that process dies, however it dies.

Parent-death signals are not enough: an agent that can trace its sandbox's pid 1 clears it, and a stopped process
keeps Docker's keep-alive socket open. So every process that starts sandboxes also starts one reaper (lazily, in a
session of its own, outside every sandbox's pid namespace, so no agent can name it) and tells it, over a pipe only
we hold, what to remove: ``pid`` (the sandbox's pid-namespace init: killing it kills the whole namespace),
``cgroup`` directories, Docker ``container`` and ``volume`` names. When the pipe reaches end of file (our process
is gone, even after SIGKILL), the reaper removes everything still registered and exits.

Run as ``python -m agentabstain_gym.envs.terminal.sandbox.reaper``; lines on stdin are ``add|del KIND VALUE...``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
from typing import IO


def _start_time(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()[19].decode()
    except (OSError, IndexError):
        return None


def pid_entry(pid: int) -> tuple[str, ...]:
    """The entry for a process, with its start time so a reused pid is never killed."""
    return ("pid", str(pid), _start_time(pid) or "?")


class ReaperClient:
    """Our end of the pipe: one reaper per process, restarted (with its entries) if it ever dies."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._entries: dict[tuple[str, ...], None] = {}

    def _ensure(self) -> IO[bytes]:
        if self._proc is None or self._proc.poll() is not None:
            self._proc = subprocess.Popen(
                [sys.executable, "-m", __name__], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True,
                env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                     **{k: v for k, v in os.environ.items() if k.startswith(("DOCKER_", "PYTHON"))}})
            assert self._proc.stdin is not None
            for entry in self._entries:
                self._proc.stdin.write(("add " + " ".join(entry) + "\n").encode())
            self._proc.stdin.flush()
        assert self._proc.stdin is not None
        return self._proc.stdin

    def _send(self, verb: str, entry: tuple[str, ...]) -> None:
        with self._lock:
            if verb == "add":
                self._entries[entry] = None
            else:
                self._entries.pop(entry, None)
            for _ in range(2):
                try:
                    stream = self._ensure()
                    stream.write(f"{verb} {' '.join(entry)}\n".encode())
                    stream.flush()
                    return
                except (BrokenPipeError, OSError):
                    self._proc = None  # it died: the next attempt starts a new one with every entry

    def add(self, *entry: str) -> tuple[str, ...]:
        """Register ``entry``; returns it, for :meth:`remove`."""
        self._send("add", entry)
        return entry

    def remove(self, *entry: str) -> None:
        self._send("del", entry)

    @property
    def pid(self) -> int:
        """The reaper's own pid (starting it if need be), so a caller registering its descendants can leave it out."""
        with self._lock:
            self._ensure()
            assert self._proc is not None
            return self._proc.pid

    def forget_after_fork(self) -> None:
        """In a forked child: drop the parent's reaper (its pipe must close when the parent dies, not later)."""
        if self._proc is not None and self._proc.stdin is not None:
            with contextlib.suppress(OSError):
                os.close(self._proc.stdin.fileno())
        self._proc = None
        self._entries = {}
        self._lock = threading.Lock()


_client = ReaperClient()
os.register_at_fork(after_in_child=_client.forget_after_fork)


def client() -> ReaperClient:
    """This process's reaper client."""
    return _client


def _reap(entries: dict[tuple[str, ...], None]) -> None:
    """Remove everything: processes first (so no container or cgroup gains members), then the rest."""
    for entry in entries:
        if entry[0] == "pid" and len(entry) == 3:
            pid = int(entry[1])
            if _start_time(pid) == entry[2]:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
    for entry in entries:
        if entry[0] == "cgroup":
            from agentabstain_gym.envs.terminal.sandbox.cgroups import SandboxCgroup
            SandboxCgroup(tuple(entry[1:])).remove()
    docker_entries = [e for e in entries if e[0] in ("container", "volume")]
    if docker_entries:
        _reap_docker(docker_entries)


def _reap_docker(entries: list[tuple[str, ...]]) -> None:
    try:
        import docker  # noqa: PLC0415 - optional dependency
        api = docker.from_env(timeout=30).api
    except Exception:  # noqa: BLE001 - nothing else to try
        return
    for kind, name in ((e[0], e[1]) for e in entries):
        if kind == "container":
            with contextlib.suppress(Exception):
                api.remove_container(name, force=True)
    for kind, name in ((e[0], e[1]) for e in entries):
        if kind == "volume":
            with contextlib.suppress(Exception):
                api.remove_volume(name, force=True)


def main() -> None:
    """Read entries until end of file, then remove what is left."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C meant for the runner must not take us first
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    entries: dict[tuple[str, ...], None] = {}
    for raw in sys.stdin.buffer:
        words = tuple(raw.decode("utf-8", "replace").split())
        if len(words) < 2:
            continue
        if words[0] == "add":
            entries[words[1:]] = None
        elif words[0] == "del":
            entries.pop(words[1:], None)
    _reap(entries)


if __name__ == "__main__":
    main()
