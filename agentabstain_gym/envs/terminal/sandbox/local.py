"""The ``local`` backend: the same shell protocol on this machine, with NO isolation.

For debugging task folders and for machines where nothing else works, and only when asked for by name with
``unsafe=True``: the agent's commands can read and write anything the current user can, and reach the network.
Limits still apply (timeout, output cap, ulimits), and close() kills every process of the shell's sessions.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentabstain_gym.envs.terminal.sandbox import procs
from agentabstain_gym.envs.terminal.sandbox.base import (
    SHELL_LOOP,
    CommandResult,
    SandboxError,
    SandboxUnavailable,
)
from agentabstain_gym.envs.terminal.sandbox.hostproc import HostProcessSandbox, run_captured


class LocalSandbox(HostProcessSandbox):
    """No isolation (see the module docstring)."""

    name = "local"
    isolated = False
    namespaced = False

    def __init__(self, workspace_dir: str | Path | None = None, limits: Any = None, hidden_paths: Any = (),
                 unsafe: bool = False) -> None:
        if not unsafe:
            raise SandboxUnavailable("the local backend isolates nothing; pass unsafe=True to use it anyway")
        super().__init__(workspace_dir, limits, hidden_paths)
        self._root: Path | None = None

    def _drop_to(self) -> int | None:
        return None

    def _argv(self) -> list[str]:
        self._root = Path(tempfile.mkdtemp(prefix="abstain-gym-local-"))
        home = self._root / "home"
        home.mkdir()
        workspace = self.workspace_dir or self._root / "workspace"
        workspace.mkdir(exist_ok=True)
        self.workspace_path, self.home_path = str(workspace), str(home)
        return ["sh", "-c", f"cd {self.workspace_path} && {SHELL_LOOP}"]

    def _launch_env(self) -> dict[str, str]:
        return self.shell_env()

    def check(self, text: str, args: Sequence[str] = (), timeout: float | None = None,
              output_cap: int | None = None, kill_agent: bool = True, files: bytes | None = None) -> CommandResult:
        """A fresh process with a clean environment, after killing the shell's sessions (no isolation here)."""
        if self._child is None or self._closed:
            raise SandboxError("the local sandbox is not running")
        if files is not None:
            raise SandboxError("the local backend cannot unpack checker files (it runs no Terminal-Bench tasks)")
        if kill_agent:
            self._agent_killed = True
            self._kill_sessions()
        argv = ["env", "-C", self.workspace_path, "-i", *(f"{k}={v}" for k, v in self.checker_env().items()),
                "bash", "--noprofile", "--norc", "-c", text, "task-check", *map(str, args)]
        return run_captured(argv, (), None, None, timeout or self.limits.script_timeout,
                            output_cap or self.limits.output_cap)

    def _kill_sessions(self) -> None:
        root = self._root_pid()
        if root is not None:
            tree = procs.descendants(root)
            sessions = {info[2] for pid in [root, *tree] if (info := procs.stat(pid)) is not None}
            strays = [pid for pid in procs._all_pids()
                      if pid != os.getpid() and (info := procs.stat(pid)) is not None and info[2] in sessions]
            procs.kill_all({root, *tree, *strays})

    def _teardown(self) -> None:
        self._kill_sessions()
        if self._root is not None:
            shutil.rmtree(self._root, ignore_errors=True)
            self._root = None
