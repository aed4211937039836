"""The docker backend for Terminal-Bench tasks: the task's own image, its working directory, its tests.

A Terminal-Bench task is built from its Dockerfile (:mod:`agentabstain_gym.envs.terminal.native.dockerbuild`) and
expects its container as Terminal-Bench makes it: a writable file system and root. So the agent's container here
has a writable root (no workspace volume), the agent's shell runs as root with a small set of capabilities (file
ownership and permissions only: no network, no new privileges, our seccomp profile, memory and pids limits), and
the task's ``WORKDIR`` is where it starts.

The tests run as Terminal-Bench runs them, in the file system the agent left, but apart from it: every process of
the agent is killed with its container, the stopped container is committed to a temporary image, and the checker
runs in a fresh container of that image, with the task's ``tests/`` in a fresh ``/tests`` (a volume mounted
read-only, so nothing the tests run can rewrite them). The temporary image is removed afterwards.

Root in the container can rewrite anything the tests run with, so before the checker starts the agent's changes
(``docker diff``, computed by the daemon) are screened (:func:`screen_changes`): a changed, added or removed file in
the system's program and library trees, in any ``site-packages``, or in the dynamic loader's configuration, a changed
interpreter in a directory on the task's ``PATH``, or an added program there that shadows one of the same name
elsewhere on it, and the check does not run (no reward). Python bytecode the agent wrote is deleted first (Python
writes it by itself; a forged one would run instead of its source).
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import re
import secrets
import shlex
import time
from collections.abc import Sequence
from typing import Any

from agentabstain_gym.envs.terminal.sandbox import seccomp
from agentabstain_gym.envs.terminal.sandbox.base import (
    SANDBOX_PATH,
    SHELL_LOOP,
    CommandResult,
    Sandbox,
    SandboxError,
)
from agentabstain_gym.envs.terminal.sandbox.docker import (
    LABEL,
    OWNER_LABEL,
    DockerSandbox,
    _docker,
    client,
    collect_checker,
    owner_tag,
    sweep,
)
from agentabstain_gym.envs.terminal.sandbox.hostproc import filled_dirs
from agentabstain_gym.envs.terminal.sandbox.reaper import client as reaper

#: What root in the agent's container may still do: own, chmod and chown its files (as Docker's defaults allow).
CAPABILITIES = ["CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "SETGID", "SETUID"]
ROOT = "0:0"
#: The checker container's command (run by /bin/sh, not by the name "sh", which the container's PATH would resolve): its
#: own steps use the system directories, so a `tar`, `head` or `bash` the agent put in a directory the task's PATH
#: lists first never runs in their place; the tests get the task's PATH back.
_CHECKER = ('p=$PATH; PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin; b=$(command -v bash) || exit 97; '
            'read -r _ n || exit 97; if [ "$n" -gt 0 ]; then head -c "$n" | tar -x -p -C / -f - || exit 97; fi; '
            'PATH=$p exec "$b" --noprofile --norc -c "$0" task-check "$@" </dev/null')


#: Trees whose every file the checker and the tests run with: nothing in them may change.
_SYSTEM_TREES = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/usr/bin", "/usr/sbin", "/usr/lib", "/usr/lib32",
                 "/usr/lib64", "/usr/libx32", "/usr/libexec", "/etc/ld.so.conf.d")
_SYSTEM_FILES = ("/etc/ld.so.preload", "/etc/ld.so.cache", "/etc/ld.so.conf")
#: Programs a test script runs by name; in a directory on the PATH they may not change (other files there may: a task
#: can be about fixing /usr/local/bin/backup.sh).
_INTERPRETERS = re.compile(r"(?:ba|da|k|z)?sh|env|python[0-9.]*(?:-config)?|pip[0-9.]*|py\.?test|uvx?|perl[0-9.]*|"
                           r"node|ruby|timeout|tar")
#: Where Docker itself mounts a file into every container it starts with an init (the host's, mounted afresh in the
#: checker): its mount point shows in docker diff as an added file.
_DOCKER_MOUNTS = ("/usr/sbin/docker-init",)
#: docker diff's kinds
_MODIFIED, _ADDED = 0, 1


def _under(path: str, tree: str) -> bool:
    return path == tree or path.startswith(tree + "/")


def screen_changes(changes: list[dict[str, Any]], path_dirs: list[str]) -> tuple[list[str], list[str], list[str]]:
    """Sort ``docker diff`` entries into (tampered paths, added programs to check for shadowing, bytecode to delete),
    each sorted. See the module docstring for the rules."""
    entries = [(str(c.get("Path", "")), int(c.get("Kind", _MODIFIED))) for c in changes or []]
    parents = {posixpath.dirname(p) for p, _ in entries}
    tampered: list[str] = []
    shadow: list[str] = []
    bytecode: list[str] = []
    for path, kind in entries:
        name = posixpath.basename(path)
        if name.endswith(".pyc"):
            if kind != 2:
                bytecode.append(path)
            continue
        if name == "__pycache__" or (kind == _MODIFIED and path in parents) or path in _DOCKER_MOUNTS:  # a directory whose entries changed
            continue
        python_lib = "/site-packages/" in path + "/" or "/dist-packages/" in path + "/" \
            or re.match(r"/usr/local/lib/python[0-9.]+(/|$)", path) is not None
        if any(_under(path, t) for t in _SYSTEM_TREES) or path in _SYSTEM_FILES or python_lib \
                or path.startswith("/etc/python"):
            tampered.append(path)
        elif posixpath.dirname(path) in path_dirs and kind in (_MODIFIED, _ADDED):
            if _INTERPRETERS.fullmatch(name):
                tampered.append(path)
            elif kind == _ADDED:
                shadow.append(path)
    return sorted(tampered), sorted(shadow), sorted(bytecode)


def screen_script(shadow: list[str], bytecode: list[str]) -> str:
    """Bash run first in the checker container (whose system trees the screen found unchanged): refuse (exit 3) if an
    added program shadows another of its name on the PATH, then delete the agent's bytecode."""
    lines = []
    if shadow:
        lines.append("__agx_tp=$PATH; for f in " + " ".join(shlex.quote(p) for p in shadow) + "; do "
                     "n=${f##*/}; d=${f%/*}; IFS=:; for e in $__agx_tp; do if [ \"$e\" != \"$d\" ] && "
                     "[ -e \"$e/$n\" ]; then printf '\\n[the agent added %s, which shadows %s/%s on the PATH: the "
                     "tests do not run]\\n' \"$f\" \"$e\" \"$n\"; exit 3; fi; done; unset IFS; done")
    if bytecode:
        dirs = sorted({posixpath.dirname(p) for p in bytecode if posixpath.basename(posixpath.dirname(p))
                       == "__pycache__"})
        loose = [p for p in bytecode if posixpath.basename(posixpath.dirname(p)) != "__pycache__"]
        lines.append(f"PATH={SANDBOX_PATH} rm -rf -- " + " ".join(shlex.quote(p) for p in (*dirs, *loose)))
    return "".join(line + "\n" for line in lines)


class NativeDockerSandbox(DockerSandbox):
    """A Terminal-Bench task's container (see the module docstring)."""

    name = "docker"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._images: list[str] = []
        self._sealed_volumes: list[str] = []

    def script_env(self) -> dict[str, str]:
        return Sandbox.script_env(self)

    def _spawn(self) -> Any:
        from pexpect import fdpexpect

        docker = _docker()
        try:
            self._client = client()
            sweep(self._client)
            self._container = self._create_native(self.image, ["sh", "-c", "cat >/dev/null"])
            keepalive = self._client.api.attach_socket(self._container.id, params={"stdin": 1, "stream": 1})
            self._sockets.append(keepalive)
            self._container.start()
            exec_id = self._client.api.exec_create(self._container.id, ["sh", "-c", SHELL_LOOP], stdin=True,
                                                   tty=True, environment=self.shell_env(),
                                                   workdir=self.layout.workdir, user=ROOT)["Id"]
            stream = self._client.api.exec_start(exec_id, tty=True, socket=True)
            self._sockets.append(stream)
        except docker.errors.ImageNotFound as exc:
            raise SandboxError(f"the docker image {self.image} does not exist (the task's image is built "
                               "first; see `abstain-gym terminal check`)") from exc
        except docker.errors.DockerException as exc:
            raise SandboxError(f"could not start the docker sandbox: {str(exc).splitlines()[0][:300]}") from exc
        raw = getattr(stream, "_sock", stream)
        return fdpexpect.fdspawn(os.dup(raw.fileno()), timeout=30)

    def _create_native(self, image: str, command: list[str], fresh: Sequence[str] = (),
                       environment: dict[str, str] | None = None, binds: dict[str, Any] | None = None) -> Any:
        limits = self.limits
        memory = f"{int(limits.memory_mb)}m"
        security = ["no-new-privileges"] + ([f"seccomp={seccomp.docker_profile()}"] if seccomp.supported() else [])
        tmpfs = {d: f"rw,exec,size={int(limits.tmp_mb)}m,mode=0755" for d in fresh}
        api = self._client.api
        host_config = api.create_host_config(
            network_mode="none", mem_limit=memory, memswap_limit=memory, pids_limit=int(limits.max_processes),
            tmpfs=tmpfs, binds=binds or {}, cap_drop=["ALL"], cap_add=CAPABILITIES, security_opt=security,
            shm_size=f"{int(limits.shm_mb)}m", init=True, log_config={"type": "none", "config": {}})
        created = api.create_container(
            image, command=command, stdin_open=True, labels={LABEL: "1", OWNER_LABEL: owner_tag()},
            hostname="sandbox", working_dir=self.layout.workdir, user=ROOT, environment=environment or {},
            host_config=host_config)
        self._reaper_entries.append(reaper().add("container", created["Id"]))
        return self._client.containers.get(created["Id"])

    def _kill_group(self, pgid: int | None) -> None:
        if pgid is None:
            if self._shell_ns_pid is not None:
                self._exec(["kill", "-9", str(self._shell_ns_pid)], user=ROOT)
        elif pgid > 1:
            self._exec(["kill", "-9", "--", f"-{pgid}"], user=ROOT)

    def setup_step(self, text: str, files: bytes | None = None, timeout: float | None = None,
                   output_cap: int | None = None) -> CommandResult:
        """Unpack ``files`` into the container and run ``text`` as root in the working directory (the task's own
        Dockerfile was built; this is for an overlay's environment edits)."""
        if self._container is None or self._agent_killed:
            raise SandboxError("the docker sandbox is not running")
        try:
            if files:
                self._container.put_archive("/", files)
            seconds = str(max(1, int(timeout or self.limits.script_timeout)))
            result = self._container.exec_run(["timeout", seconds, "bash", "--noprofile", "--norc", "-c", text],
                                              user=ROOT, workdir=self.layout.workdir, environment=self.script_env())
        except Exception as exc:  # noqa: BLE001 - the docker SDK raises several kinds
            raise SandboxError(f"a setup step failed in the docker sandbox: {str(exc).splitlines()[0][:300]}") \
                from exc
        output = result.output.decode("utf-8", "replace")
        cap = int(output_cap or self.limits.output_cap)
        return CommandResult(output[-cap:], int(result.exit_code), timed_out=result.exit_code == 124)

    def check(self, text: str, args: Sequence[str] = (), timeout: float | None = None,
              output_cap: int | None = None, kill_agent: bool = True, files: bytes | None = None) -> CommandResult:
        """Kill the agent's container, snapshot it, and run the checker in a fresh container of the snapshot."""
        if self._client is None or self._closed or self._container is None:
            raise SandboxError("the docker sandbox is not running")
        docker = _docker()
        self._agent_killed = True
        try:
            with contextlib.suppress(docker.errors.APIError):
                self._container.kill()
            self._container.wait(timeout=30)
            layout_path = dict(self.layout.env).get("PATH", SANDBOX_PATH)
            tampered, shadow, bytecode = screen_changes(
                self._container.diff(), sorted({d for d in f"{layout_path}:{SANDBOX_PATH}".split(":") if d}))
            if tampered:
                self._remove_container()
                listed = ", ".join(tampered[:5]) + (f" and {len(tampered) - 5} more" if len(tampered) > 5 else "")
                return CommandResult(f"[the agent changed files the tests run with ({listed}): in the docker backend "
                                     "the agent is root, so the tests do not run on a changed system]\n", 3)
            text = screen_script(shadow, bytecode) + text
            snapshot = self._container.commit(repository="agentabstain-gym-check", tag=secrets.token_hex(8),
                                              changes=[f"LABEL {LABEL}=1"])
            self._images.append(snapshot.id)
            self._remove_container()
            sealed = filled_dirs(files, self.layout.check_dirs)
            binds = self._sealed(snapshot.id, sealed, files) if files and sealed else {}
            files = None if binds else files
            checker = self._create_native(snapshot.id, ["/bin/sh", "-c", _CHECKER, text, *map(str, args)],
                                          fresh=[d for d in self.layout.check_dirs if d not in binds.values()],
                                          environment=self.checker_env(),
                                          binds={v: {"bind": d, "mode": "ro"} for v, d in binds.items()})
            sock = self._client.api.attach_socket(checker.id, params={"stdin": 1, "stdout": 1, "stderr": 1,
                                                                     "stream": 1})
            checker.start()
        except docker.errors.DockerException as exc:
            raise SandboxError(f"could not start the docker checker: {str(exc).splitlines()[0][:300]}") from exc
        payload = files or b""
        return collect_checker(checker, sock, f"go {len(payload)}\n".encode() + payload,
                               timeout or self.limits.script_timeout, int(output_cap or self.limits.output_cap))

    def _sealed(self, image: str, dirs: list[str], files: bytes) -> dict[str, str]:
        """Volumes holding what ``files`` puts in ``dirs`` (a task's tests), mounted read-only in the checker: root
        there could rewrite a tmpfs, and a program of the agent's that the test script runs before pytest would
        rewrite the tests pytest reads next. Filled through a container that never starts."""
        api = self._client.api
        volumes: dict[str, str] = {}
        for d in dirs:
            name = f"agentabstain-gym-tests-{os.getpid()}-{secrets.token_hex(6)}"
            api.create_volume(name, driver="local", labels={LABEL: "1", OWNER_LABEL: owner_tag()})
            self._reaper_entries.append(reaper().add("volume", name))
            self._sealed_volumes.append(name)
            volumes[name] = d
        helper = api.create_container(image, command=["true"], labels={LABEL: "1", OWNER_LABEL: owner_tag()},
                                      host_config=api.create_host_config(
                                          network_mode="none",
                                          binds={v: {"bind": d, "mode": "rw"} for v, d in volumes.items()}))
        try:
            api.put_archive(helper["Id"], "/", files)
        finally:
            api.remove_container(helper["Id"], force=True)
        return volumes

    def _teardown(self) -> None:
        self._remove_container()
        if self._client is not None:
            for name in self._sealed_volumes:
                for _ in range(20):  # the checker releases the volume asynchronously
                    try:
                        self._client.api.remove_volume(name, force=True)
                        break
                    except Exception as exc:  # noqa: BLE001 - in use for a moment, or already gone
                        if getattr(getattr(exc, "response", None), "status_code", None) == 404:
                            break
                        time.sleep(0.1)
        self._sealed_volumes = []
        if self._images and self._client is not None:
            for image in self._images:
                with contextlib.suppress(Exception):  # still referenced for a moment, or gone
                    self._client.images.remove(image, force=True)
        self._images = []
        super()._teardown()
