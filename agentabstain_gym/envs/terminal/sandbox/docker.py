"""The Docker backend, through the docker SDK (an optional dependency, imported lazily).

One container per sandbox, from our locally built image (``abstain-gym terminal build-image``; never pulled):
``network_mode="none"``, memory and pids limits for the whole container, read-only root, tmpfs /tmp, /root and
/dev/shm with size caps, the workspace on a tmpfs-backed volume, no capabilities, no-new-privileges, our seccomp
profile (no ptrace), ``--init``, auto-remove. The agent's shell loop runs through ``docker exec`` as the
unprivileged uid :data:`~agentabstain_gym.envs.terminal.image.AGENT_UID` with a terminal, driven by pexpect over
the exec socket; the container's own processes run as root, so the agent can neither signal nor trace them.

The checker (:meth:`DockerSandbox.check`) runs in a second container on the same workspace volume, after the agent's
container (and with it every process the agent started) is removed: it shares nothing else with the agent.

Nothing may outlive us, even after ``kill -9``: the container's main process is ``cat`` reading a stdin that we
hold open through an attach socket with ``stdin_once``; when our process dies the socket closes, ``cat`` sees end of
file, the container stops and Docker removes it. The reaper (:mod:`.reaper`) removes the containers and the volume
when our process dies, and every container and volume carries a label naming its owner (host, pid, process start
time), so each new sandbox first removes those whose owner is dead.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import select
import socket
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentabstain_gym.envs.terminal.image import AGENT_UID
from agentabstain_gym.envs.terminal.sandbox import seccomp
from agentabstain_gym.envs.terminal.sandbox.base import (
    HOME,
    SHELL_LOOP,
    WORKSPACE,
    CommandResult,
    Sandbox,
    SandboxError,
    _Sink,
)
from agentabstain_gym.envs.terminal.sandbox.reaper import client as reaper

LABEL = "io.agentabstain-gym.sandbox"
OWNER_LABEL = "io.agentabstain-gym.owner"


def _docker() -> Any:
    try:
        import docker  # noqa: PLC0415 - optional dependency
    except ImportError as exc:
        raise SandboxError("the docker backend needs the docker SDK: pip install docker (the [docker] extra)") from exc
    return docker


def client() -> Any:
    """A docker client for the daemon of the environment (DOCKER_HOST or the default socket)."""
    return _docker().from_env(timeout=60)


def _start_time(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()[19].decode()
    except (OSError, IndexError):
        return None


def owner_tag() -> str:
    """host:pid:start-time of this process, so a dead owner can be told from a reused pid."""
    return f"{socket.gethostname()}:{os.getpid()}:{_start_time(os.getpid())}"


def _owner_alive(tag: str) -> bool:
    host, _, rest = tag.partition(":")
    pid_text, _, start = rest.partition(":")
    if host != socket.gethostname():
        return True  # not ours to judge
    try:
        pid = int(pid_text)
    except ValueError:
        return False
    return _start_time(pid) == start


def sweep(docker_client: Any) -> list[str]:
    """Remove labelled containers and volumes whose owning process is gone; returns their ids."""
    removed = []
    for container in docker_client.containers.list(all=True, filters={"label": LABEL}):
        if not _owner_alive(container.labels.get(OWNER_LABEL, "")):
            try:
                container.remove(force=True)
                removed.append(container.id)
            except Exception:  # noqa: BLE001 - it may be removing itself already
                pass
    for volume in docker_client.volumes.list(filters={"label": LABEL}):
        if not _owner_alive((volume.attrs.get("Labels") or {}).get(OWNER_LABEL, "")):
            with contextlib.suppress(Exception):  # still in use by a container being removed
                volume.remove(force=True)
                removed.append(volume.name)
    return removed


class DockerSandbox(Sandbox):
    """Docker backend (see the module docstring)."""

    name = "docker"

    def __init__(self, workspace_dir: str | Path | None = None, limits: Any = None, hidden_paths: Any = (),
                 image: str | None = None, layout: Any = None) -> None:
        super().__init__(workspace_dir, limits, hidden_paths, layout)
        if image is None:
            from agentabstain_gym.envs.terminal.image import image_name
            image = image_name()
        self.image = image
        self._client: Any = None
        self._container: Any = None
        self._volume: str | None = None
        self._sockets: list[Any] = []
        self._reaper_entries: list[tuple[str, ...]] = []

    def script_env(self) -> dict[str, str]:
        return {**super().script_env(), "USER": "agent"}

    def _spawn(self) -> Any:
        from pexpect import fdpexpect

        docker = _docker()
        try:
            self._client = client()
            sweep(self._client)
            if self.workspace_dir is None:
                self._volume = self._create_volume()
            elif os.geteuid() == 0:
                os.chown(self.workspace_dir, AGENT_UID, AGENT_UID)
            self._container = self._create(docker, ["sh", "-c", "cat >/dev/null"], user="0:0", stdin=True)
            keepalive = self._client.api.attach_socket(self._container.id, params={"stdin": 1, "stream": 1})
            self._sockets.append(keepalive)
            self._container.start()
            exec_id = self._client.api.exec_create(self._container.id, ["sh", "-c", SHELL_LOOP], stdin=True,
                                                   tty=True, environment=self.shell_env(), workdir=WORKSPACE,
                                                   user=f"{AGENT_UID}:{AGENT_UID}")["Id"]
            stream = self._client.api.exec_start(exec_id, tty=True, socket=True)
            self._sockets.append(stream)
        except docker.errors.ImageNotFound as exc:
            raise SandboxError(f"the docker image {self.image} does not exist: build it with "
                               "`abstain-gym terminal build-image`") from exc
        except docker.errors.DockerException as exc:
            raise SandboxError(f"could not start the docker sandbox: {exc}") from exc
        raw = getattr(stream, "_sock", stream)
        return fdpexpect.fdspawn(os.dup(raw.fileno()), timeout=30)  # its own fd: both sides close theirs

    def _create_volume(self) -> str:
        name = f"agentabstain-gym-ws-{os.getpid()}-{secrets.token_hex(6)}"
        opts = f"size={int(self.limits.workspace_mb)}m,uid={AGENT_UID},gid={AGENT_UID},mode=0755"
        self._client.api.create_volume(name, driver="local", labels={LABEL: "1", OWNER_LABEL: owner_tag()},
                                       driver_opts={"type": "tmpfs", "device": "tmpfs", "o": opts})
        self._reaper_entries.append(reaper().add("volume", name))
        return name

    def _create(self, docker: Any, command: list[str], user: str, stdin: bool = False,
                environment: dict[str, str] | None = None, tty: bool = False) -> Any:
        limits = self.limits
        owner = f"uid={AGENT_UID},gid={AGENT_UID}"
        tmpfs = {"/tmp": f"rw,exec,nosuid,nodev,size={int(limits.tmp_mb)}m,mode=1777",
                 HOME: f"rw,exec,nosuid,nodev,size=64m,mode=0700,{owner}", "/run": "rw,noexec,nosuid,size=1m"}
        if self._volume is not None:
            binds = {self._volume: {"bind": WORKSPACE, "mode": "rw"}}
        else:
            binds = {str(self.workspace_dir): {"bind": WORKSPACE, "mode": "rw"}}
        memory = f"{int(limits.memory_mb)}m"
        api = self._client.api
        security = ["no-new-privileges"] + ([f"seccomp={seccomp.docker_profile()}"] if seccomp.supported() else [])
        host_config = api.create_host_config(
            network_mode="none", mem_limit=memory, memswap_limit=memory, pids_limit=int(limits.max_processes),
            read_only=True, tmpfs=tmpfs, binds=binds, cap_drop=["ALL"], security_opt=security,
            shm_size=f"{int(limits.shm_mb)}m", init=True, auto_remove=True,
            log_config={"type": "none", "config": {}})
        created = api.create_container(
            self.image, command=command, stdin_open=stdin, tty=tty,  # stdin: + StdinOnce (the keep-alive)
            labels={LABEL: "1", OWNER_LABEL: owner_tag()}, hostname="sandbox", working_dir=WORKSPACE, user=user,
            environment=environment or {}, host_config=host_config)
        self._reaper_entries.append(reaper().add("container", created["Id"]))
        return self._client.containers.get(created["Id"])

    def _exec(self, argv: list[str], user: str = "0:0") -> tuple[int, str]:
        try:
            result = self._container.exec_run(argv, user=user)
        except Exception as exc:  # noqa: BLE001 - the container may be gone
            return -1, str(exc)
        return result.exit_code, result.output.decode("utf-8", "replace")

    def _foreground_group(self) -> tuple[int, int] | None:
        if self._shell_ns_pid is None:
            return None
        code, text = self._exec(["cat", f"/proc/{self._shell_ns_pid}/stat"])
        fields = text[text.rfind(")") + 2:].split()
        if code != 0 or len(fields) < 6:
            return None
        return int(fields[2]), int(fields[5])

    def _shell_alive(self) -> bool:
        if self._shell_ns_pid is None or self._container is None:
            return False
        code, text = self._exec(["cat", f"/proc/{self._shell_ns_pid}/stat"])
        return code == 0 and text[text.rfind(")") + 2:][:1] not in ("Z", "X", "")

    def _kill_group(self, pgid: int | None) -> None:
        agent = f"{AGENT_UID}:{AGENT_UID}"  # no capabilities in the container: only the agent's uid may signal it
        if pgid is None:
            if self._shell_ns_pid is not None:
                self._exec(["kill", "-9", str(self._shell_ns_pid)], user=agent)
        elif pgid > 1:
            self._exec(["kill", "-9", "--", f"-{pgid}"], user=agent)

    def _remove_container(self) -> None:
        if self._container is not None:
            with contextlib.suppress(Exception):  # auto-remove may have won the race
                self._container.remove(force=True)
            self._container = None
        for sock in self._sockets:
            with contextlib.suppress(Exception):
                sock.close()
        self._sockets = []

    def check(self, text: str, args: Sequence[str] = (), timeout: float | None = None,
              output_cap: int | None = None, kill_agent: bool = True, files: bytes | None = None) -> CommandResult:
        """Run the checker in a new container on the same workspace (see :meth:`Sandbox.check`).

        The checker's container starts first and waits for a line on its stdin, so the tmpfs volume stays mounted;
        then the agent's container is removed with every process in it, and only then is the checker told to go.
        """
        if self._client is None or self._closed:
            raise SandboxError("the docker sandbox is not running")
        if files is not None:
            raise SandboxError("the docker sandbox of our own tasks takes no checker files")
        docker = _docker()
        command = ["sh", "-c", 'read -r _ && exec bash --noprofile --norc -c "$0" task-check "$@" </dev/null',
                   text, *map(str, args)]
        timeout = timeout or self.limits.script_timeout
        try:
            checker = self._create(docker, command, user=f"{AGENT_UID}:{AGENT_UID}", stdin=True,
                                   environment=self.checker_env())
            sock = self._client.api.attach_socket(checker.id, params={"stdin": 1, "stdout": 1, "stderr": 1,
                                                                     "stream": 1})
            checker.start()
        except docker.errors.DockerException as exc:
            raise SandboxError(f"could not start the docker checker: {exc}") from exc
        if kill_agent:
            self._agent_killed = True
            self._remove_container()
        return collect_checker(checker, sock, b"go\n", timeout, int(output_cap or self.limits.output_cap))

    def _teardown(self) -> None:
        self._remove_container()
        if self._volume is not None and self._client is not None:
            for _ in range(20):  # the container releases the volume asynchronously
                try:
                    self._client.api.remove_volume(self._volume, force=True)
                    break
                except Exception:  # noqa: BLE001 - in use for a moment, or already gone
                    if not any(v.name == self._volume for v in self._client.volumes.list()):
                        break
                    time.sleep(0.1)
            self._volume = None
        for entry in self._reaper_entries:
            reaper().remove(*entry)
        self._reaper_entries = []
        if self._client is not None:
            self._client.close()
            self._client = None


def collect_checker(checker: Any, sock: Any, payload: bytes, timeout: float, cap: int) -> CommandResult:
    """Send ``payload`` to a started checker container's stdin, read its output (capped) until it exits or the
    timeout passes, and remove it."""
    raw = getattr(sock, "_sock", sock)
    sink = _Sink(cap)
    deadline = time.monotonic() + timeout
    timed_out, status, frames = False, -1, _Frames(sink)
    try:
        raw.sendall(payload)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                timed_out = True
                break
            ready, _, _ = select.select([raw], [], [], min(left, 0.5))
            if ready:
                data = raw.recv(65536)
                if not data:
                    break
                frames.feed(data)
        if not timed_out:
            try:
                status = int(checker.wait(timeout=max(1.0, deadline - time.monotonic()))["StatusCode"])
            except Exception:  # noqa: BLE001 - requests' timeout types vary by version
                timed_out = True
    finally:
        with contextlib.suppress(Exception):
            sock.close()
        with contextlib.suppress(Exception):
            checker.remove(force=True)
    out, truncated = sink.text(True)
    if timed_out:
        return CommandResult(out + f"\n[the checker ran longer than {timeout:g} s and was stopped]", -1,
                             timed_out=True, truncated=truncated)
    return CommandResult(out, status, truncated=truncated)


class _Frames:
    """Docker's multiplexed attach stream without a terminal: 8-byte headers (stream, size), then the payload."""

    def __init__(self, sink: _Sink) -> None:
        self.sink = sink
        self.buffer = b""
        self.left = 0

    def feed(self, data: bytes) -> None:
        self.buffer += data
        while self.buffer:
            if self.left == 0:
                if len(self.buffer) < 8:
                    return
                self.left = int.from_bytes(self.buffer[4:8], "big")
                self.buffer = self.buffer[8:]
                continue
            piece = self.buffer[:self.left]
            self.sink.add(piece)
            self.left -= len(piece)
            self.buffer = self.buffer[len(piece):]


def daemon_problem() -> str | None:
    """None if the docker SDK is installed and the daemon answers, else why not (one line)."""
    try:
        docker = _docker()
    except SandboxError as exc:
        return str(exc)
    try:
        c = client()
    except docker.errors.DockerException as exc:
        return f"the Docker daemon does not answer ({str(exc).splitlines()[0][:200]})"
    try:
        c.ping()
    except docker.errors.DockerException as exc:
        return f"the Docker daemon does not answer ({str(exc).splitlines()[0][:200]})"
    finally:
        c.close()
    return None


def probe(image: str | None = None) -> str | None:
    """None if the Docker daemon answers and our image exists, else why not (not cached: the image may appear)."""
    try:
        docker = _docker()
    except SandboxError as exc:
        return str(exc)
    try:
        c = client()
    except docker.errors.DockerException as exc:
        return f"the Docker daemon does not answer ({exc})"
    try:
        c.ping()
        if image is None:
            from agentabstain_gym.envs.terminal.image import image_name
            image = image_name()
        c.images.get(image)
    except docker.errors.ImageNotFound:
        return f"the image {image} is not built (run `abstain-gym terminal build-image`)"
    except docker.errors.DockerException as exc:
        return f"the Docker daemon does not answer ({exc})"
    finally:
        c.close()
    return None
