"""The util-linux fallback: ``unshare`` plus a small mount script, for machines without bubblewrap.

It builds what the bwrap backend builds, by hand: new user, mount, PID, network, IPC, UTS and cgroup namespaces; a
tmpfs root holding read-only binds of /usr and /etc, fresh /proc and /dev (with its own devpts), tmpfs /tmp, /root
and /workspace; ``pivot_root`` into it; loopback up; then ``setpriv`` drops every capability (bounding set included)
and sets no-new-privs and a parent-death signal before the shell loop starts. The launcher runs as a non-root uid
when we are root (so the process limit holds) and dies with us; ``--kill-child`` takes the sandbox with it.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from agentabstain_gym.envs.terminal.sandbox import procs
from agentabstain_gym.envs.terminal.sandbox.base import HOME, SHELL_LOOP, SandboxError, _sh_quote
from agentabstain_gym.envs.terminal.sandbox.hostproc import HostProcessSandbox, probe_launch
from agentabstain_gym.envs.terminal.sandbox.layout import DEFAULT_LAYOUT, SandboxLayout

_REQUIRED = ("unshare", "setpriv", "pivot_root", "mount", "umount", "script")
_probe_result: str | None = None


def _mount_script(workspace_dir: Path | None, workspace_mb: int, tmp_mb: int, hidden: tuple[Path, ...],
                  final: str, shm_mb: int = 64, layout: SandboxLayout = DEFAULT_LAYOUT) -> str:
    """The sh script run as root of the new user namespace, ending by exec'ing ``final`` without privileges."""
    q = _sh_quote
    lines = [
        "set -e", f"R={q(_staging_dir(workspace_dir))}", "mount -t tmpfs -o size=4m,mode=0755 agx-root \"$R\"",
        "cd \"$R\"",
        "mkdir -p usr etc proc dev tmp root var .old",
        "for d in usr etc; do mount --rbind /$d $d; mount -o remount,bind,ro $d; done",
        "for l in bin sbin lib lib32 lib64 libx32; do if [ -L /$l ]; then ln -s \"$(readlink /$l)\" $l; "
        "elif [ -d /$l ]; then mkdir $l; mount --rbind /$l $l; mount -o remount,bind,ro $l; fi; done",
        "mount -t proc proc proc",
        "mount -t tmpfs -o size=1m,mode=0755 agx-dev dev",
        "for n in null zero full random urandom tty; do touch dev/$n; mount --bind /dev/$n dev/$n; done",
        "mkdir dev/pts dev/shm",
        f"mount -t tmpfs -o size={shm_mb}m,mode=1777 agx-shm dev/shm",
        "mount -t devpts -o newinstance,ptmxmode=0666,mode=0620 devpts dev/pts",
        "ln -s pts/ptmx dev/ptmx; ln -s /proc/self/fd dev/fd",
        "ln -s /proc/self/fd/0 dev/stdin; ln -s /proc/self/fd/1 dev/stdout; ln -s /proc/self/fd/2 dev/stderr",
        "mount -o remount,ro,bind dev",
        f"mount -t tmpfs -o size={tmp_mb}m,mode=1777 agx-tmp tmp",
        f"mount -t tmpfs -o size=64m,mode=0700 agx-home {HOME.lstrip('/')}",
        "ln -s ../tmp var/tmp",
    ]
    for path in layout.mounts:
        target = q("." + path)
        lines.append(f"mkdir -p {target}")
        if path == layout.workdir and workspace_dir is not None:
            lines.append(f"mount --bind {q(str(workspace_dir))} {target}")
        else:
            lines.append(f"mount -t tmpfs -o size={workspace_mb}m,mode=0755 agx-ws {target}")
    for path in hidden:
        if path.exists() and any(path == Path(t) or Path(t) in path.parents for t in ("/usr", "/etc")):
            target = q("." + str(path))
            if path.is_dir():
                lines.append(f"mount -t tmpfs -o size=1m,mode=0555,ro agx-hidden {target}")
            else:
                lines.append(f"mount --bind -o ro /dev/null {target}")
    lines += [
        "if command -v ip >/dev/null; then ip link set lo up; fi",
        "hostname sandbox 2>/dev/null || true",
        "pivot_root . .old", "cd /", "umount -l /.old", "rmdir /.old",
        "mount -o remount,ro,bind /",
        f"cd {q(layout.workdir)}",
        "exec setpriv --no-new-privs --inh-caps=-all --bounding-set=-all --pdeathsig KILL " + final,
    ]
    return "\n".join(lines) + "\n"


def _staging_dir(workspace_dir: Path | None) -> str:
    """An existing host directory to build the new root on (hidden by it in our mount namespace only), which must
    not contain the workspace we still have to bind."""
    for candidate in ("/tmp", "/mnt", "/media", "/srv", "/opt", "/var/tmp"):
        path = Path(candidate)
        if path.is_dir() and not path.is_symlink() and (workspace_dir is None or path not in workspace_dir.parents):
            return candidate
    raise SandboxError("the unshare backend found no directory to build its root on (tried /tmp, /mnt, ...)")


class UnshareSandbox(HostProcessSandbox):
    """util-linux backend (see the module docstring)."""

    name = "unshare"

    def _argv(self) -> list[str]:
        if self.workspace_dir is not None and procs.drop_uid() is not None:
            os.chown(self.workspace_dir, procs.SANDBOX_UID, procs.SANDBOX_UID)
        env = " ".join(f"{k}={_sh_quote(v)}" for k, v in self.shell_env().items())
        final = f"env -i {env} sh -c {_sh_quote(SHELL_LOOP)}"
        script = _mount_script(self.workspace_dir, int(self.limits.workspace_mb), int(self.limits.tmp_mb),
                               self.hidden_paths, final, int(self.limits.shm_mb), self.layout)
        return ["unshare", "--user", "--map-root-user", "--mount", "--propagation", "private", "--pid",
                "--kill-child", "--net", "--ipc", "--uts", "--cgroup", "--", "sh", "-c", script]

    def _spawn(self):  # noqa: ANN202 - see base
        missing = [tool for tool in _REQUIRED if shutil.which(tool) is None]
        if missing:
            raise SandboxError(f"the unshare backend needs {', '.join(missing)} (util-linux)")
        return super()._spawn()


def probe() -> str | None:
    """None if the unshare backend can build its sandbox here, else why not (cached for the process)."""
    global _probe_result
    if _probe_result is None:
        missing = [tool for tool in _REQUIRED if shutil.which(tool) is None]
        if missing:
            _probe_result = f"missing {', '.join(missing)} (util-linux)"
        else:
            script = _mount_script(None, 8, 8, (), "true")
            argv = ["unshare", "--user", "--map-root-user", "--mount", "--propagation", "private", "--pid",
                    "--kill-child", "--net", "--ipc", "--uts", "--cgroup", "--", "sh", "-c", script]
            _probe_result = probe_launch(argv, "unshare")
    return _probe_result or None
