"""Run the task validator (:func:`agentabstain_gym.envs.terminal.tasks.check_task_behaviour`) inside a sandbox.

The validator speaks in host terms: ``runner(workspace, command) -> (exit status, output)`` with commands such as
``bash /path/to/setup.sh original``, and it lists the workspace from the host. So each workspace here is a host
temporary directory bound at /workspace of its own sandbox, and ``bash <host script> args...`` is run as a task
script (:meth:`Sandbox.run_script`), since the task folders themselves are not visible inside.
"""

from __future__ import annotations

import shlex
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agentabstain_gym.envs.terminal.sandbox import Sandbox, make_sandbox


class SandboxRunner:
    """A validator runner: one sandbox per workspace, commands in its shell, scripts as task scripts."""

    def __init__(self, backend: str | None = None, limits: Mapping[str, Any] | None = None,
                 unsafe: bool = False) -> None:
        self.backend, self.unsafe = backend, unsafe
        self.limits = {"output_cap": 1 << 20, **dict(limits or {})}
        self._boxes: dict[Path, Sandbox] = {}

    @contextmanager
    def workspace(self) -> Iterator[Path]:
        """A fresh host directory, bound at /workspace of a new sandbox; both are removed afterwards."""
        path = Path(tempfile.mkdtemp(prefix="abstain-gym-validate-"))
        sandbox = make_sandbox(self.backend, workspace_dir=path, limits=self.limits, unsafe=self.unsafe)
        try:
            sandbox.start()
            self._boxes[path] = sandbox
            yield path
        finally:
            self._boxes.pop(path, None)
            sandbox.close()
            shutil.rmtree(path, ignore_errors=True)

    def __call__(self, workspace: Path, command: str) -> tuple[int, str]:
        sandbox = self._boxes[Path(workspace)]
        try:
            words = shlex.split(command)
        except ValueError:
            words = []
        if len(words) >= 2 and words[0] == "bash" and Path(words[1]).is_absolute() and Path(words[1]).is_file():
            script = Path(words[1]).read_text(encoding="utf-8")
            if Path(words[1]).name == "check.sh":  # as an episode's submit runs it, but the shell lives on
                result = sandbox.check(script, words[2:], kill_agent=False)
            else:
                result = sandbox.run_script(script, words[2:])
        else:
            result = sandbox.run(command)
        return result.exit_status, result.output
