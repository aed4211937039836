"""Running a Terminal-Bench task in a sandbox: its layout, its Dockerfile's setup, its tests and its solution.

The tests run as the terminal family's checkers do (:meth:`Sandbox.check`): after every process of the agent is
killed, in a fresh process apart from the agent's shell, with the task's ``tests/`` unpacked into a fresh ``/tests``
(and ``run-tests.sh`` beside them, as Terminal-Bench places it). The verdict:

* original layout: the test script exited 0 and every pytest run it made exited 0, which is what Terminal-Bench's
  pytest parser asks (all tests passed); a script that runs no pytest passes on exit status 0;
* Harbor layout: the reward ``tests/test.sh`` wrote to ``/logs/verifier/reward.txt`` (or ``reward.json``) is >= 1
  and ``test.sh`` exited 0; without a reward file, exit status 0.

The agent's programs run inside the tests, so :func:`checker_script` treats them as hostile (what it guards against is
listed there).
"""

from __future__ import annotations

import io
import re
import secrets
import shlex
import tarfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from agentabstain_gym.envs.terminal.native.commands import classify, simple_commands
from agentabstain_gym.envs.terminal.native.dockerfile import FileEntry
from agentabstain_gym.envs.terminal.native.folders import HARBOR, NativeSpec
from agentabstain_gym.envs.terminal.native.host import sandbox_python, shim_prelude
from agentabstain_gym.envs.terminal.sandbox import Sandbox, SandboxError, SandboxLayout
from agentabstain_gym.envs.terminal.sandbox.base import SANDBOX_PATH
from agentabstain_gym.envs.terminal.sandbox.layout import path_problem

#: Modification time of every file unpacked into a sandbox (2024-01-01 UTC): the same listing on every run.
FIXED_MTIME = 1_704_067_200
TESTS_DIR = "/tests"
LOGS_DIR = "/logs"
SOLUTION_DIR = "/solution"
FALLBACK_WORKDIR = "/app"
#: Longest task output kept in an error message.
_TAIL = 600


def workdir_of(spec: NativeSpec) -> str:
    """The agent's directory: the task's own setting, else the Dockerfile's last WORKDIR, else ``/app``."""
    workdir = spec.workdir or spec.plan.workdir
    return workdir if workdir and workdir != "/" else FALLBACK_WORKDIR


def layout_for(spec: NativeSpec, extra_writable: Iterable[str] = ()) -> SandboxLayout:
    """The sandbox layout of a task: its working directory, every directory its Dockerfile writes outside it,
    ``/tests`` (and Harbor's ``/logs``) made fresh for the checker, and its ``ENV`` variables."""
    plan = spec.plan
    env = {**plan.env, **spec.compose_env, **spec.env}
    checks = [TESTS_DIR] + ([LOGS_DIR] if spec.layout == HARBOR else [])
    writable = [d for d in (*plan.writable_dirs, *extra_writable) if path_problem(d) is None]
    return SandboxLayout.make(workdir_of(spec), writable=writable, check_dirs=checks, env=env, native_check=True)


def sandbox_limits(spec: NativeSpec) -> dict[str, float]:
    """The task's own limits: a command may run as long as the agent's whole budget (Terminal-Bench has no
    per-command limit), the checker as long as the test timeout, and the memory the task asks for."""
    limits: dict[str, float] = {"command_timeout": spec.agent_timeout, "script_timeout": spec.test_timeout}
    if spec.memory_mb is not None:
        limits["memory_mb"] = max(spec.memory_mb, 256)
    return limits


def tar_of(entries: Iterable[FileEntry]) -> bytes:
    """A tar archive of ``entries`` (paths relative to ``/``), owned by root, with a fixed modification time."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for entry in entries:
            info = tarfile.TarInfo(entry.dest.lstrip("/") or ".")
            info.mtime = FIXED_MTIME
            if entry.source is None:
                info.type, info.mode = tarfile.DIRTYPE, entry.mode or 0o755
                tar.addfile(info)
                continue
            data = entry.source.read_bytes()
            info.size = len(data)
            info.mode = entry.mode or (entry.source.stat().st_mode & 0o777)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def tree_entries(folder: Path, dest: str) -> list[FileEntry]:
    """Every file and directory under ``folder``, to be placed under ``dest``."""
    out = [FileEntry(dest, None)]
    for path in sorted(folder.rglob("*")):
        target = f"{dest.rstrip('/')}/{path.relative_to(folder).as_posix()}"
        out.append(FileEntry(target, None if path.is_dir() else path))
    return out


def apply_setup(sandbox: Sandbox, spec: NativeSpec, edits: str | None = None) -> None:
    """Replay the task's Dockerfile in ``sandbox`` (files, then each kept RUN with the install shims), then the
    overlay's environment ``edits`` (a shell script run in the working directory). ``SandboxError`` names the
    Dockerfile line that failed."""
    pending: list[FileEntry] = []

    def flush() -> None:
        if pending:
            result = sandbox.setup_step("true", files=tar_of(pending), timeout=spec.build_timeout)
            if result.exit_status != 0:
                raise SandboxError(f"task {spec.name}: unpacking its files failed: {result.output.strip()[-_TAIL:]}")
            pending.clear()

    for step in spec.plan.steps:
        if step.kind == "files":
            pending.extend(step.files)
            continue
        flush()
        script = f"{shim_prelude()}cd {shlex.quote(step.workdir)} || exit 1\n{step.script}\n"
        result = sandbox.setup_step(script, timeout=spec.build_timeout)
        if result.exit_status != 0:
            raise SandboxError(f"task {spec.name}: Dockerfile line {step.line} failed with exit status "
                               f"{result.exit_status}: {result.output.strip()[-_TAIL:]}")
    flush()
    if edits:
        result = sandbox.setup_step(f"{shim_prelude()}{edits}\n", timeout=spec.build_timeout)
        if result.exit_status != 0:
            raise SandboxError(f"task {spec.name}: the overlay's environment edits failed with exit status "
                               f"{result.exit_status}: {result.output.strip()[-_TAIL:]}")


def test_files(spec: NativeSpec) -> list[FileEntry]:
    """What the checker finds in ``/tests``: the task's ``tests/`` (and ``run-tests.sh``, original layout)."""
    entries = tree_entries(spec.tests_dir, TESTS_DIR) if spec.tests_dir is not None else [FileEntry(TESTS_DIR, None)]
    run_tests = spec.folder / "run-tests.sh"
    if spec.layout != HARBOR and run_tests.is_file():
        entries.append(FileEntry(f"{TESTS_DIR}/run-tests.sh", run_tests))
    return entries


def uses_pytest(spec: NativeSpec) -> bool:
    """Whether the task's tests run pytest (the default runner when the original layout has no run-tests.sh)."""
    return spec.test_script is None or re.search(r"\bpy\.?test\b", spec.test_script) is not None


def _test_command(spec: NativeSpec) -> str:
    if spec.layout == HARBOR:
        return f"bash {TESTS_DIR}/test.sh"
    if spec.test_script is not None:
        return f"bash {TESTS_DIR}/run-tests.sh"
    target = "test_outputs.py" if spec.tests_dir is not None and (spec.tests_dir / "test_outputs.py").is_file() \
        else ""
    return f'pytest "$TEST_DIR/{target}" -rA'


def checker_script(spec: NativeSpec, nonce: str, pytest_nonce: str, python: str | None = None,
                   sweep: bool = False, system_first: bool = False) -> str:
    """The bash the checker runs: shims in check mode, ``TEST_DIR``, the task's test entry point, then one line
    tagged with ``nonce`` holding the entry point's exit status and (Harbor) the reward its file holds.

    The agent's programs run inside the tests (that is what tests do), so the checker assumes they are hostile:
    its own steps use the system's ``PATH`` (the task's, which may list directories the agent wrote, is the tests'
    only, and with ``system_first`` the system directories come first in it, so a directory the task's ENV puts
    first, such as ``/root/.local/bin``, cannot shadow ``python3`` or ``bash``); each pytest status goes to the output stream (fd 3), not a file a leftover process could rewrite;
    ``python`` (an absolute path) is the interpreter pytest runs with; with ``sweep`` (the checker is its own pid
    namespace or container) every process the tests left is killed before the verdict is read, and the final line
    says whether there were any; a reward file counts only if it is a plain writable file (not a directory, link or
    pipe the agent's program put in its place) and the test script exited 0.
    """
    exports = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in sorted(spec.verifier_env.items())
                      if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", k))
    check_vars = (f"export __AGX_CHECK=1 __AGX_TESTS={TESTS_DIR} __AGX_NONCE={pytest_nonce} TEST_DIR={TESTS_DIR} "
                  "PYTHONNOUSERSITE=1\n" + (f"export __AGX_PYTHON={shlex.quote(python)}\n" if python else ""))
    logs = f"mkdir -p {LOGS_DIR}/verifier {LOGS_DIR}/agent\n" if spec.layout == HARBOR else ""
    command = _test_command(spec).replace("bash ", '"$__agx_bash" ', 1)
    head = (f"{shim_prelude()}{check_vars}{exports}__agx_path=$PATH\nPATH={SANDBOX_PATH}\n"
            f"__agx_bash=$(type -P bash) || exit 1\n{logs}cd {shlex.quote(workdir_of(spec))} || exit 1\n"
            f"exec 3>&1\n(PATH={SANDBOX_PATH + ':' if system_first else ''}$__agx_path; {command})\nst=$?\nexec 3>&-\n"
            + ("if kill -0 -1 2>/dev/null; then left=1; kill -9 -1 2>/dev/null; else left=0; fi\n" if sweep
               else "left=0\n") + "cd /\n")
    if spec.layout == HARBOR:
        verdict = (
            "v=/logs/verifier; r=\n"
            "for f in $v/reward.txt $v/reward.json; do\n"
            "  if [ -L $v ] || [ -L \"$f\" ] || { [ -e \"$f\" ] && { [ ! -f \"$f\" ] || [ ! -w \"$f\" ]; }; }; then\n"
            "    printf '\\n[%s is not a plain writable file: no reward]\\n' \"$f\"; r=0; break; fi\n"
            "  [ -e \"$f\" ] || continue\n"
            "  if [ \"$f\" = $v/reward.txt ]; then r=$(head -c 64 \"$f\" | tr -d ' \\t\\r\\n')\n"
            f"  else r=$({shlex.quote(python or 'python3')} -I -c 'import json,sys\n"
            "d=json.load(open(sys.argv[1]))\nprint(d.get(\"reward\", 0) if isinstance(d, dict) else d)' \"$f\""
            " 2>/dev/null); fi\n"
            "  break\ndone\n"
            "[ -n \"$r\" ] || r=$([ \"$st\" -eq 0 ] && echo 1 || echo 0)\n"
            "[ \"$st\" -eq 0 ] || r=0\n"
            "case \"$r\" in ''|*[!0-9.]*|*.*.*) r=0;; esac\n"
            "printf '\\n[tests: test.sh exit status %s, reward %s]\\n' \"$st\" \"$r\"\n")
    else:
        verdict = "r=-\nprintf '\\n[tests: exit status %s]\\n' \"$st\"\n"
    return head + verdict + f"printf '\\036AGX-REWARD-{nonce}:%s:%s:%s\\036\\n' \"$st\" \"$left\" \"$r\"\n"


@dataclass(frozen=True)
class TestOutcome:
    """The verdict of a task's tests: passed, the reward (Harbor may give partial credit), exit status, output."""

    passed: bool
    reward: float
    exit_status: int
    output: str


def _statuses(output: str, prefix: str) -> list[str | None]:
    """What follows each occurrence of ``prefix`` up to its closing separator (None if it does not close): found by
    scanning for the prefix itself, so a marker the agent's program left unclosed cannot swallow a genuine one."""
    out: list[str | None] = []
    start = output.find(prefix)
    while start >= 0:
        match = re.match(r"(-?\d+(?::[0-9.-]*)*)\x1e", output[start + len(prefix):start + len(prefix) + 40])
        out.append(match.group(1) if match else None)
        start = output.find(prefix, start + 1)
    return out


def run_tests(sandbox: Sandbox, spec: NativeSpec, kill_agent: bool = True) -> TestOutcome:
    """Kill the agent, then run the task's tests out of its reach (see the module docstring).

    Verdict: exactly one final line from the checker (a second one was forged by a program the tests ran, which could
    only learn the nonce by reading the checker); the test entry point exited 0; every pytest run exited 0 (Terminal-
    Bench layout), or the reward file holds >= 1 (Harbor; a value in [0, 1) is partial credit).
    """
    nonce, pytest_nonce = secrets.token_hex(8), secrets.token_hex(8)
    # bwrap and unshare show the host's read-only system directories: their programs are the trusted ones. Docker
    # images are the agent's to write; the docker backend screens what the agent changed instead.
    host_fs = sandbox.name in ("bwrap", "unshare")
    script = checker_script(spec, nonce, pytest_nonce, sandbox_python() if host_fs else None,
                            sweep=host_fs or sandbox.name == "docker", system_first=host_fs)
    result = sandbox.check(script, timeout=spec.test_timeout, kill_agent=kill_agent, files=tar_of(test_files(spec)))
    finals = _statuses(result.output, f"\x1eAGX-REWARD-{nonce}:")
    runs = _statuses(result.output, f"\x1eAGX-PYTEST-{pytest_nonce}:")
    output = re.sub("\x1eAGX-(?:REWARD|PYTEST)-(?:" + nonce + "|" + pytest_nonce + r"):[0-9.:-]*\x1e\n?", "",
                    result.output)
    if result.timed_out or len(finals) != 1 or finals[0] is None:
        note = "" if result.timed_out or not finals else "\n[the checker's verdict line was forged: no reward]"
        return TestOutcome(False, 0.0, result.exit_status, output + note)
    status_text, left_text, value_text = (finals[0].split(":") + ["", ""])[:3]
    status = int(status_text)
    failed = sum(1 for r in runs if r is None or r != "0")
    if spec.layout == HARBOR:
        try:
            value = float(value_text)
        except ValueError:
            value = 0.0
        # A process the tests' run of the agent's program left behind can overwrite the reward file after test.sh
        # wrote it (it is killed only once test.sh has exited). Then the file is trusted only when pytest runs,
        # whose statuses nothing can erase, back it up: all passed.
        if left_text == "1" and not (runs and failed == 0):
            value = 0.0
            output += "[the tests left processes running that could have rewritten the reward file: no reward]\n"
        passed = status == 0 and value >= 1.0 and failed == 0
        reward = 1.0 if passed else (value if 0.0 <= value < 1.0 and status == 0 else 0.0)
    else:
        passed = status == 0 and failed == 0
        reward = 1.0 if passed else 0.0
        output += f"[pytest runs {len(runs)}, failed {failed}]\n"
    return TestOutcome(passed, reward, status, output)


def solution_files(spec: NativeSpec) -> list[FileEntry]:
    """Harbor's ``solution/`` folder, placed at ``/solution`` for ``solve.sh`` (validation only)."""
    return tree_entries(spec.solution_dir, SOLUTION_DIR) if spec.solution_dir is not None else []


def solution_command(spec: NativeSpec) -> str:
    """One shell action running the reference solution in a child bash (with the install shims), in the working
    directory, as Terminal-Bench's oracle agent runs it."""
    if spec.solution is None:
        raise ValueError(f"task {spec.name} has no reference solution")
    body = f"{shim_prelude()}cd {shlex.quote(workdir_of(spec))}\n{spec.solution.rstrip()}"
    return f"bash <<'__ABSTAIN_GYM_SOLUTION__'\n{body}\n__ABSTAIN_GYM_SOLUTION__"


def script_requirements(text: str | None) -> tuple[list[str], list[str], list[str]]:
    """(apt packages, Python packages, network needs) of a shell script's install commands, line by line."""
    apt: list[str] = []
    pip: list[str] = []
    network: list[str] = []
    if not text:
        return apt, pip, network
    for line in re.sub(r"\\\n", " ", text).splitlines():
        commands = simple_commands(line) if line.strip() and not line.lstrip().startswith("#") else None
        for words in commands or []:
            kind = classify(words)
            apt += [p for p in kind.apt if p not in apt]
            pip += [p for p in kind.pip if p not in pip]
            if kind.kind == "network":
                network.append(kind.why)
    return apt, pip, network
