"""The Docker backend, through the docker SDK (an optional dependency, imported lazily).

One container per sandbox, from our locally built image (``abstain-gym terminal build-image``; never pulled):
``network_mode="none"``, memory and pids limits, read-only root, tmpfs /workspace, /tmp and /root, no capabilities,
no-new-privileges, ``--init``, auto-remove. The shell loop runs through ``docker exec`` with a terminal, driven by
pexpect over the exec socket.

Nothing may outlive us, even after ``kill -9``: the container's main process is ``cat`` reading a stdin that we
hold open through an attach socket with ``stdin_once``; when our process dies the socket closes, ``cat`` sees end of
file, the container stops and Docker removes it. As a second line, every container carries a label naming its
owner (host, pid, process start time), and each new sandbox first removes labelled containers whose owner is dead.
"""

from __future__ import annotations

import contextlib
import os
import socket
from pathlib import Path
from typing import Any

from agentabstain_gym.envs.terminal.sandbox.base import HOME, SHELL_LOOP, WORKSPACE, Sandbox, SandboxError

LABEL = "io.agentabstain-gym.sandbox"
OWNER_LABEL = "io.agentabstain-gym.owner"


def _docker() -> Any:
    try:
        import docker  # noqa: PLC0415 - optional dependency
    except ImportError as exc:
        raise SandboxError("the docker backend needs the docker SDK: pip install 'agentabstain-gym[docker]'") from exc
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
    """Remove labelled containers whose owning process is gone; returns their ids."""
    removed = []
    for container in docker_client.containers.list(all=True, filters={"label": LABEL}):
        if not _owner_alive(container.labels.get(OWNER_LABEL, "")):
            try:
                container.remove(force=True)
                removed.append(container.id)
            except Exception:  # noqa: BLE001 - it may be removing itself already
                pass
    return removed


class DockerSandbox(Sandbox):
    """Docker backend (see the module docstring)."""

    name = "docker"

    def __init__(self, workspace_dir: str | Path | None = None, limits: Any = None, hidden_paths: Any = (),
                 image: str | None = None) -> None:
        super().__init__(workspace_dir, limits, hidden_paths)
        if image is None:
            from agentabstain_gym.envs.terminal.image import image_name
            image = image_name()
        self.image = image
        self._client: Any = None
        self._container: Any = None
        self._sockets: list[Any] = []

    def _spawn(self) -> Any:
        from pexpect import fdpexpect

        docker = _docker()
        try:
            self._client = client()
            sweep(self._client)
            self._container = self._create(docker)
            keepalive = self._client.api.attach_socket(self._container.id, params={"stdin": 1, "stream": 1})
            self._sockets.append(keepalive)
            self._container.start()
            exec_id = self._client.api.exec_create(self._container.id, ["sh", "-c", SHELL_LOOP], stdin=True,
                                                   tty=True, environment=self.shell_env(), workdir=WORKSPACE,
                                                   user="0:0")["Id"]
            stream = self._client.api.exec_start(exec_id, tty=True, socket=True)
            self._sockets.append(stream)
        except docker.errors.ImageNotFound as exc:
            raise SandboxError(f"the docker image {self.image} does not exist: build it with "
                               "`abstain-gym terminal build-image`") from exc
        except docker.errors.DockerException as exc:
            raise SandboxError(f"could not start the docker sandbox: {exc}") from exc
        raw = getattr(stream, "_sock", stream)
        return fdpexpect.fdspawn(os.dup(raw.fileno()), timeout=30)  # its own fd: both sides close theirs

    def _create(self, docker: Any) -> Any:
        limits = self.limits
        tmpfs = {"/tmp": f"rw,exec,nosuid,nodev,size={int(limits.tmp_mb)}m,mode=1777",
                 HOME: "rw,exec,nosuid,nodev,size=64m,mode=0700", "/run": "rw,noexec,nosuid,size=1m"}
        volumes = {}
        if self.workspace_dir is None:
            tmpfs[WORKSPACE] = f"rw,exec,nosuid,nodev,size={int(limits.workspace_mb)}m,mode=0755"
        else:
            volumes[str(self.workspace_dir)] = {"bind": WORKSPACE, "mode": "rw"}
        memory = f"{int(limits.memory_mb)}m"
        api = self._client.api
        host_config = api.create_host_config(
            network_mode="none", mem_limit=memory, memswap_limit=memory, pids_limit=int(limits.max_processes),
            read_only=True, tmpfs=tmpfs, binds=volumes, cap_drop=["ALL"], security_opt=["no-new-privileges"],
            init=True, auto_remove=True)
        created = api.create_container(
            self.image, command=["sh", "-c", "cat >/dev/null"], stdin_open=True, tty=False,  # + StdinOnce
            labels={LABEL: "1", OWNER_LABEL: owner_tag()}, hostname="sandbox", working_dir=WORKSPACE, user="0:0",
            environment={}, host_config=host_config)
        return self._client.containers.get(created["Id"])

    def _exec(self, argv: list[str]) -> tuple[int, str]:
        try:
            result = self._container.exec_run(argv, user="0:0")
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

    def _kill_group(self, pgid: int | None) -> None:
        if pgid is None:
            if self._shell_ns_pid is not None:
                self._exec(["kill", "-9", str(self._shell_ns_pid)])
        elif pgid > 1:
            self._exec(["kill", "-9", "--", f"-{pgid}"])

    def _teardown(self) -> None:
        if self._container is not None:
            with contextlib.suppress(Exception):  # auto-remove may have won the race
                self._container.remove(force=True)
            self._container = None
        for sock in self._sockets:
            with contextlib.suppress(Exception):
                sock.close()
        self._sockets = []
        if self._client is not None:
            self._client.close()
            self._client = None


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
