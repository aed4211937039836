"""The default backend: bubblewrap.

A new root on tmpfs holding only /usr (and the merged-/usr links) and /etc, both read-only; a tmpfs workspace (or a
bound host directory) at /workspace, tmpfs /tmp, /root and /dev/shm, each with a size cap, and a read-only /dev; every namespace unshared (no network but loopback, own PID
namespace, no further user namespaces); all capabilities dropped, because root in bwrap's user namespace could
otherwise remount the read-only binds writable and write to the host; a host uid other than 0 so the process limit
holds; ``--die-with-parent`` and ``--new-session``. The package, the task folders and anything else in
``hidden_paths`` that would otherwise be visible get an empty read-only tmpfs over them.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from agentabstain_gym.envs.terminal.sandbox import procs
from agentabstain_gym.envs.terminal.sandbox.base import HOME, SHELL_LOOP, SandboxError
from agentabstain_gym.envs.terminal.sandbox.hostproc import HostProcessSandbox, probe_launch
from agentabstain_gym.envs.terminal.sandbox.layout import DEFAULT_LAYOUT, SandboxLayout

#: Top-level names of a merged-/usr system that must exist inside (symlinks are copied as symlinks).
_ROOT_LINKS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
_VISIBLE_TREES = ("/usr", "/etc")
_probe_result: str | None = None


def bwrap_isolation_args(workspace_dir: Path | None, workspace_mb: int, tmp_mb: int,
                         hidden: tuple[Path, ...], shm_mb: int = 64, layout: SandboxLayout = DEFAULT_LAYOUT) -> list[str]:
    """The bwrap options that build the sandbox's file system and namespaces (without the command).

    The layout's working directory gets the workspace (a tmpfs of ``workspace_mb``, or ``workspace_dir`` bound);
    its other directories get a tmpfs each of the same size cap.
    """
    args = ["--unshare-all", "--unshare-user", "--disable-userns", "--uid", "0", "--gid", "0",
            "--hostname", "sandbox", "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    for tree in _VISIBLE_TREES:
        args += ["--ro-bind", tree, tree]
    for name in _ROOT_LINKS:
        path = Path("/") / name
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            args += ["--ro-bind", str(path), str(path)]
    # bwrap's /dev is a tmpfs without a size: cap /dev/shm and make the rest read-only (devices stay usable)
    args += ["--dev", "/dev", "--perms", "1777", "--size", str(shm_mb << 20), "--tmpfs", "/dev/shm",
             "--remount-ro", "/dev", "--proc", "/proc",
             "--perms", "1777", "--size", str(tmp_mb << 20), "--tmpfs", "/tmp",
             "--perms", "0700", "--size", str(64 << 20), "--tmpfs", HOME,
             "--dir", "/var", "--symlink", "../tmp", "/var/tmp"]
    for path in layout.mounts:
        if path == layout.workdir and workspace_dir is not None:
            args += ["--bind", str(workspace_dir), path]
        else:
            args += ["--size", str(workspace_mb << 20), "--tmpfs", path]
    for path in hidden:
        if not any(path == Path(t) or Path(t) in path.parents for t in _VISIBLE_TREES) or not path.exists():
            continue
        if path.is_dir():
            args += ["--perms", "0555", "--size", str(1 << 20), "--tmpfs", str(path), "--remount-ro", str(path)]
        else:
            args += ["--ro-bind", "/dev/null", str(path)]
    return [*args, "--remount-ro", "/"]


class BwrapSandbox(HostProcessSandbox):
    """bubblewrap backend (see the module docstring)."""

    name = "bwrap"

    def _argv(self) -> list[str]:
        if self.workspace_dir is not None and procs.drop_uid() is not None:
            os.chown(self.workspace_dir, procs.SANDBOX_UID, procs.SANDBOX_UID)
        args = ["bwrap", *bwrap_isolation_args(self.workspace_dir, int(self.limits.workspace_mb),
                                               int(self.limits.tmp_mb), self.hidden_paths, int(self.limits.shm_mb),
                                               self.layout)]
        args += ["--chdir", self.layout.workdir, "--clearenv"]
        for key, value in self.shell_env().items():
            args += ["--setenv", key, value]
        return [*args, "--", "sh", "-c", SHELL_LOOP]

    def _spawn(self):  # noqa: ANN202 - see base
        if shutil.which("bwrap") is None:
            raise SandboxError("bubblewrap is not installed (apt-get install bubblewrap)")
        return super()._spawn()


def probe() -> str | None:
    """None if bwrap can build our sandbox here, else why not (cached for the process)."""
    global _probe_result
    if _probe_result is None:
        if shutil.which("bwrap") is None:
            _probe_result = "bwrap is not installed"
        elif shutil.which("script") is None:
            _probe_result = "script (util-linux / bsdutils) is not installed"
        else:
            argv = ["bwrap", *bwrap_isolation_args(None, 8, 8, ()), "--", "true"]
            _probe_result = probe_launch(argv, "bwrap")
    return _probe_result or None
