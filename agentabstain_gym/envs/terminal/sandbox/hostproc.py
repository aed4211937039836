"""What the backends whose processes the host can see (bwrap, unshare, local) share: spawning the shell loop under a
pexpect terminal with a clean environment, sandbox-wide limits, the reaper, killing groups, tearing down by pid,
and running a checker in a fresh process.

A namespaced sandbox (bwrap, unshare) has a pid-namespace init; killing it kills every process of the sandbox,
whatever they did (stopped, traced, detached). We keep a handle on the sandbox's mount namespace, so after the
agent's processes are gone a checker can be started in *that* file system (the agent's ``/workspace``) from
outside: ``nsenter`` into the held namespaces, then ``unshare`` a new pid, network and mount namespace where a
fresh tmpfs hides the agent's ``/tmp`` and home and an empty one hides ``/proc``.
"""

from __future__ import annotations

import contextlib
import fcntl
import io
import os
import select
import shutil
import signal
import subprocess
import tarfile
import threading
import time
from collections.abc import Sequence
from typing import Any

import pexpect

from agentabstain_gym.envs.terminal.sandbox import cgroups, procs, seccomp
from agentabstain_gym.envs.terminal.sandbox.base import (
    HOME,
    WORKSPACE,
    CommandResult,
    Sandbox,
    SandboxError,
    _sh_quote,
    _Sink,
)
from agentabstain_gym.envs.terminal.sandbox.reaper import client as reaper
from agentabstain_gym.envs.terminal.sandbox.reaper import pid_entry

#: The environment of the launcher process itself (bwrap / unshare): never the host's, which may hold secrets.
LAUNCH_ENV = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8"}
_NS_GET_USERNS = 0xB701


def probe_launch(argv: list[str], label: str) -> str:
    """Run a trivial sandbox launch as a real episode would start one: "" if it works, else why not."""
    try:
        res = subprocess.run(argv, env=dict(LAUNCH_ENV), capture_output=True, timeout=20,
                             preexec_fn=procs.child_setup(procs.drop_uid(), filtered=seccomp.supported()))
    except (OSError, subprocess.SubprocessError) as exc:
        return f"{label} fails here: {exc}"
    return "" if res.returncode == 0 else f"{label} fails here: {res.stderr.decode(errors='replace').strip()[:300]}"


def checker_launch_script(tmp_mb: int, limits_line: str, final: str, workdir: str = WORKSPACE,
                          fresh_dirs: Sequence[str] = (), hide_home_tmp: bool = True, hide_proc: bool = True,
                          unpack: bool = False, sealed_dirs: Sequence[str] = ()) -> str:
    """Run as root of the sandbox's user namespace in new mount/pid namespaces: hide what the agent left outside
    the workspace (or, for a Terminal-Bench check, only the ``fresh_dirs``), unpack a tar archive read from stdin
    when ``unpack``, make ``sealed_dirs`` (fresh dirs the archive filled) read-only, then drop every capability and
    exec ``final`` with stdin from /dev/null."""
    lines = ["set -e"]
    if hide_home_tmp:
        lines += [f"mount -t tmpfs -o size=64m,mode=0700 agx-home {HOME}",
                  f"mount -t tmpfs -o size={tmp_mb}m,mode=1777 agx-tmp /tmp",
                  "if [ -d /dev/shm ]; then mount -t tmpfs -o size=1m,mode=1777 agx-shm /dev/shm; fi"]
    lines += [f"mount -t tmpfs -o size={tmp_mb}m,mode=0755 agx-fresh {_sh_quote(d)}" for d in fresh_dirs]
    if unpack:
        lines.append("tar -x -p --no-same-owner -C / -f -")
    # what the archive brought (a task's tests) is read-only for the checker: a program of the agent's that the test
    # script runs first must not rewrite the tests pytest reads next (without capabilities it cannot remount)
    lines += [f"mount -o remount,ro {_sh_quote(d)}" for d in sealed_dirs]
    if hide_proc:
        lines.append("mount -t tmpfs -o size=4k,mode=0555,ro agx-noproc /proc")
    lines += [f"cd {_sh_quote(workdir)}", limits_line,
              "exec setpriv --no-new-privs --inh-caps=-all --bounding-set=-all --pdeathsig KILL " + final +
              " </dev/null"]
    return "\n".join(lines) + "\n"


class HostProcessSandbox(Sandbox):
    """A sandbox whose process tree hangs below the pexpect child on this host."""

    #: Whether the tree has its own pid and mount namespaces (bwrap, unshare), so the checker can enter them.
    namespaced = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._cgroup: cgroups.SandboxCgroup | None = None
        self._init_pid: int | None = None
        self._mnt_fd: int | None = None
        self._shell_pid: int | None = None
        self._reaper_entries: list[tuple[str, ...]] = []

    def _argv(self) -> list[str]:
        raise NotImplementedError

    def _drop_to(self) -> int | None:
        return procs.drop_uid()

    def _spawn(self) -> Any:
        argv = self._argv()
        self._cgroup = cgroups.create(int(self.limits.memory_mb), int(self.limits.max_processes))
        if self._cgroup is not None:
            self._reaper_entries.append(reaper().add("cgroup", *self._cgroup.dirs))
        setup = procs.child_setup(self._drop_to(), self._cgroup, filtered=self.namespaced and seccomp.supported())
        try:
            child = pexpect.spawn(argv[0], argv[1:], env=self._launch_env(), echo=False, encoding=None,
                                  preexec_fn=setup, dimensions=(50, 200))
        except pexpect.ExceptionPexpect as exc:
            raise SandboxError(f"could not start the {self.name} sandbox: {exc}") from exc
        # _teardown has killed it before close(), which then only reaps it: no need to wait 0.1 s twice.
        child.ptyproc.delayafterclose = child.ptyproc.delayafterterminate = 0.0
        self._reaper_entries.append(reaper().add(*pid_entry(child.pid)))
        return child

    def _after_start(self) -> None:
        """Find the pid-namespace init, register it with the reaper, and hold the sandbox's mount namespace."""
        root = self._root_pid()
        if not self.namespaced or root is None:
            return
        for pid in procs.descendants(root):
            if procs.ns_pid(pid) == 1:
                self._init_pid = pid
                break
        if self._init_pid is None:
            raise SandboxError(f"the {self.name} sandbox has no pid-namespace init")
        self._reaper_entries.append(reaper().add(*pid_entry(self._init_pid)))
        self._mnt_fd = os.open(f"/proc/{self._init_pid}/ns/mnt", os.O_RDONLY | os.O_CLOEXEC)

    def _launch_env(self) -> dict[str, str]:
        return dict(LAUNCH_ENV)

    def _root_pid(self) -> int | None:
        return None if self._child is None else self._child.pid

    def _shell_host_pid(self) -> int | None:
        if self._shell_pid is not None and procs.alive(self._shell_pid):
            return self._shell_pid
        root, inner = self._root_pid(), self._shell_ns_pid
        if root is None or inner is None:
            return None
        self._shell_pid = procs.host_pid(root, inner)
        return self._shell_pid

    def _shell_alive(self) -> bool:
        pid = self._shell_host_pid()
        return pid is not None and procs.alive(pid)

    def _is_new_shell(self, ns_pid: int) -> bool:
        """A new shell is a live bash whose parent is the loop's ``script`` (an agent's process is neither)."""
        root = self._root_pid()
        if root is None or ns_pid == self._shell_ns_pid:
            return False
        pid = procs.host_pid(root, ns_pid)
        info = procs.stat(pid) if pid is not None else None
        if pid is None or info is None:
            return False
        self._shell_pid = None
        return _comm(pid) == "bash" and _comm(info[0]) == "script"

    def _foreground_group(self) -> tuple[int, int] | None:
        pid = self._shell_host_pid()
        info = procs.stat(pid) if pid is not None else None
        return None if info is None else (info[1], info[3])

    def _kill_group(self, pgid: int | None) -> None:
        try:
            if pgid is None:
                pid = self._shell_host_pid()
                if pid is not None:
                    os.kill(pid, signal.SIGKILL)
            elif pgid > 1:
                os.killpg(pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def kill_agent(self) -> None:
        """Kill every process of the sandbox (its pid namespace, or its cgroup); the file system stays."""
        self._agent_killed = True
        if self._init_pid is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self._init_pid, signal.SIGKILL)
        root = self._root_pid()
        if root is not None:
            procs.kill_all([pid for pid in procs.descendants(root)])
        if self._cgroup is not None:
            self._cgroup.kill_all()

    def check(self, text: str, args: Sequence[str] = (), timeout: float | None = None,
              output_cap: int | None = None, kill_agent: bool = True, files: bytes | None = None) -> CommandResult:
        if self._child is None or self._closed:
            raise SandboxError(f"the {self.name} sandbox is not running")
        if kill_agent:
            self.kill_agent()
        native = self.layout.native_check
        return self._enter(text, args, files, self.checker_env(), "task-check", fresh_dirs=self.layout.check_dirs,
                           hide_home_tmp=not native, hide_proc=True, timeout=timeout or self.limits.script_timeout,
                           cap=output_cap or self.limits.output_cap)

    def setup_step(self, text: str, files: bytes | None = None, timeout: float | None = None,
                   output_cap: int | None = None) -> CommandResult:
        if not self.running:
            raise SandboxError(f"the {self.name} sandbox is not running")
        return self._enter(text, (), files, self.script_env(), "task-setup", fresh_dirs=(), hide_home_tmp=False,
                           hide_proc=False, timeout=timeout or self.limits.script_timeout,
                           cap=output_cap or self.limits.output_cap)

    def _enter(self, text: str, args: Sequence[str], files: bytes | None, env_vars: dict[str, str], label: str, *,
               fresh_dirs: Sequence[str], hide_home_tmp: bool, hide_proc: bool, timeout: float,
               cap: int) -> CommandResult:
        """Run ``text`` with bash in the sandbox's file system from outside: ``nsenter`` into its held user and
        mount namespaces, then new mount, pid, network, IPC and UTS namespaces of its own (nothing of the agent's
        processes is reachable, and whatever it starts dies with it)."""
        if self._mnt_fd is None:
            raise SandboxError(f"the {self.name} sandbox cannot run a script apart from the agent")
        user_fd = fcntl.ioctl(self._mnt_fd, _NS_GET_USERNS)
        env = " ".join(f"{k}={_sh_quote(v)}" for k, v in env_vars.items())
        # bash by its absolute path: env would search the PATH given to the script, which a Terminal-Bench task's
        # ENV may point at directories the agent wrote (a `bash` planted there would run the checker)
        final = f"env -i {env} {_host_bash()} --noprofile --norc -c \"$0\" {label} \"$@\""
        limits_line = (f"ulimit -c 0; ulimit -u {int(self.limits.max_processes)} "
                       f"-v {int(self.limits.memory_mb) * 1024} 2>/dev/null || true")
        script = checker_launch_script(int(self.limits.tmp_mb), limits_line, final, self.layout.workdir,
                                       fresh_dirs, hide_home_tmp, hide_proc, unpack=files is not None,
                                       sealed_dirs=filled_dirs(files, fresh_dirs))
        argv = ["nsenter", "--preserve-credentials", f"--user=/proc/self/fd/{user_fd}",
                f"--mount=/proc/self/fd/{self._mnt_fd}", "--", "unshare", "--mount", "--propagation", "private",
                "--pid", "--fork", "--kill-child", "--net", "--ipc", "--uts", "--", "sh", "-c", script, text,
                *map(str, args)]
        try:
            return run_captured(argv, (user_fd, self._mnt_fd), self._drop_to(), self._cgroup, timeout, cap,
                                stdin_data=files)
        finally:
            os.close(user_fd)

    def _teardown(self) -> None:
        root = self._root_pid()
        if self._init_pid is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self._init_pid, signal.SIGKILL)
        if root is not None:
            procs.kill_all([root, *procs.descendants(root)])
        if self._cgroup is not None:
            self._cgroup.remove()
            self._cgroup = None
        for entry in self._reaper_entries:
            reaper().remove(*entry)
        self._reaper_entries = []
        self._init_pid = None
        if self._mnt_fd is not None:
            os.close(self._mnt_fd)
            self._mnt_fd = None


def filled_dirs(files: bytes | None, dirs: Sequence[str]) -> list[str]:
    """Those of ``dirs`` that the tar archive ``files`` (paths relative to ``/``) puts anything into."""
    if not files or not dirs:
        return []
    with tarfile.open(fileobj=io.BytesIO(files)) as tar:
        names = ["/" + n.removeprefix("./").lstrip("/") for n in tar.getnames()]
    return [d for d in dirs if any(n == d or n.startswith(d.rstrip("/") + "/") for n in names)]


def _host_bash() -> str:
    """The host's bash (bwrap and unshare show the host's read-only ``/usr``)."""
    return shutil.which("bash", path=LAUNCH_ENV["PATH"]) or "/bin/bash"


def _comm(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm", encoding="utf-8", errors="replace") as handle:
            return handle.read().strip()
    except OSError:
        return ""


def _feed(fd: int, data: bytes) -> None:
    """Write ``data`` to ``fd`` and close it (in a thread: the reader may first fill its output pipe)."""
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view[:65536]):]
    except OSError:  # the process ended without reading everything; its output says why
        pass
    finally:
        os.close(fd)


def run_captured(argv: list[str], pass_fds: Sequence[int], drop_to: int | None,
                 cgroup: cgroups.SandboxCgroup | None, timeout: float, cap: int,
                 stdin_data: bytes | None = None) -> CommandResult:
    """Run ``argv`` with stdout and stderr captured into one capped stream; on timeout kill its whole tree.
    ``stdin_data`` is fed to its stdin (else stdin is /dev/null)."""
    read_fd, write_fd = os.pipe()
    in_read, in_write = os.pipe() if stdin_data is not None else (None, None)
    try:
        proc = subprocess.Popen(argv, stdin=in_read if in_read is not None else subprocess.DEVNULL,
                                stdout=write_fd, stderr=write_fd,
                                pass_fds=tuple(pass_fds), env=dict(LAUNCH_ENV), start_new_session=True,
                                preexec_fn=procs.child_setup(drop_to, cgroup, filtered=seccomp.supported()))
    except OSError as exc:
        for fd in (read_fd, write_fd, in_read, in_write):
            if fd is not None:
                os.close(fd)
        raise SandboxError(f"could not start the checker: {exc}") from exc
    os.close(write_fd)
    if in_read is not None and in_write is not None and stdin_data is not None:
        os.close(in_read)
        threading.Thread(target=_feed, args=(in_write, stdin_data), daemon=True).start()
    entry = reaper().add(*pid_entry(proc.pid))
    sink = _Sink(int(cap))
    deadline = time.monotonic() + timeout
    timed_out = False
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                timed_out = True
                break
            ready, _, _ = select.select([read_fd], [], [], min(left, 0.5))
            if ready:
                data = os.read(read_fd, 65536)
                if not data:
                    break
                sink.add(data)
        if not timed_out:  # output closed; the process itself must still end in time
            try:
                proc.wait(timeout=max(0.05, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                timed_out = True
    finally:
        if timed_out or proc.poll() is None:
            procs.kill_all([*procs.descendants(proc.pid), proc.pid])
        status = proc.wait()
        reaper().remove(*entry)
        os.close(read_fd)
    text, truncated = sink.text(True)
    if timed_out:
        return CommandResult(text + f"\n[the checker ran longer than {timeout:g} s and was stopped]", -1,
                             timed_out=True, truncated=truncated)
    return CommandResult(text, status if status >= 0 else 128 - status, truncated=truncated)
