"""Where a sandbox's writable places are: the agent's working directory and any extra directories a task needs.

Our own tasks work in ``/workspace``; a Terminal-Bench task names its own directory (``WORKDIR /app``) and may also
put files elsewhere (``COPY data /opt/data``). The bwrap and unshare backends build the file system from a tmpfs
root with the host's ``/usr`` and ``/etc`` read-only, so any directory outside those trees can be made (an empty
tmpfs of its own), and none inside them can. :class:`SandboxLayout` says what to make; :func:`path_problem` says
why a path cannot be one of them.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from dataclasses import dataclass, field

WORKSPACE = "/workspace"
#: Trees the bwrap and unshare sandboxes show read-only from the host, or build themselves.
RESERVED_TREES = ("/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/dev", "/sys")
#: Directories every sandbox already has writable (a tmpfs each): nothing extra to mount for paths under them.
ALWAYS_WRITABLE = ("/tmp", "/root", "/var/tmp")
_BAD_CHARS = frozenset("\0\n\r\x1e'\"\\$`")


def normalize(path: str) -> str:
    """``path`` without ``.``/``..`` parts or a trailing slash (``posixpath.normpath`` keeps a leading ``//``)."""
    norm = posixpath.normpath(path)
    return "/" + norm.lstrip("/") if norm.startswith("//") else norm


def reserved_tree(path: str) -> str | None:
    """The read-only tree ``path`` lies in, or None."""
    norm = normalize(path)
    return next((t for t in RESERVED_TREES if norm == t or norm.startswith(t + "/")), None)


def path_problem(path: str) -> str | None:
    """Why ``path`` cannot be a writable directory of a bwrap or unshare sandbox (None: it can)."""
    if not isinstance(path, str) or not path.startswith("/"):
        return f"{path!r} is not an absolute path"
    if any(c in _BAD_CHARS for c in path):
        return f"{path!r} holds a quote, backslash, dollar sign or control character"
    norm = normalize(path)
    if norm == "/":
        return "the root directory cannot be writable (the sandbox's root is read-only)"
    tree = reserved_tree(norm)
    if tree is not None:
        return f"{norm} is inside {tree}, which the bwrap and unshare sandboxes show read-only from the host"
    return None


def mount_point(path: str) -> str | None:
    """The directory to mount a tmpfs on so that ``path`` becomes writable: its top-level directory (second level
    under ``/var``), or None when ``path`` is already writable."""
    norm = normalize(path)
    if any(norm == d or norm.startswith(d + "/") for d in ALWAYS_WRITABLE):
        return None
    parts = norm.strip("/").split("/")
    depth = 2 if parts[0] == "var" and len(parts) > 1 else 1
    return "/" + "/".join(parts[:depth])


@dataclass(frozen=True)
class SandboxLayout:
    """What a sandbox makes besides its defaults.

    ``workdir``: the agent's directory (a tmpfs, where the shell starts and scripts run). ``writable``: extra empty
    tmpfs directories. ``check_dirs``: directories that are empty and writable during the episode and replaced by
    a fresh empty tmpfs for the checker (Terminal-Bench's ``/tests`` and ``/logs``). ``env``: variables added to
    the shell's and the scripts' environment (a Dockerfile's ``ENV``). ``native_check``: the checker runs as
    Terminal-Bench runs tests, in the file system the agent left (its ``/tmp`` and home too, not fresh empty ones)
    and without our Python isolation variables, which would change how the agent's programs import.
    """

    workdir: str = WORKSPACE
    writable: tuple[str, ...] = ()
    check_dirs: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = field(default_factory=tuple)
    native_check: bool = False

    def __post_init__(self) -> None:
        for path in (self.workdir, *self.writable, *self.check_dirs):
            problem = path_problem(path)
            if problem is not None:
                raise ValueError(f"sandbox layout: {problem}")
        for key, value in self.env:
            if not key or not (key[0].isalpha() or key[0] == "_") or not all(c.isalnum() or c == "_" for c in key):
                raise ValueError(f"sandbox layout: {key!r} is not a valid environment variable name")
            if "\0" in value:
                raise ValueError(f"sandbox layout: the value of {key} holds a NUL byte")

    @classmethod
    def make(cls, workdir: str = WORKSPACE, writable: tuple[str, ...] | list[str] = (),
             check_dirs: tuple[str, ...] | list[str] = (), env: Mapping[str, str] | None = None,
             native_check: bool = False) -> SandboxLayout:
        """A layout with normalized, sorted, de-duplicated paths (directories inside the workdir are dropped)."""
        wd = normalize(workdir)
        extra = sorted({normalize(p) for p in (*writable, *check_dirs)} - {wd})
        checks = tuple(sorted({normalize(p) for p in check_dirs}))
        return cls(workdir=wd, writable=tuple(p for p in extra if p not in checks), check_dirs=checks,
                   env=tuple(sorted((env or {}).items())), native_check=native_check)

    @property
    def mounts(self) -> tuple[str, ...]:
        """Every tmpfs to make, parents before children (so a child mount is not hidden by its parent's)."""
        return tuple(sorted({*self.writable, *self.check_dirs, self.workdir}, key=lambda p: (p.count("/"), p)))


DEFAULT_LAYOUT = SandboxLayout()
