"""Terminal-Bench task folders in both layouts, read into one :class:`NativeSpec`.

* The original layout: ``task.yaml`` (``instruction``, ``max_agent_timeout_sec``, ``max_test_timeout_sec``,
  ``run_tests_in_same_shell``, ``difficulty``, ``category``, ``tags``, ``parser_name``), ``Dockerfile``,
  ``docker-compose.yaml``, ``run-tests.sh`` (optional), ``tests/``, ``solution.sh`` or ``solution.yaml``.
* The 2.x / Harbor layout: ``instruction.md``, ``task.toml`` (``[agent] timeout_sec``, ``[verifier] timeout_sec`` and
  ``env``, ``[environment] build_timeout_sec``, ``workdir``, ``memory_mb``, ``allow_internet`` / ``network_mode``,
  ``docker_image``, ``env``; ``[metadata]``), ``environment/Dockerfile``, ``tests/test.sh``, ``solution/solve.sh``.

Nothing here runs anything; a folder that cannot be read raises ``ValueError`` with one line naming file and field.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from agentabstain_gym.envs.terminal.native.dockerfile import BuildPlan, build_plan
from agentabstain_gym.envs.terminal.sandbox.base import SANDBOX_ENV

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

TERMINAL_BENCH = "terminal-bench"
HARBOR = "harbor"
#: Terminal-Bench's defaults when task.yaml leaves a timeout out.
DEFAULT_AGENT_TIMEOUT = 360.0
DEFAULT_TEST_TIMEOUT = 60.0
DEFAULT_BUILD_TIMEOUT = 600.0
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


@dataclass
class NativeSpec:
    """One Terminal-Bench task as read from its folder (see the module docstring for the fields' sources)."""

    name: str
    folder: Path
    layout: str
    instruction: str
    agent_timeout: float
    test_timeout: float
    build_timeout: float
    dockerfile: Path | None
    context: Path
    tests_dir: Path | None
    test_script: str | None
    test_script_name: str
    solution: str | None
    solution_name: str | None
    solution_dir: Path | None = None
    difficulty: str | None = None
    category: str | None = None
    tags: list[str] = field(default_factory=list)
    same_shell: bool = False
    services: list[str] = field(default_factory=list)
    compose_env: dict[str, str] = field(default_factory=dict)
    workdir: str | None = None
    memory_mb: int | None = None
    internet: bool = False
    docker_image: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    verifier_env: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def plan(self) -> BuildPlan:
        """The Dockerfile's setup plan (cached per folder and file contents)."""
        text = self.dockerfile.read_text(encoding="utf-8", errors="replace") if self.dockerfile else ""
        return _plan(text, str(self.context))


@lru_cache(maxsize=256)
def _plan(text: str, context: str) -> BuildPlan:
    if not text:
        plan = BuildPlan()
        plan.problems.append("no Dockerfile")
        return plan
    return build_plan(text, Path(context), {"PATH": SANDBOX_ENV["PATH"], "HOME": SANDBOX_ENV["HOME"]})


def folder_layout(folder: Path) -> str | None:
    """``"ours"``, ``"terminal-bench"``, ``"harbor"`` or None for a folder that is no task."""
    if (folder / "task.json").is_file():
        return "ours"
    if (folder / "task.yaml").is_file():
        return TERMINAL_BENCH
    if (folder / "task.toml").is_file() or (folder / "instruction.md").is_file():
        return HARBOR
    return None


def task_folders(root: Path) -> list[Path]:
    """Terminal-Bench folders: ``root`` itself if it is one, else its direct subfolders that are (sorted)."""
    if folder_layout(root) in (TERMINAL_BENCH, HARBOR):
        return [root]
    return sorted(p for p in root.iterdir() if p.is_dir() and folder_layout(p) in (TERMINAL_BENCH, HARBOR))


def _number(data: dict[str, Any], key: str, default: float, where: str) -> float:
    value = data.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ValueError(f"{where}: {key} must be a positive number of seconds, got {value!r}")
    return float(value)


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")


def _compose(folder: Path, spec: NativeSpec) -> None:
    path = next((folder / n for n in ("docker-compose.yaml", "docker-compose.yml") if (folder / n).is_file()), None)
    if path is None:
        return
    try:
        data = yaml.safe_load(_text(path)) or {}
    except yaml.YAMLError as exc:
        raise ValueError(f"{path.name}: bad YAML: {str(exc).splitlines()[0]}") from None
    services = data.get("services") if isinstance(data, dict) else None
    if not isinstance(services, dict):
        return
    spec.services = sorted(str(s) for s in services)
    main = services.get("client") or next(iter(services.values()), None)
    if not isinstance(main, dict):
        return
    env = main.get("environment") or {}
    pairs = env.items() if isinstance(env, dict) else (str(e).partition("=")[::2] for e in env)
    for key, value in pairs:
        if value is not None and "${" not in str(value):
            spec.compose_env[str(key)] = str(value)
    if isinstance(main.get("working_dir"), str):
        spec.workdir = main["working_dir"]
    build = main.get("build")
    if isinstance(build, dict):
        context = folder / str(build.get("context", "."))
        spec.context = context
        dockerfile = context / str(build.get("dockerfile", "Dockerfile"))
        spec.dockerfile = dockerfile if dockerfile.is_file() else spec.dockerfile


def _solution_yaml(path: Path) -> str:
    """A keystroke list (``solution.yaml``) as a script: each entry's ``command`` on its own line."""
    try:
        data = yaml.safe_load(_text(path))
    except yaml.YAMLError as exc:
        raise ValueError(f"solution.yaml: bad YAML: {str(exc).splitlines()[0]}") from None
    if not isinstance(data, list):
        raise ValueError("solution.yaml: must be a list of {command: ...} entries")
    lines = []
    for i, entry in enumerate(data):
        command = entry.get("command") if isinstance(entry, dict) else entry
        if not isinstance(command, str):
            raise ValueError(f"solution.yaml: entry {i} has no command string")
        lines.append(command.rstrip("\n"))
    return "\n".join(lines) + "\n"


def load_terminal_bench(folder: Path) -> NativeSpec:
    """A folder in the original layout (``task.yaml``)."""
    try:
        data = yaml.safe_load(_text(folder / "task.yaml"))
    except yaml.YAMLError as exc:
        raise ValueError(f"task.yaml: bad YAML: {str(exc).splitlines()[0]}") from None
    if not isinstance(data, dict):
        raise ValueError("task.yaml: the top level must be a mapping")
    instruction = data.get("instruction")
    if not isinstance(instruction, str) or not instruction.strip():
        raise ValueError("task.yaml: instruction must be a non-empty string")
    tests = folder / "tests"
    run_tests = folder / "run-tests.sh"
    solution, solution_name = None, None
    if (folder / "solution.sh").is_file():
        solution, solution_name = _text(folder / "solution.sh"), "solution.sh"
    elif (folder / "solution.yaml").is_file():
        solution, solution_name = _solution_yaml(folder / "solution.yaml"), "solution.yaml"
    spec = NativeSpec(
        name=folder.name, folder=folder, layout=TERMINAL_BENCH, instruction=instruction.strip(),
        agent_timeout=_number(data, "max_agent_timeout_sec", DEFAULT_AGENT_TIMEOUT, "task.yaml"),
        test_timeout=_number(data, "max_test_timeout_sec", DEFAULT_TEST_TIMEOUT, "task.yaml"),
        build_timeout=DEFAULT_BUILD_TIMEOUT,
        dockerfile=folder / "Dockerfile" if (folder / "Dockerfile").is_file() else None, context=folder,
        tests_dir=tests if tests.is_dir() else None,
        test_script=_text(run_tests) if run_tests.is_file() else None, test_script_name="run-tests.sh",
        solution=solution, solution_name=solution_name,
        difficulty=str(data["difficulty"]) if data.get("difficulty") is not None else None,
        category=str(data["category"]) if data.get("category") is not None else None,
        tags=[str(t) for t in data.get("tags") or []], same_shell=bool(data.get("run_tests_in_same_shell", False)))
    parser = data.get("parser_name", "pytest")
    if parser not in (None, "pytest"):
        spec.notes.append(f"parser_name {parser!r}: the verdict is the test script's pytest runs or exit status")
    _compose(folder, spec)
    return spec


def _table(data: dict[str, Any], key: str, where: str) -> dict[str, Any]:
    value = data.get(key) or {}
    if not isinstance(value, dict):
        raise ValueError(f"{where}: [{key}] must be a table")
    return value


def _str_env(value: Any, where: str) -> dict[str, str]:
    if not value:
        return {}
    if not isinstance(value, dict):
        raise ValueError(f"{where}: env must be a table of strings")
    return {str(k): str(v) for k, v in value.items()}


def load_harbor(folder: Path) -> NativeSpec:
    """A folder in the 2.x / Harbor layout (``instruction.md`` + ``task.toml``)."""
    if not (folder / "instruction.md").is_file():
        raise ValueError("instruction.md: missing")
    instruction = _text(folder / "instruction.md").strip()
    if not instruction:
        raise ValueError("instruction.md: empty")
    data: dict[str, Any] = {}
    if (folder / "task.toml").is_file():
        try:
            data = tomllib.loads(_text(folder / "task.toml"))
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"task.toml: bad TOML: {exc}") from None
    agent, verifier = _table(data, "agent", "task.toml"), _table(data, "verifier", "task.toml")
    environment, metadata = _table(data, "environment", "task.toml"), _table(data, "metadata", "task.toml")
    env_dir = folder / "environment"
    test_sh = folder / "tests" / "test.sh"
    solve = folder / "solution" / "solve.sh"
    memory = environment.get("memory_mb")
    spec = NativeSpec(
        name=folder.name, folder=folder, layout=HARBOR, instruction=instruction,
        agent_timeout=_number(agent, "timeout_sec", DEFAULT_AGENT_TIMEOUT, "task.toml [agent]"),
        test_timeout=_number(verifier, "timeout_sec", DEFAULT_TEST_TIMEOUT, "task.toml [verifier]"),
        build_timeout=_number(environment, "build_timeout_sec", DEFAULT_BUILD_TIMEOUT, "task.toml [environment]"),
        dockerfile=env_dir / "Dockerfile" if (env_dir / "Dockerfile").is_file() else None, context=env_dir,
        tests_dir=folder / "tests" if (folder / "tests").is_dir() else None,
        test_script=_text(test_sh) if test_sh.is_file() else None, test_script_name="test.sh",
        solution=_text(solve) if solve.is_file() else None, solution_name="solution/solve.sh" if solve.is_file()
        else None, solution_dir=folder / "solution" if solve.is_file() else None,
        difficulty=str(metadata["difficulty"]) if metadata.get("difficulty") is not None else None,
        category=str(metadata["category"]) if metadata.get("category") is not None else None,
        tags=[str(t) for t in metadata.get("tags") or []],
        workdir=environment.get("workdir") if isinstance(environment.get("workdir"), str) else None,
        memory_mb=int(memory) if isinstance(memory, int) and not isinstance(memory, bool) and memory > 0 else None,
        internet=bool(environment.get("allow_internet", False)) or environment.get("network_mode") == "public",
        docker_image=environment.get("docker_image") if isinstance(environment.get("docker_image"), str) else None,
        env=_str_env(environment.get("env"), "task.toml [environment]"),
        verifier_env=_str_env(verifier.get("env"), "task.toml [verifier]"))
    if spec.test_script is None:
        raise ValueError("tests/test.sh: missing (the Harbor layout's test entry point)")
    compose = env_dir / "docker-compose.yaml"
    if compose.is_file():
        _compose(env_dir, spec)
    return spec


def load_native(folder: Path | str) -> NativeSpec:
    """The spec of a Terminal-Bench folder in either layout; ``ValueError`` (one line) if it cannot be read."""
    folder = Path(folder).resolve()
    if not _ID.match(folder.name):
        raise ValueError(f"{folder.name!r}: a task folder name must be letters, digits, '.', '_' and '-'")
    kind = folder_layout(folder)
    if kind == TERMINAL_BENCH:
        return load_terminal_bench(folder)
    if kind == HARBOR:
        return load_harbor(folder)
    raise ValueError(f"{folder}: neither task.yaml nor instruction.md/task.toml (not a Terminal-Bench task)")
