"""Sandboxes for the terminal family: one module per backend, one protocol (:mod:`.base`).

``make_sandbox(backend, workspace_dir, limits, unsafe=False)`` builds one; ``available_backends()`` says which work
on this machine, in the order ``backend=None`` picks them (bwrap, unshare, docker; never local).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agentabstain_gym.envs.terminal.sandbox.base import (
    INSTALL_HINT,
    CommandResult,
    Sandbox,
    SandboxError,
    SandboxLimits,
    SandboxUnavailable,
)
from agentabstain_gym.envs.terminal.sandbox.layout import SandboxLayout

BACKENDS = ("bwrap", "unshare", "docker", "local")
AUTO_ORDER = ("bwrap", "unshare", "docker")

__all__ = ["AUTO_ORDER", "BACKENDS", "CommandResult", "INSTALL_HINT", "Sandbox", "SandboxError", "SandboxLayout",
           "SandboxLimits", "SandboxUnavailable", "available_backends", "make_sandbox", "resolve_backend", "why_unavailable"]


def why_unavailable(backend: str) -> str | None:
    """None if ``backend`` can run here, else a sentence saying why not."""
    if backend == "bwrap":
        from agentabstain_gym.envs.terminal.sandbox import bwrap
        return bwrap.probe()
    if backend == "unshare":
        from agentabstain_gym.envs.terminal.sandbox import unshare
        return unshare.probe()
    if backend == "docker":
        from agentabstain_gym.envs.terminal.sandbox import docker
        return docker.probe()
    if backend == "local":
        return None
    return f"unknown backend {backend!r}; valid backends are {list(BACKENDS)}"


def available_backends() -> list[str]:
    """Backends that work on this machine, best first (``local`` last: it is always there and isolates nothing)."""
    return [b for b in BACKENDS if why_unavailable(b) is None]


def resolve_backend(backend: str | None, unsafe: bool = False) -> str:
    """The backend to use for ``backend`` (None = the first that works), or :class:`SandboxUnavailable`."""
    if backend is None:
        reasons = []
        for name in AUTO_ORDER:
            why = why_unavailable(name)
            if why is None:
                return name
            reasons.append(f"{name}: {why}")
        raise SandboxUnavailable(INSTALL_HINT + " (" + "; ".join(reasons) + ")")
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; valid backends are {list(BACKENDS)}")
    if backend == "local" and not unsafe:
        raise SandboxUnavailable("backend='local' runs commands on this machine with no isolation at all; pass "
                                 "unsafe=True if that is really what you want")
    why = why_unavailable(backend)
    if why is not None:
        raise SandboxUnavailable(f"the {backend} backend is not available: {why}. {INSTALL_HINT}")
    return backend


def make_sandbox(backend: str | None = None, workspace_dir: str | Path | None = None,
                 limits: SandboxLimits | Mapping[str, Any] | None = None, unsafe: bool = False,
                 hidden_paths: Sequence[str | Path] = (), image: str | None = None,
                 layout: SandboxLayout | None = None) -> Sandbox:
    """A new, not yet started sandbox. ``workspace_dir=None`` keeps the workspace on a tmpfs inside the sandbox,
    so nothing of an episode exists on the host; ``image`` picks the Docker image (default: ours); ``layout``
    moves the working directory and adds writable directories and variables (default: ``/workspace`` only)."""
    name = resolve_backend(backend, unsafe)
    if name == "bwrap":
        from agentabstain_gym.envs.terminal.sandbox.bwrap import BwrapSandbox
        return BwrapSandbox(workspace_dir, limits, hidden_paths, layout)
    if name == "unshare":
        from agentabstain_gym.envs.terminal.sandbox.unshare import UnshareSandbox
        return UnshareSandbox(workspace_dir, limits, hidden_paths, layout)
    if name == "docker" and layout is not None and layout.native_check:
        from agentabstain_gym.envs.terminal.sandbox.docker_native import NativeDockerSandbox
        return NativeDockerSandbox(workspace_dir, limits, hidden_paths, image=image, layout=layout)
    if name == "docker":
        from agentabstain_gym.envs.terminal.sandbox.docker import DockerSandbox
        return DockerSandbox(workspace_dir, limits, hidden_paths, image=image, layout=layout)
    if layout is not None and layout.workdir != "/workspace":
        raise SandboxUnavailable("the local backend cannot give a task its own working directory "
                                 f"({layout.workdir}); use bwrap, unshare or docker")
    from agentabstain_gym.envs.terminal.sandbox.local import LocalSandbox
    return LocalSandbox(workspace_dir, limits, hidden_paths, unsafe=unsafe)
