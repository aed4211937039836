"""The shell protocol every sandbox backend shares.

A backend only says how to start a process tree that ends in an interactive bash on a pseudo-terminal (``_spawn``)
and how to reach that tree's processes (``_foreground_group`` / ``_kill_group`` / ``_teardown``). Everything else
lives here, once: the shell is driven through pexpect with ``delaybeforesend=None``; each command is sent as ANSI-C
quoted printable ASCII (so no byte of it is interpreted by the terminal, whatever the agent typed), run by ``eval``
with stdin from /dev/null, and framed by an end marker carrying a per-command nonce and the exit status (printed by
the prompt, and by the command line itself); output is read incrementally and kept only up to the cap, so a 1 GB
flood costs time, not memory; a command that outlives its timeout gets Ctrl-C, then its process group gets SIGKILL,
then the shell is restarted, and the agent is told which happened.

Inside every backend the process tree is ``[sh loop] -> script -> bash -i``: ``script`` gives bash a terminal of
its own (job control, so Ctrl-C reaches only the running command, and a new session, so nothing can inject keys into
ours), and the loop starts a fresh bash if the agent's shell exits, keeping the workspace and any services.
"""

from __future__ import annotations

import contextlib
import re
import secrets
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, ClassVar

import pexpect

from agentabstain_gym.envs.terminal.sandbox.layout import (  # noqa: F401 - WORKSPACE is re-exported
    DEFAULT_LAYOUT,
    WORKSPACE,
    SandboxLayout,
)

HOME = "/root"
SANDBOX_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#: The environment of every shell and script inside a sandbox: nothing of the host's leaks in.
SANDBOX_ENV: dict[str, str] = {
    "PATH": SANDBOX_PATH, "HOME": HOME, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TERM": "dumb", "USER": "root",
    "SHELL": "/bin/bash", "PAGER": "cat", "GIT_PAGER": "cat", "SYSTEMD_PAGER": "", "MANPAGER": "cat",
}
#: Runs inside the sandbox: restart bash whenever it exits, and say so on the terminal. bash reads its start-up file
#: (our settings, from the environment variable AGX_RC, unset again by that file) before its first prompt, so nothing
#: has to be typed at a shell that is still starting.
SHELL_LOOP = ("while :; do script -qfec 'exec bash --noprofile --noediting --rcfile <(printf %s \"$AGX_RC\") -i' "
              "/dev/null; printf '\\036AGX-EXIT:%d\\036' \"$?\"; sleep 0.2; done")
MAX_SCRIPT_BYTES = 120_000
_MARKER = re.compile(rb"\x1eAGX-([A-Za-z0-9]+):(-?\d+)\x1e")
_MARKER_WINDOW = 64  # longest marker we must recognise across two reads
_LINE_BYTES = 900  # stay far below the 4095-byte line limit of a canonical-mode terminal
#: Bytes written literally inside ``$'...'``; all others become ``\\xHH`` (a deliberately small set: the typed line
#: then means the same thing to any shell parser).
_SAFE = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _.,:/=+@%-")
INSTALL_HINT = (
    "No sandbox backend is available for AbstainTerminal-v1. Install bubblewrap (Debian/Ubuntu: "
    "`apt-get install bubblewrap`; Fedora: `dnf install bubblewrap`), or use Docker: `pip install docker`, start "
    "the Docker daemon and run `abstain-gym terminal build-image`, then pass backend='docker'. "
    "backend='local' runs commands on this machine without isolation and needs unsafe=True.")


class SandboxError(RuntimeError):
    """The sandbox could not start, or stopped working (its message says which and why)."""


class SandboxUnavailable(SandboxError):
    """No usable backend (or not the one asked for); the message says how to install one."""


@dataclass(frozen=True)
class SandboxLimits:
    """Per-sandbox bounds. Sizes in MiB; times in seconds; ``max_processes`` counts the sandbox's processes."""

    command_timeout: float = 30.0
    output_cap: int = 16_384
    max_processes: int = 256
    memory_mb: int = 2048
    workspace_mb: int = 512
    tmp_mb: int = 256
    shm_mb: int = 64
    script_timeout: float = 120.0
    interrupt_grace: float = 2.0

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
                raise ValueError(f"SandboxLimits.{f.name} must be a positive number, got {value!r}")

    @classmethod
    def from_value(cls, value: SandboxLimits | Mapping[str, Any] | None) -> SandboxLimits:
        """Accept limits as an instance, a dict of field names, or None (defaults); unknown keys are an error."""
        if value is None:
            return cls()
        if isinstance(value, cls):
            return value
        if not isinstance(value, Mapping):
            raise ValueError(f"limits must be a dict or SandboxLimits, got {type(value).__name__}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(value) - known)
        if unknown:
            raise ValueError(f"unknown limit(s) {unknown}; valid limits are {sorted(known)}")
        return cls(**dict(value))


@dataclass(frozen=True)
class CommandResult:
    """What one command did. ``exit_status`` is the shell's ``$?`` (130 after an interrupt, -1 if unknown)."""

    output: str
    exit_status: int
    timed_out: bool = False
    truncated: bool = False
    shell_restarted: bool = False


class _Sink:
    """Keeps the first and last parts of a stream within ``cap`` bytes and counts the rest."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.head_cap = cap - cap // 4
        self.tail_cap = cap // 4
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, data: bytes) -> None:
        self.total += len(data)
        room = self.head_cap - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data and self.tail_cap:
            self.tail += data[-self.tail_cap:]
            del self.tail[:-self.tail_cap]

    def text(self, exact_count: bool) -> tuple[str, bool]:
        if self.total <= self.cap:
            return _decode(bytes(self.head) + bytes(self.tail)), False
        cut = self.total - len(self.head) - len(self.tail)
        what = f"{cut} bytes" if exact_count else "more output"
        note = f"\n[... {what} cut here: output is capped at {self.cap} bytes ...]\n"
        return _decode(bytes(self.head)) + note + _decode(bytes(self.tail)), True


def _decode(data: bytes) -> str:
    return data.decode("utf-8", "replace").replace("\r\n", "\n")


def ansi_c_lines(text: str, variable: str) -> list[str]:
    """Shell lines that set ``variable`` to ``text`` using only printable ASCII (``$'...'`` with ``\\xHH``)."""
    data = text.encode("utf-8", "replace").replace(b"\0", b"")
    pieces: list[str] = []
    current: list[str] = []
    size = 0
    for byte in data:
        token = chr(byte) if byte in _SAFE else f"\\x{byte:02x}"
        current.append(token)
        size += len(token)
        if size >= _LINE_BYTES:
            pieces.append("".join(current))
            current, size = [], 0
    if current or not pieces:
        pieces.append("".join(current))
    return [f"{variable}{'=' if i == 0 else '+='}$'{piece}'" for i, piece in enumerate(pieces)]


class Sandbox:
    """An isolated bash with a writable ``/workspace``; see the module docstring for how it is driven."""

    name: ClassVar[str] = "abstract"
    #: False only for the ``local`` backend, which does not isolate anything.
    isolated: ClassVar[bool] = True

    def __init__(self, workspace_dir: str | Path | None = None, limits: SandboxLimits | Mapping[str, Any] | None = None,
                 hidden_paths: Sequence[str | Path] = (), layout: SandboxLayout | None = None) -> None:
        self.workspace_dir = Path(workspace_dir).resolve() if workspace_dir is not None else None
        self.limits = SandboxLimits.from_value(limits)
        self.hidden_paths = tuple(Path(p).resolve() for p in hidden_paths)
        #: The agent's directory, extra writable directories and environment (default: ``/workspace`` only).
        self.layout = layout or DEFAULT_LAYOUT
        self._child: Any = None
        self._shell_ns_pid: int | None = None
        self._pending = b""
        #: Where the workspace and home are as the shell sees them (real host paths only for ``local``).
        self.workspace_path = self.layout.workdir
        self.home_path = HOME
        self._closed = False
        self._agent_killed = False

    # ----- hooks for backends ---------------------------------------------------------------------------------------
    def _spawn(self) -> Any:
        """Start the sandbox; return a pexpect spawn object attached to the terminal of its shell loop."""
        raise NotImplementedError

    def _kill_group(self, pgid: int | None) -> None:
        """SIGKILL process group ``pgid`` as numbered by :meth:`_foreground_group` (``None``: the shell itself)."""
        raise NotImplementedError

    def _foreground_group(self) -> tuple[int, int] | None:
        """(shell's process group, its terminal's foreground group) in the backend's own pid numbering, or None."""
        raise NotImplementedError

    def _teardown(self) -> None:
        """Remove every process, mount and temporary file of the sandbox. Must be safe to call twice."""
        raise NotImplementedError

    def _after_start(self) -> None:
        """Called once the first shell is ready (backends record what they need to reach the sandbox later)."""

    # ----- public API -----------------------------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        """Whether the agent's shell accepts commands (not after close, nor after a checker killed the agent)."""
        return self._child is not None and not self._closed and not self._agent_killed

    def start(self) -> Sandbox:
        """Start the sandbox and its shell (cwd ``/workspace``); idempotent."""
        if self._closed:
            raise SandboxError("this sandbox was closed; make a new one")
        if self._child is not None:
            return self
        try:
            self._child = self._spawn()
            self._child.delaybeforesend = None
            self._init_shell(timeout=20.0)
            self._after_start()
        except BaseException:
            self.close()
            raise
        return self

    def run(self, command: str, timeout: float | None = None, output_cap: int | None = None) -> CommandResult:
        """Run ``command`` (any text, may be multi-line) in the persistent shell, with stdin from /dev/null."""
        lines = ansi_c_lines(command, "__agx")
        # a program that drew on the terminal (vim, less, curses) may leave it raw with VMIN=0, which bash reads as
        # end of input on the next line and exits: restore sane settings after every command, keeping its status
        call = 'eval "$__agx" </dev/null; __agx_s=$?; stty sane -echo -onlcr 2>/dev/null; __agx_status "$__agx_s"'
        return self._execute(lines, call, timeout or self.limits.command_timeout, output_cap or self.limits.output_cap)

    def run_script(self, text: str, args: Sequence[str] = (), timeout: float | None = None,
                   output_cap: int | None = None) -> CommandResult:
        """Run a script in a fresh ``bash`` with a clean environment and cwd ``/workspace``.

        The text travels through the terminal as quoted data and is never written to a file, so nothing is left
        behind for the agent to read; the agent's shell keeps its own directory and variables.
        """
        if len(text.encode("utf-8", "replace")) > MAX_SCRIPT_BYTES:
            raise ValueError(f"a task script may have at most {MAX_SCRIPT_BYTES} bytes (it travels as one argument)")
        lines = ansi_c_lines(text, "__agx")
        for i, arg in enumerate(args):
            lines += ansi_c_lines(str(arg), f"__agx_a{i}")
        argv = " ".join(f'"$__agx_a{i}"' for i in range(len(args)))
        env = " ".join(f"{k}={_sh_quote(v)}" for k, v in self.script_env().items())
        call = (f'(cd {_sh_quote(self.workspace_path)} && exec env -i {env} bash -c "$__agx" task-script {argv} '
                '</dev/null); '
                f"__agx_st=$?; unset __agx {' '.join(f'__agx_a{i}' for i in range(len(args)))}; "
                "(exit $__agx_st)")
        return self._execute(lines, call, timeout or self.limits.script_timeout, output_cap or self.limits.output_cap)

    def close(self) -> None:
        """Stop everything the sandbox started; safe to call any number of times."""
        if self._closed:
            return
        self._closed = True
        try:
            self._teardown()
        finally:
            if self._child is not None:
                with contextlib.suppress(Exception):  # closing a dead terminal may fail in several ways
                    self._child.close()
            self._child = None

    def __enter__(self) -> Sandbox:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:  # a forgotten sandbox is stopped when it is collected
        with contextlib.suppress(Exception):
            self.close()

    # ----- the protocol -------------------------------------------------------------------------------------------
    def _send(self, text: str) -> None:
        try:
            self._child.send(text.encode("ascii"))
        except (OSError, pexpect.ExceptionPexpect) as exc:
            raise SandboxError(f"the {self.name} sandbox stopped: {exc}") from exc

    def shell_env(self) -> dict[str, str]:
        """The environment the shell loop starts with: :data:`SANDBOX_ENV` plus bash's start-up file."""
        return {**self.script_env(), "AGX_RC": self._rc()}

    def script_env(self) -> dict[str, str]:
        """The whole environment of the shell and of task scripts (the layout's variables last)."""
        return {**SANDBOX_ENV, "HOME": self.home_path, **dict(self.layout.env)}

    def _rc(self) -> str:
        """bash's start-up settings: no echo, no history, limits, and a prompt that is our end marker.

        The prompt (``PS1``, read-only) prints ``AGX-<nonce>:<$?>`` between two ASCII record separators each time
        bash is ready for the next line, also after Ctrl-C, so the end of a command and its status need no extra
        line typed behind it.
        """
        limits = self.limits
        return (f"unset AGX_RC; stty -echo -onlcr 2>/dev/null; PS2=; PS0=; PS4='+ '; set +o history; "
                f"unset HISTFILE; RANDOM=0; __agx_status() {{ return \"$1\"; }}; ulimit -c 0; "
                f"ulimit -u {int(limits.max_processes)} "
                f"-v {int(limits.memory_mb) * 1024} 2>/dev/null; cd {_sh_quote(self.workspace_path)}; __agx_n=init; "
                "PS1=$'\\036AGX-${__agx_n}:$?\\036'; PROMPT_COMMAND=; readonly PS1 PROMPT_COMMAND; "
                "printf '\\036AGX-READY:%d\\036' \"$$\"\n")

    def _init_shell(self, timeout: float) -> None:
        """Wait for a new shell's READY (its pid) and its first prompt."""
        sink = _Sink(4096)
        deadline = time.monotonic() + timeout
        found = self._read_until({"READY"}, deadline, sink)
        if found is not None and found[0] == "READY":
            self._shell_ns_pid = found[1]
            found = self._read_until({"init"}, deadline, sink)
        if found is None or found[0] != "init":
            text, _ = sink.text(True)
            raise SandboxError(f"the {self.name} sandbox did not start a shell: {text.strip()[-800:] or found}")

    def _drain(self) -> None:
        """Discard output that arrived between commands (late output of background jobs)."""
        self._pending = b""
        while True:
            try:
                self._child.read_nonblocking(65536, timeout=0)
            except (pexpect.TIMEOUT, pexpect.EOF):
                return

    def _read_until(self, kinds: set[str], deadline: float, sink: _Sink | None) -> tuple[str, int] | None:
        """Read into ``sink`` until a marker whose kind is in ``kinds`` (a nonce, READY or EXIT) or the deadline.

        Returns (kind, number), ("EOF", -1) when the sandbox's terminal closed, or None at the deadline. Bytes read
        past the marker stay in ``self._pending`` for the next call.
        """
        while True:
            pending = self._pending
            match = _MARKER.search(pending)
            while match is not None and not self._genuine(match, kinds):
                if sink is not None:  # a marker we do not wait for, or one the agent printed: its output
                    sink.add(pending[:match.end()] if match.group(1).decode() in kinds else pending[:match.start()])
                pending = pending[match.end():]
                match = _MARKER.search(pending)
            if match is not None:
                if sink is not None:
                    sink.add(pending[:match.start()])
                self._pending = pending[match.end():]
                return match.group(1).decode(), int(match.group(2))
            if len(pending) > _MARKER_WINDOW:
                if sink is not None:
                    sink.add(pending[:-_MARKER_WINDOW])
                pending = pending[-_MARKER_WINDOW:]
            self._pending = pending
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            try:
                self._pending += self._child.read_nonblocking(65536, timeout=min(left, 0.5))
            except pexpect.TIMEOUT:
                continue
            except pexpect.EOF:
                if sink is not None:
                    sink.add(self._pending)
                self._pending = b""
                return "EOF", -1

    def _genuine(self, match: re.Match[bytes], kinds: set[str]) -> bool:
        """Whether a marker is one we wait for and was printed by us, not by the agent.

        Command markers carry a fresh nonce the agent cannot know in advance; the shell loop's EXIT and READY
        markers cannot (the loop's memory is the agent's to read), so they are checked out of band: EXIT counts only
        if the shell really is gone, READY only if its pid is a new shell.
        """
        kind = match.group(1).decode()
        if kind not in kinds:
            return False
        if kind == "EXIT":
            return not self._shell_alive()
        if kind == "READY":
            return self._is_new_shell(int(match.group(2)))
        return True

    def _shell_alive(self) -> bool:
        """Whether the agent's current shell is still running (backends that can tell override this)."""
        return False

    def _is_new_shell(self, ns_pid: int) -> bool:
        """Whether ``ns_pid`` (sandbox numbering) is a shell our loop just started."""
        return ns_pid != self._shell_ns_pid

    def checker_env(self) -> dict[str, str]:
        """The checker's whole environment: the scripts' one, and Python kept off the agent's files (no workspace
        on ``sys.path``, no user site directory)."""
        if self.layout.native_check:
            return {**self.script_env(), "PYTHONDONTWRITEBYTECODE": "1"}
        return {**self.script_env(), "PYTHONSAFEPATH": "1", "PYTHONNOUSERSITE": "1",
                "PYTHONDONTWRITEBYTECODE": "1", "TMPDIR": "/tmp"}

    def setup_step(self, text: str, files: bytes | None = None, timeout: float | None = None,
                   output_cap: int | None = None) -> CommandResult:
        """Run one setup step apart from the agent's shell: unpack ``files`` (a tar archive of paths relative to
        ``/``) into the sandbox, then run ``text`` with bash in the working directory, in a fresh process (its
        background processes end with it, as a Docker build step's do). For Terminal-Bench tasks."""
        raise SandboxError(f"the {self.name} backend cannot run setup steps of a task's Dockerfile")

    def check(self, text: str, args: Sequence[str] = (), timeout: float | None = None,
              output_cap: int | None = None, kill_agent: bool = True, files: bytes | None = None) -> CommandResult:
        """Run a checker out of the agent's reach and return its verdict.

        With ``kill_agent`` (what an episode's ``submit`` does) every process the agent started is killed first and
        the sandbox accepts no further commands. The checker then runs in a new process that inherits nothing from
        the agent's shell (no functions, aliases, traps, options, variables or directory), with the checker
        environment, a PATH of read-only system directories, a fresh empty HOME and /tmp, no /proc, and its exit
        status read by us directly, never through the agent's terminal. ``files`` (a tar archive) is unpacked
        first, after the layout's ``check_dirs`` got fresh empty mounts (a Terminal-Bench task's ``/tests``).
        """
        raise NotImplementedError

    def _line(self, line: str, deadline: float, sink: _Sink | None,
              marker: bool = False) -> tuple[str, tuple[str, int] | None]:
        """Type one line and read until its end; returns (nonce, what ended the read).

        The prompt marks the end of every line. With ``marker`` the line also prints the marker itself: after a
        syntax error inside ``eval`` bash reprints the previous prompt without expanding it again.
        """
        nonce = secrets.token_hex(4)
        tail = f"; printf '\\036AGX-{nonce}:%d\\036' \"$?\"" if marker else ""
        self._send(f"__agx_n={nonce}; {line}{tail}\n")
        return nonce, self._read_until({nonce, "EXIT"}, deadline, sink)

    def _execute(self, lines: list[str], call: str, timeout: float, cap: int) -> CommandResult:
        if self._agent_killed:
            raise SandboxError(f"the {self.name} sandbox's shell was stopped when its work was checked")
        if not self.running:
            raise SandboxError(f"the {self.name} sandbox is not running (call start(), or it was closed)")
        self._drain()
        for line in lines:  # assignments of quoted data: builtins only, so each returns at once
            _, found = self._line(line, time.monotonic() + 20.0, None)
            if found is None or found[0] in ("EXIT", "EOF"):
                return self._after_shell_exit(found or ("EXIT", -1), None)
        sink = _Sink(int(cap))
        nonce, found = self._line(call, time.monotonic() + timeout, sink, marker=True)
        if found is not None and found[0] == nonce:
            text, truncated = sink.text(True)
            return CommandResult(text, found[1], truncated=truncated)
        if found is not None:  # the shell exited (EXIT) or the sandbox died (EOF)
            return self._after_shell_exit(found, sink)
        return self._interrupt(sink, timeout, nonce)

    def _interrupt(self, sink: _Sink, timeout: float, nonce: str) -> CommandResult:
        """The command outlived its timeout: Ctrl-C, then SIGKILL its process group, then restart the shell."""
        grace = self.limits.interrupt_grace
        self._send("\x03")
        kinds = {nonce, "EXIT"}
        found = self._read_until(kinds, time.monotonic() + grace, sink)
        if found is None:
            groups = self._foreground_group()
            if groups is not None and groups[1] > 0 and groups[1] != groups[0]:
                self._kill_group(groups[1])
                found = self._read_until(kinds, time.monotonic() + grace, sink)
        text, truncated = sink.text(False)
        text = text.strip("\n") + f"\n[the command ran longer than {timeout:g} s and was interrupted]"
        if found is not None and found[0] == nonce:
            return CommandResult(text, found[1], timed_out=True, truncated=truncated)
        if found is None:
            self._kill_group(None)
            found = self._read_until({"EXIT"}, time.monotonic() + grace + 5, None)
        restarted = self._after_shell_exit(found or ("EXIT", -1), None)
        return CommandResult(text + restarted.output, -1, timed_out=True, truncated=truncated,
                             shell_restarted=True)

    def _after_shell_exit(self, found: tuple[str, int], sink: _Sink | None) -> CommandResult:
        kind, status = found
        text = sink.text(True)[0].rstrip("\n") if sink is not None else ""
        if kind == "EOF":
            self.close()
            raise SandboxError(f"the {self.name} sandbox stopped (its terminal closed)")
        self._init_shell(timeout=20.0)
        note = (f"\n[the shell exited (status {status}); a new shell was started in {self.workspace_path}: files and "
                "background services are kept, shell variables and the current directory are not]")
        return CommandResult(text + note, status, shell_restarted=True)


def _sh_quote(value: str) -> str:
    return "'" + value.replace("'", "'\\''") + "'"
