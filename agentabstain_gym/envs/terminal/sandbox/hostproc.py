"""What the backends whose processes the host can see (bwrap, unshare, local) share: spawning the shell loop under a
pexpect terminal with a clean environment, finding the shell's host pid, killing groups, and tearing down by pid."""

from __future__ import annotations

import os
import signal
import subprocess
from typing import Any

import pexpect

from agentabstain_gym.envs.terminal.sandbox import procs
from agentabstain_gym.envs.terminal.sandbox.base import Sandbox, SandboxError

#: The environment of the launcher process itself (bwrap / unshare): never the host's, which may hold secrets.
LAUNCH_ENV = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8"}


def probe_launch(argv: list[str], label: str) -> str:
    """Run a trivial sandbox launch as a real episode would start one: "" if it works, else why not."""
    try:
        res = subprocess.run(argv, env=dict(LAUNCH_ENV), capture_output=True, timeout=20,
                             preexec_fn=procs.child_setup(procs.drop_uid()))
    except (OSError, subprocess.SubprocessError) as exc:
        return f"{label} fails here: {exc}"
    return "" if res.returncode == 0 else f"{label} fails here: {res.stderr.decode(errors='replace').strip()[:300]}"


class HostProcessSandbox(Sandbox):
    """A sandbox whose process tree hangs below the pexpect child on this host."""

    def _argv(self) -> list[str]:
        raise NotImplementedError

    def _drop_to(self) -> int | None:
        return procs.drop_uid()

    def _spawn(self) -> Any:
        argv = self._argv()
        try:
            child = pexpect.spawn(argv[0], argv[1:], env=self._launch_env(), echo=False, encoding=None,
                                  preexec_fn=procs.child_setup(self._drop_to()), dimensions=(50, 200))
        except pexpect.ExceptionPexpect as exc:
            raise SandboxError(f"could not start the {self.name} sandbox: {exc}") from exc
        # _teardown has killed it before close(), which then only reaps it: no need to wait 0.1 s twice.
        child.ptyproc.delayafterclose = child.ptyproc.delayafterterminate = 0.0
        return child

    def _launch_env(self) -> dict[str, str]:
        return dict(LAUNCH_ENV)

    def _root_pid(self) -> int | None:
        return None if self._child is None else self._child.pid

    def _shell_host_pid(self) -> int | None:
        root, inner = self._root_pid(), self._shell_ns_pid
        if root is None or inner is None:
            return None
        return procs.host_pid(root, inner)

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

    def _teardown(self) -> None:
        root = self._root_pid()
        if root is None:
            return
        procs.kill_all([root, *procs.descendants(root)])
