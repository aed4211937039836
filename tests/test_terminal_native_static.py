"""Terminal-Bench task folders read without running them: both layouts, Dockerfile replay plans, the compatibility
report's reasons, overlays, and `abstain-gym terminal check`. Folders are ours (tests/data/tbench) or written here."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from agentabstain_gym.cli import main
from agentabstain_gym.envs.terminal.native.compat import check_path, host_reasons
from agentabstain_gym.envs.terminal.native.dockerfile import build_plan, parse
from agentabstain_gym.envs.terminal.native.folders import load_native
from agentabstain_gym.envs.terminal.native.overlay import read_overlay
from agentabstain_gym.envs.terminal.native.runtime import layout_for, workdir_of
from agentabstain_gym.envs.terminal.native.taskset import load_task_set

DATA = Path(__file__).parent / "data" / "tbench"
ORIGINAL, HARBOR = DATA / "original", DATA / "harbor"
#: A package name no distribution has, so "missing on this host" holds everywhere.
NO_SUCH_APT = "abstain-gym-no-such-package"
NO_SUCH_PIP = "abstain-gym-no-such-dist"


def write_tb(root: Path, name: str, dockerfile: str, *, yaml_extra: str = "", tests: str | None = None,
             run_tests: str | None = None, solution: str = "true\n", compose: str | None = None) -> Path:
    """A task folder in the original layout."""
    folder = root / name
    (folder / "tests").mkdir(parents=True)
    (folder / "task.yaml").write_text(f"instruction: Do the {name} task.\n{yaml_extra}")
    (folder / "Dockerfile").write_text(textwrap.dedent(dockerfile))
    (folder / "tests" / "test_outputs.py").write_text(tests or "def test_ok():\n    assert True\n")
    (folder / "solution.sh").write_text(solution)
    if run_tests is not None:
        (folder / "run-tests.sh").write_text(run_tests)
    if compose is not None:
        (folder / "docker-compose.yaml").write_text(compose)
    return folder


def write_harbor(root: Path, name: str, dockerfile: str, *, toml: str = "", test_sh: str = "echo 1 > "
                 "/logs/verifier/reward.txt\n", solve: str = "true\n") -> Path:
    """A task folder in the 2.x / Harbor layout."""
    folder = root / name
    for sub in ("environment", "tests", "solution"):
        (folder / sub).mkdir(parents=True)
    (folder / "instruction.md").write_text(f"Do the {name} task.\n")
    (folder / "task.toml").write_text(toml)
    (folder / "environment" / "Dockerfile").write_text(textwrap.dedent(dockerfile))
    (folder / "tests" / "test.sh").write_text(test_sh)
    (folder / "solution" / "solve.sh").write_text(solve)
    return folder


# ----- the two layouts ---------------------------------------------------------------------------------------------

def test_the_original_layout_is_read_with_its_own_timeouts_and_workdir() -> None:
    spec = load_native(ORIGINAL / "fix-report")
    assert spec.layout == "terminal-bench" and spec.instruction.startswith("/app/report.py should total")
    assert (spec.agent_timeout, spec.test_timeout, spec.same_shell) == (180.0, 45.0, False)
    assert spec.difficulty == "medium" and spec.category == "debugging" and spec.tags == ["python", "csv"]
    assert workdir_of(spec) == "/app" and spec.solution_name == "solution.sh"
    assert spec.test_script is not None and "uv run pytest" in spec.test_script
    layout = layout_for(spec)
    assert layout.workdir == "/app" and "/opt" in layout.writable and layout.check_dirs == ("/tests",)
    assert dict(layout.env) == {"SALES_DIR": "/opt/sales"}


def test_a_keystroke_solution_yaml_becomes_a_script() -> None:
    spec = load_native(ORIGINAL / "word-freq")
    assert spec.solution_name == "solution.yaml"
    assert spec.solution is not None and spec.solution.startswith("tr -cs 'A-Za-z' '\\n' < /app/corpus.txt")
    assert spec.services == ["client"] and "TEST_DIR" not in spec.compose_env  # ${T_BENCH_...} values are dropped


def test_the_harbor_layout_is_read_from_task_toml() -> None:
    spec = load_native(HARBOR / "csv-summary")
    assert spec.layout == "harbor" and spec.instruction.startswith("The file `/app/data/sales.csv`")
    assert (spec.agent_timeout, spec.test_timeout, spec.build_timeout) == (300.0, 60.0, 300.0)
    assert spec.memory_mb == 1024 and spec.test_script_name == "test.sh"
    assert spec.context == HARBOR.resolve() / "csv-summary" / "environment"
    assert layout_for(spec).check_dirs == ("/logs", "/tests")
    newer = load_native(HARBOR / "log-stats")  # schema_version 1.1: [task] table, network_mode
    assert (newer.agent_timeout, newer.test_timeout, newer.internet) == (900.0, 90.0, False)
    assert load_native(HARBOR / "fix-c-build").workdir == "/app"  # [environment] workdir


@pytest.mark.parametrize(("files", "message"), [
    ({"task.yaml": "instruction: [unclosed\n"}, "task.yaml: bad YAML"),
    ({"task.yaml": "difficulty: easy\n"}, "task.yaml: instruction must be a non-empty string"),
    ({"task.yaml": "instruction: x\nmax_agent_timeout_sec: -5\n"}, "max_agent_timeout_sec must be a positive"),
    ({"instruction.md": "x", "task.toml": "[agent\n"}, "task.toml: bad TOML"),
    ({"instruction.md": "x", "task.toml": "[verifier]\ntimeout_sec = 'soon'\n"}, "timeout_sec must be a positive"),
    ({"instruction.md": "x", "task.toml": ""}, "tests/test.sh: missing"),
])
def test_a_broken_folder_gets_one_line_naming_file_and_field(tmp_path: Path, files: dict[str, str],
                                                             message: str) -> None:
    folder = tmp_path / "broken"
    folder.mkdir()
    for name, text in files.items():
        (folder / name).write_text(text)
    with pytest.raises(ValueError, match=message.replace("[", r"\[")) as err:
        load_native(folder)
    assert "\n" not in str(err.value)


# ----- Dockerfile replay plans -------------------------------------------------------------------------------------

def test_install_steps_become_requirements_and_are_not_run(tmp_path: Path) -> None:
    plan = build_plan(textwrap.dedent("""\
        FROM python:3.11-slim
        RUN apt-get update && apt-get install -y --no-install-recommends git tmux jq=1.6 \\
            && rm -rf /var/lib/apt/lists/*
        RUN pip install --no-cache-dir numpy==1.26.4 'pandas>=2' && python -m pip install rich
        RUN uv pip install --system pytest==8.4.1
        RUN curl -LsSf https://astral.sh/uv/0.7.13/install.sh | sh
        WORKDIR /app
        RUN mkdir -p data && pip install tqdm && echo ready > data/flag
        """), tmp_path)
    assert plan.apt_packages == ["git", "jq"]  # tmux is Terminal-Bench's harness, not the task's
    assert plan.pip_packages == ["numpy", "pandas", "rich", "pytest", "tqdm"]
    assert plan.skipped_runs == 4 and not plan.problems
    runs = [s for s in plan.steps if s.kind == "run"]
    assert [s.line for s in runs] == [8] and runs[0].workdir == "/app"  # kept, with pip turned into a no-op later


def test_copy_workdir_and_env_follow_docker_semantics(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("a")
    (tmp_path / "src" / "sub").mkdir()
    (tmp_path / "src" / "sub" / "b.txt").write_text("b")
    (tmp_path / "run.sh").write_text("r")
    (tmp_path / "x.csv").write_text("x")
    (tmp_path / "y.csv").write_text("y")
    plan = build_plan(textwrap.dedent("""\
        ARG BASE=debian:bookworm-slim
        FROM ${BASE}
        ENV DATA_DIR=/opt/data
        ENV LEGACY value with spaces
        ENV PATH="/opt/tools/bin:$PATH"
        WORKDIR /srv
        WORKDIR app
        COPY src/ ./src/
        COPY run.sh .
        COPY *.csv ${DATA_DIR}/
        COPY --chmod=755 run.sh /opt/tools/bin/run
        """), tmp_path, {"PATH": "/usr/bin:/bin"})
    assert plan.base_images == ["debian:bookworm-slim"] and plan.workdir == "/srv/app"
    assert plan.env == {"DATA_DIR": "/opt/data", "LEGACY": "value with spaces", "PATH": "/opt/tools/bin:/usr/bin:/bin"}
    dests = {f.dest: f for s in plan.steps for f in s.files}
    assert {"/srv/app/src/a.py", "/srv/app/src/sub/b.txt", "/srv/app/run.sh", "/opt/data/x.csv",
            "/opt/data/y.csv", "/opt/tools/bin/run"} <= set(dests)
    assert dests["/opt/tools/bin/run"].mode == 0o755 and dests["/srv/app/src/sub"].source is None
    assert plan.writable_dirs == ["/opt", "/srv"]


@pytest.mark.parametrize(("line", "reason"), [
    ("RUN useradd -m bob", "`useradd -m bob` writes /etc (inside /etc, read-only on bwrap/unshare)"),
    ("RUN echo 'x' > /etc/motd", "writes /etc/motd (inside /etc"),
    ("COPY conf.ini /usr/local/etc/app.ini", "COPY writes /usr/local/etc/app.ini (inside /usr"),
    ("RUN git clone https://example.org/repo.git /app/repo", "needs the network (git clone"),
    ("RUN wget -q https://example.org/data.tgz", "needs the network (wget"),
    ("ADD https://example.org/data.tgz /app/", "ADD of a URL needs the network"),
    ("COPY --from=builder /out/bin /app/bin", "COPY --from=builder copies from another build stage"),
    ("RUN pip install -e .", "installs a local or remote project"),
    ("COPY missing.txt /app/", "source 'missing.txt' does not exist in the build context"),
])
def test_what_cannot_be_replayed_is_named(tmp_path: Path, line: str, reason: str) -> None:
    (tmp_path / "conf.ini").write_text("[a]\n")
    plan = build_plan(f"FROM ubuntu:24.04\nWORKDIR /app\n{line}\n", tmp_path)
    assert any(reason in p for p in plan.problems), plan.problems
    assert all(p.startswith("Dockerfile line 3:") for p in plan.problems)


def test_heredocs_and_continuations_are_parsed() -> None:
    text = "FROM x\n# a comment\nRUN <<EOF\necho one > /app/a\necho two\nEOF\nRUN echo a \\\n  # inside\n  && echo b\n"
    kinds = [(i.keyword, i.args) for i in parse(text)]
    assert kinds[1] == ("RUN", "<<EOF\necho one > /app/a\necho two\nEOF")
    assert kinds[2] == ("RUN", "echo a && echo b")


# ----- the compatibility report ------------------------------------------------------------------------------------

def test_missing_host_packages_are_named(tmp_path: Path) -> None:
    folder = write_tb(tmp_path, "needs-pkgs", f"""\
        FROM python:3.11-slim
        RUN apt-get update && apt-get install -y {NO_SUCH_APT} git
        RUN pip install {NO_SUCH_PIP}==1.0
        WORKDIR /app
        """)
    reasons = host_reasons(load_native(folder))
    assert any(f"apt package(s) not installed on this host: {NO_SUCH_APT} " in r for r in reasons)
    assert any(f"Python package(s) not installed for the host's /usr/bin/python3: {NO_SUCH_PIP} " in r
               for r in reasons)
    assert not any("git" in r for r in reasons)  # installed by scripts/setup.sh


def test_test_scripts_are_checked_too(tmp_path: Path) -> None:
    folder = write_harbor(tmp_path, "test-needs", "FROM ubuntu:24.04\nWORKDIR /app\n",
                          test_sh=f"pip install {NO_SUCH_PIP}\nnpm install -g left-pad\n")
    reasons = host_reasons(load_native(folder))
    assert any(NO_SUCH_PIP in r for r in reasons) and any("tests need the network: needs the network (npm" in r
                                                          for r in reasons)


def test_several_containers_and_shell_sharing_are_reported(tmp_path: Path) -> None:
    compose = "services:\n  client:\n    build:\n      dockerfile: Dockerfile\n  db:\n    image: postgres:16\n"
    folder = write_tb(tmp_path, "two-services", "FROM ubuntu:24.04\nWORKDIR /app\n", compose=compose,
                      yaml_extra="run_tests_in_same_shell: true\n")
    row = check_path(folder, ["bwrap"])[0]
    assert "needs several containers (docker-compose services: client, db)" in row.reasons["bwrap"]
    assert any("run_tests_in_same_shell" in w for w in row.warnings)


def test_a_workdir_inside_the_host_system_is_refused(tmp_path: Path) -> None:
    folder = write_tb(tmp_path, "usr-workdir", "FROM ubuntu:24.04\nWORKDIR /usr/src/app\n")
    assert any("working directory: /usr/src/app is inside /usr" in r for r in host_reasons(load_native(folder)))


def test_check_cli_reports_every_task_with_reasons(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_tb(tmp_path, "fine", "FROM ubuntu:24.04\nWORKDIR /app\n")
    write_tb(tmp_path, "needs-pkgs", f"FROM ubuntu:24.04\nRUN apt-get install -y {NO_SUCH_APT}\nWORKDIR /app\n")
    write_harbor(tmp_path, "writes-etc", "FROM ubuntu:24.04\nWORKDIR /app\nRUN echo x >> /etc/hosts\n")
    (tmp_path / "not-a-task").mkdir()
    assert main(["terminal", "check", str(tmp_path), "--backend", "bwrap"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split() == ["task", "layout", "workdir", "bwrap"]
    assert "fine" in out and "not-a-task" not in out
    assert f"bwrap: apt package(s) not installed on this host: {NO_SUCH_APT}" in out
    assert "bwrap: Dockerfile line 3: `echo x >> /etc/hosts` writes /etc/hosts" in out
    assert "3 task(s); runnable per backend: bwrap" in out
    assert main(["terminal", "check", str(tmp_path), "--backend", "bwrap", "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["needs-pkgs"]["backends"]["bwrap"]["runs"] is False and rows["writes-etc"]["layout"] == "harbor"


def test_check_cli_bad_input_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["terminal", "check", str(tmp_path / "nowhere")]) == 2
    assert capsys.readouterr().err.strip() == f"abstain-gym: error: no such folder: {tmp_path / 'nowhere'}"
    assert main(["terminal", "check", str(tmp_path)]) == 2
    assert "no Terminal-Bench task folders" in capsys.readouterr().err


# ----- overlays ----------------------------------------------------------------------------------------------------

def _overlay(tmp_path: Path, rows: list[dict]) -> Path:
    path = tmp_path / "overlay.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_an_overlay_adds_request_and_delayed_variants(tmp_path: Path) -> None:
    path = _overlay(tmp_path, [
        {"task_name": "word-freq", "variant": "original", "instruction_level_category": "original",
         "instruction": "ignored"},
        {"task_name": "word-freq", "variant": "fp", "instruction_level_category": "false_premise_or_contradiction",
         "instruction": "Count the words of /app/corpus.txt and sort them by count, lowest and highest first."},
        {"task_name": "word-freq-under", "source_task_name": "word-freq", "variant": "ui",
         "instruction_level_category": "underspecified_intent", "instruction": "Make the usual table."},
        {"task_name": "word-freq-missing", "source_task_name": "word-freq", "variant": "missing",
         "abstention_timing": "delayed", "trigger_style": "observation_triggered", "earliest_abstain_turn": 2,
         "timely_grace_turns": 1, "environment_edits": ["rm /app/corpus.txt"], "evidence_regex": "No such file",
         "trigger_evidence": "corpus.txt is gone"},
        {"task_name": "word-freq-control", "source_task_name": "word-freq", "variant": "control",
         "abstention_timing": "control", "environment_edits": "cp /app/corpus.txt /app/copy.txt"},
    ])
    tasks = load_task_set(str(ORIGINAL), str(path))
    by_variant = {t.payload.get("overlay", {}).get("variant", "base"): t for t in tasks
                  if t.payload["base_id"] == "word-freq"}
    assert set(by_variant) == {"base", "fp", "ui", "missing", "control"}
    assert len({t.pair_id for t in by_variant.values()}) == 1 and len({t.split for t in by_variant.values()}) == 1
    fp, missing, control = by_variant["fp"], by_variant["missing"], by_variant["control"]
    assert (fp.should_abstain, fp.w, fp.category, fp.grace_turns) == (True, 1, "false_premise_or_contradiction", None)
    assert (missing.w, missing.grace_turns, missing.category) == (2, 1, "missing_prerequisite")
    assert missing.instruction == by_variant["base"].instruction and missing.payload["edits"] == "rm /app/corpus.txt"
    assert missing.evidence == "corpus.txt is gone" and missing.payload["overlay"]["trigger_style"] == \
        "observation_triggered"
    assert not control.should_abstain and control.w is None and control.category == "control"
    assert all("fp" not in t.task_id and "missing" not in t.task_id for t in tasks)  # ids are opaque


@pytest.mark.parametrize(("row", "message"), [
    ({"task_name": "x", "instruction_level_category": "vague", "instruction": "y"}, "instruction_level_category"),
    ({"task_name": "x", "instruction_level_category": "underspecified_intent"}, "needs an instruction"),
    ({"task_name": "x", "abstention_timing": "later"}, "abstention_timing must be one of delayed, control"),
    ({"task_name": "x", "abstention_timing": "delayed", "trigger_style": "psychic"}, "trigger_style must be"),
    ({"task_name": "x", "abstention_timing": "delayed", "earliest_abstain_turn": 0}, "earliest_abstain_turn"),
    ({"task_name": "x", "abstention_timing": "delayed", "timely_grace_turns": -1}, "timely_grace_turns"),
    ({"task_name": "x", "abstention_timing": "delayed", "task_dir": "nowhere"}, "task_dir 'nowhere' is not"),
    ({"task_name": "../x", "instruction_level_category": "underspecified_intent", "instruction": "y"}, "task_name"),
    ({"task_name": "x", "abstention_timing": "delayed", "evidence_regex": ".*"}, "does not match empty output"),
])
def test_a_bad_overlay_line_is_named(tmp_path: Path, row: dict, message: str) -> None:
    path = _overlay(tmp_path, [row])
    with pytest.raises(ValueError, match=message) as err:
        read_overlay(path)
    assert str(err.value).startswith("overlay.jsonl:1: ")


def test_an_overlay_row_must_name_a_task(tmp_path: Path) -> None:
    path = _overlay(tmp_path, [{"task_name": "nope", "instruction_level_category": "underspecified_intent",
                                "instruction": "Do it."}])
    with pytest.raises(ValueError, match="overlay.jsonl:1: no task named 'nope'"):
        load_task_set(str(HARBOR), str(path))
    (tmp_path / "dup.jsonl").write_text(2 * (json.dumps({"task_name": "csv-summary", "variant": "a",
                                                         "instruction_level_category": "underspecified_intent",
                                                         "instruction": "Summarise it."}) + "\n"))
    with pytest.raises(ValueError, match="dup.jsonl:2: variant 'a' of task 'csv-summary' appears twice"):
        read_overlay(tmp_path / "dup.jsonl")


# ----- grace windows on our own task folders ------------------------------------------------------------------------

def test_our_task_folders_may_declare_a_grace_window(tmp_path: Path) -> None:
    import shutil

    from agentabstain_gym.envs.terminal.tasks import load_tasks, validate_task_folder

    folder = tmp_path / "fruit-count"
    shutil.copytree(Path(__file__).parent / "data" / "terminal_tasks" / "fruit-count", folder)
    manifest = json.loads((folder / "task.json").read_text())
    manifest["variants"]["missing_prerequisite"]["timely_grace_turns"] = 1
    (folder / "task.json").write_text(json.dumps(manifest))
    graces = {t.category: t.grace_turns for t in load_tasks(tmp_path)}
    assert graces == {"original": None, "false_premise_or_contradiction": None, "underspecified_intent": None,
                      "missing_prerequisite": 1}
    manifest["variants"]["original"]["timely_grace_turns"] = 2
    (folder / "task.json").write_text(json.dumps(manifest))
    assert "task.json: variants.original.timely_grace_turns: an integer >= 0, on a should-abstain variant only" in \
        validate_task_folder(folder, run_bash=False)


def test_dockerignore_and_links_out_of_the_context_are_respected(tmp_path: Path) -> None:
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "main.py").write_text("m")
    (tmp_path / "app" / "secret.env").write_text("s")
    (tmp_path / "app" / "keep.env").write_text("k")
    (tmp_path / "app" / "cache").mkdir()
    (tmp_path / "app" / "cache" / "blob").write_text("b")
    (tmp_path / ".dockerignore").write_text("# comment\n**/*.env\n!app/keep.env\napp/cache\n")
    (tmp_path / "app" / "escape").symlink_to("/etc/hostname")
    plan = build_plan("FROM x\nCOPY . /srv/\n", tmp_path)
    dests = sorted(f.dest for s in plan.steps for f in s.files)
    assert "/srv/app/main.py" in dests and "/srv/app/keep.env" in dests
    assert not any(d.endswith(("secret.env", "blob", "/escape")) for d in dests)
    assert plan.problems == ["Dockerfile line 2: app/escape links outside the build context"]
