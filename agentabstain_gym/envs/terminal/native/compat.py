"""Whether each Terminal-Bench task can run on each sandbox backend here, and why not.

``bwrap`` and ``unshare`` replay the Dockerfile on the host's system (:mod:`.dockerfile`): a task runs there unless
its setup needs something the host lacks (an apt or Python package, named), the network, writes into ``/usr`` or
``/etc``, several containers, or a Dockerfile instruction that cannot be replayed. ``docker`` builds the Dockerfile
locally, which needs the daemon and every base image already present (images are never pulled). The report also
carries warnings: things that run but may not behave as under Terminal-Bench. With ``run=True`` the reference
solution and the tests are run too (solution passes, doing nothing fails): the strongest evidence a task works.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agentabstain_gym.envs.terminal.native.folders import (
    HARBOR,
    NativeSpec,
    folder_layout,
    load_native,
    task_folders,
)
from agentabstain_gym.envs.terminal.native.host import missing_apt, missing_pip, sandbox_python
from agentabstain_gym.envs.terminal.native.runtime import script_requirements, uses_pytest, workdir_of
from agentabstain_gym.envs.terminal.sandbox import why_unavailable
from agentabstain_gym.envs.terminal.sandbox.layout import path_problem

HOST_BACKENDS = ("bwrap", "unshare")
REPORT_BACKENDS = ("bwrap", "unshare", "docker")
_SERVICE_HINT = re.compile(r"\b(localhost|127\.0\.0\.1|0\.0\.0\.0)\b|\bpgrep\b|\bps aux\b|psutil|requests\.get\(")


@dataclass
class TaskCompat:
    """One task's row of the report: per backend, None if it runs, else the reasons it does not."""

    name: str
    folder: str
    layout: str
    workdir: str | None = None
    reasons: dict[str, list[str]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    verified: dict[str, str] = field(default_factory=dict)

    def runs_on(self, backend: str) -> bool:
        return not self.reasons.get(backend)

    def to_dict(self) -> dict[str, object]:
        return {"name": self.name, "folder": self.folder, "layout": self.layout, "workdir": self.workdir,
                "backends": {b: {"runs": not r, "reasons": r} for b, r in self.reasons.items()},
                "warnings": self.warnings, "verified": self.verified}


def _join(items: Sequence[str]) -> str:
    return ", ".join(items)


def host_reasons(spec: NativeSpec) -> list[str]:
    """Why ``spec`` cannot run on bwrap or unshare on this host, whatever the backend's own state (empty: it can)."""
    plan = spec.plan
    reasons = list(plan.problems)
    if len(spec.services) > 1:
        reasons.append(f"needs several containers (docker-compose services: {_join(spec.services)})")
    problem = path_problem(workdir_of(spec))
    if problem is not None:
        reasons.append(f"working directory: {problem}")
    test_apt, test_pip, test_network = script_requirements(spec.test_script)
    apt = [p for p in (*plan.apt_packages, *test_apt) if p not in ("curl",)]
    pip = list(dict.fromkeys([*plan.pip_packages, *test_pip, *(["pytest"] if uses_pytest(spec) else [])]))
    reasons += [f"tests need the network: {why}" for why in test_network]
    if (missing := missing_apt(list(dict.fromkeys(apt)))):
        reasons.append(f"apt package(s) not installed on this host: {_join(missing)} (the sandbox uses the host's "
                       "/usr: install them there)")
    if sandbox_python() is None and pip:
        reasons.append(f"no /usr/bin/python3 on this host for the Python package(s) {_join(pip)}")
    elif (missing := missing_pip([p for p in pip if p not in ("pytest-json-ctrf",)])):
        reasons.append(f"Python package(s) not installed for the host's /usr/bin/python3: {_join(missing)} (the "
                       "sandbox runs the host's python3: apt-get install python3-<name>, or pip install there)")
    if spec.test_script is None and spec.tests_dir is None:
        reasons.append("no tests (neither run-tests.sh nor tests/)")
    if shutil.which("tar") is None:
        reasons.append("tar is not installed (files are unpacked into the sandbox with it)")
    return reasons


def spec_warnings(spec: NativeSpec) -> list[str]:
    """What runs but may differ from Terminal-Bench, and what stops the reference solution from running here."""
    out = list(spec.notes) + list(spec.plan.notes)
    if spec.workdir is None and spec.plan.workdir in ("", "/"):
        out.append(f"no WORKDIR: the agent starts in {workdir_of(spec)}")
    if spec.same_shell:
        out.append("run_tests_in_same_shell: the tests run in a fresh process here, so they do not see the agent's "
                   "shell variables, aliases or directory")
    if spec.internet:
        out.append("the task allows internet access; every sandbox here has none")
    if spec.tests_dir is not None and any(_SERVICE_HINT.search(p.read_text(encoding="utf-8", errors="replace"))
                                          for p in sorted(spec.tests_dir.rglob("*")) if p.is_file()
                                          and p.stat().st_size < 1_000_000):
        out.append("the tests seem to query a running service or process; the agent's processes are stopped "
                   "before the tests run")
    if uses_pytest(spec):
        out.append("docker: the tests run pytest, which the task's image must provide (the checker has no network "
                   "to install it)")
    if spec.solution is None:
        out.append("no reference solution (solution.sh, solution.yaml or solution/solve.sh)")
    else:
        apt, pip, network = script_requirements(spec.solution)
        missing = missing_apt(apt) + missing_pip(pip)
        if network or missing:
            out.append("the reference solution needs " + _join([*network, *(f"{m} (not on this host)"
                                                                             for m in missing)]))
    return out


def docker_reasons(spec: NativeSpec) -> list[str]:
    """Why ``spec`` cannot run on the docker backend here (empty: it can)."""
    why = why_unavailable_daemon()
    if why is not None:
        return [why]
    reasons = []
    if len(spec.services) > 1:
        reasons.append(f"needs several containers (docker-compose services: {_join(spec.services)})")
    if spec.dockerfile is None:
        reasons.append("no Dockerfile")
        return reasons
    from agentabstain_gym.envs.terminal.native.dockerbuild import missing_base_images

    missing = missing_base_images(spec)
    if missing:
        reasons.append(f"base image(s) not present locally: {_join(missing)} (images are never pulled: "
                       "`docker pull` or `docker load` them yourself)")
    return reasons


def why_unavailable_daemon() -> str | None:
    """None if the Docker daemon answers (our own terminal image is not needed for Terminal-Bench tasks)."""
    from agentabstain_gym.envs.terminal.sandbox.docker import daemon_problem

    return daemon_problem()


def check_spec(spec: NativeSpec, backends: Sequence[str] = REPORT_BACKENDS) -> TaskCompat:
    """The report row of one task (static: nothing is run)."""
    row = TaskCompat(spec.name, str(spec.folder), spec.layout, workdir_of(spec))
    host = None
    for backend in backends:
        if backend in HOST_BACKENDS:
            why = why_unavailable(backend)
            if host is None:
                host = host_reasons(spec)
            row.reasons[backend] = ([f"the {backend} backend is not available here: {why}"] if why else []) + host
        elif backend == "docker":
            row.reasons[backend] = docker_reasons(spec)
    row.warnings = spec_warnings(spec)
    return row


def check_path(root: Path | str, backends: Sequence[str] = REPORT_BACKENDS, run: bool = False) -> list[TaskCompat]:
    """The report for every Terminal-Bench folder under ``root`` (a folder that cannot be read gets one reason,
    the same on every backend). ``run=True`` also verifies tasks that should run (see :func:`verify`)."""
    rows = []
    for folder in task_folders(Path(root)):
        try:
            spec = load_native(folder)
        except (ValueError, OSError) as exc:
            reason = f"cannot read the task: {exc}"
            rows.append(TaskCompat(folder.name, str(folder), folder_layout(folder) or "?",
                                   reasons={b: [reason] for b in backends}))
            continue
        row = check_spec(spec, backends)
        if run:
            for backend in backends:
                if row.runs_on(backend):
                    row.verified[backend] = verify(spec, backend)
        rows.append(row)
    return rows


def verify(spec: NativeSpec, backend: str) -> str:
    """Run the task twice on ``backend``: untouched (the tests must fail) and with the reference solution (they
    must pass). Returns ``"ok"`` or what went wrong, in one line."""
    from agentabstain_gym.envs.terminal.native.runtime import (
        SOLUTION_DIR,
        apply_setup,
        layout_for,
        run_tests,
        solution_command,
        solution_files,
        tar_of,
    )
    from agentabstain_gym.envs.terminal.sandbox import SandboxError, make_sandbox

    if spec.solution is None:
        return "not verified: no reference solution"
    results = {}
    for attempt in ("nothing", "solution"):
        extra = [SOLUTION_DIR] if spec.solution_dir is not None and spec.layout == HARBOR else []
        sandbox = _start(make_sandbox, spec, backend, layout_for(spec, extra))
        try:
            apply_setup(sandbox, spec)
            if attempt == "solution":
                if extra:
                    sandbox.setup_step("true", files=tar_of(solution_files(spec)), timeout=spec.build_timeout)
                sandbox.run(solution_command(spec), timeout=spec.agent_timeout)
            results[attempt] = run_tests(sandbox, spec)
        except SandboxError as exc:
            return f"failed: {str(exc).splitlines()[0][:300]}"
        finally:
            sandbox.close()
    if results["nothing"].passed:
        return "failed: the tests pass without any work"
    if not results["solution"].passed:
        tail = results["solution"].output.strip().splitlines()[-1:] or [""]
        return f"failed: the reference solution does not pass the tests ({tail[0][:200]})"
    return "ok"


def _start(make_sandbox, spec: NativeSpec, backend: str, layout):  # noqa: ANN001, ANN202 - internal helper
    from agentabstain_gym.envs.terminal.native.runtime import sandbox_limits

    kwargs = {}
    if backend == "docker":
        from agentabstain_gym.envs.terminal.native.dockerbuild import build_task_image

        kwargs["image"] = build_task_image(spec)
    sandbox = make_sandbox(backend, layout=layout, limits=sandbox_limits(spec), **kwargs)
    sandbox.start()
    return sandbox
