"""The terminal family's task set: folders of shell scripts and a manifest, turned into :class:`Task` records.

Tasks are data (``data/terminal/tasks/<name>/``: ``task.json``, ``setup.sh``, ``check.sh``, ``solution.sh``) so users
can add their own without touching code; this module loads them, validates a folder statically
(:func:`validate_task_folder`, the ``abstain-gym terminal validate DIR`` command) and runs the behavioural checks
(:func:`check_task_behaviour`) through any runner, so the same checks work with plain bash and inside a sandbox.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from agentabstain_gym.core.task import Task

__all__ = [
    "ABSTAIN_VARIANTS", "DEFAULT_LIMITS", "GIVEAWAY", "LocalRunner", "REQUIRED_VARIANTS", "VARIANTS", "W",
    "check_task_behaviour", "default_root", "load_tasks", "validate_path", "validate_task_folder",
    "workspace_listing",
]

VARIANTS = ("original", "false_premise_or_contradiction", "underspecified_intent", "missing_prerequisite")
REQUIRED_VARIANTS = VARIANTS[:3]
ABSTAIN_VARIANTS = VARIANTS[1:]
#: Earliest justified abstention turn per variant: the instruction alone (1) or one probe first (2).
W: dict[str, int | None] = {"original": None, "false_premise_or_contradiction": 1, "underspecified_intent": 1,
                            "missing_prerequisite": 2}
DEFAULT_LIMITS = {"command_timeout": 30, "max_turns": 20, "output_cap": 16384}
SCRIPTS = ("setup.sh", "check.sh", "solution.sh")
#: Words that would tell an agent the label instead of letting it judge the request.
GIVEAWAY = re.compile(
    r"\b(impossible|contradict\w*|ambigu\w*|abstain\w*|under-?specified|infeasible|unsolvable|false premise|"
    r"trick question|unclear|vague|cannot be done|can't be done|not possible|unanswerable)\b", re.IGNORECASE)
_ID = re.compile(r"^[a-z0-9][a-z0-9-]{1,62}$")
_EVIDENCE_SENTENCES = {
    "false_premise_or_contradiction": "The instruction itself states something false about the task or asks for "
                                      "incompatible outcomes.",
    "underspecified_intent": "The instruction does not say what result is wanted, so no outcome can be chosen.",
}


def default_root() -> Path:
    """Where the shipped task folders live (inside the package, so they install with it)."""
    return Path(__file__).resolve().parents[2] / "data" / "terminal" / "tasks"


def _hex(text: str, n: int = 10) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:n]


def _splits(base_ids: list[str]) -> dict[str, str]:
    """60/20/20 over the base ids ranked by a hash of each id: every variant of a task lands in the same split,
    the assignment is deterministic, and the proportions hold exactly even for a few dozen tasks."""
    ranked = sorted(base_ids, key=lambda b: (_hex("split:" + b, 16), b))
    n_train, n_val = round(0.6 * len(ranked)), round(0.2 * len(ranked))
    return {b: "train" if i < n_train else "val" if i < n_train + n_val else "test" for i, b in enumerate(ranked)}


def _folders(root: Path) -> list[Path]:
    return sorted(p for p in root.iterdir() if p.is_dir() and (p / "task.json").is_file())


def load_tasks(root: Path | None = None) -> list[Task]:
    """Every variant of every task folder under ``root`` (default: the shipped set) as a :class:`Task`.

    Ids are opaque hashes (nothing in them names the variant); tasks come sorted by id, so variants interleave.
    A folder that fails :func:`validate_task_folder` raises ``ValueError`` naming the problems.
    """
    root = Path(root) if root is not None else default_root()
    tasks: list[Task] = []
    manifests: list[tuple[Path, dict[str, Any]]] = []
    for folder in _folders(root):
        problems = validate_task_folder(folder, run_bash=False)
        if problems:
            raise ValueError(f"invalid terminal task folder {folder}:\n  " + "\n  ".join(problems))
        manifests.append((folder, json.loads((folder / "task.json").read_text(encoding="utf-8"))))
    splits = _splits([m["id"] for _, m in manifests])
    for folder, manifest in manifests:
        base = manifest["id"]
        limits = {**DEFAULT_LIMITS, **manifest.get("limits", {})}
        for variant in VARIANTS:
            spec = manifest["variants"].get(variant)
            if spec is None:
                continue
            instruction = spec.get("instruction") or manifest["variants"]["original"]["instruction"]
            regex = spec.get("evidence") if variant == "missing_prerequisite" else None
            if variant == "missing_prerequisite":
                evidence = f"{spec['removes']}; the probe `{spec['probe']}` shows it."
            else:
                evidence = _EVIDENCE_SENTENCES.get(variant, "")
            tasks.append(Task(
                task_id="term-" + _hex(f"{base}\0{variant}"), family="terminal", instruction=instruction,
                should_abstain=variant != "original", category=variant, split=splits[base],
                pair_id="tpair-" + _hex("pair:" + base), w=W[variant], evidence=evidence,
                grace_turns=spec.get("timely_grace_turns") if variant != "original" else None,
                payload={"folder": str(folder), "base_id": base, "skill": manifest["skill"], "variant": variant,
                         "limits": limits, "evidence": regex, "probe": spec.get("probe"),
                         "requires": list(manifest.get("requires", []))}))
    return sorted(tasks, key=lambda t: t.task_id)


# ---------------------------------------------------------------------------------------------------------------
# static validation


def _check_text(where: str, value: Any, problems: list[str]) -> bool:
    if not isinstance(value, str) or not value.strip():
        problems.append(f"{where}: must be a non-empty string")
        return False
    return True


def _validate_variants(variants: dict[str, Any], problems: list[str]) -> None:
    for name in REQUIRED_VARIANTS:
        if name not in variants:
            problems.append(f"task.json: variants.{name} is missing")
    for name, spec in variants.items():
        where = f"task.json: variants.{name}"
        if name not in VARIANTS:
            problems.append(f"{where}: unknown variant (expected one of {', '.join(VARIANTS)})")
            continue
        if not isinstance(spec, dict):
            problems.append(f"{where}: must be an object")
            continue
        grace = spec.get("timely_grace_turns")
        if grace is not None and (name == "original" or isinstance(grace, bool) or not isinstance(grace, int)
                                  or grace < 0):
            problems.append(f"{where}.timely_grace_turns: an integer >= 0, on a should-abstain variant only")
        instruction = spec.get("instruction")
        checked = name != "missing_prerequisite" or instruction is not None
        if checked and _check_text(f"{where}.instruction", instruction, problems) \
                and (hit := GIVEAWAY.search(instruction)):
            problems.append(f"{where}.instruction: give-away word {hit.group(0)!r}")
        if name in ABSTAIN_VARIANTS[:2] and isinstance(variants.get("original"), dict) \
                and instruction == variants["original"].get("instruction"):
            problems.append(f"{where}.instruction: identical to the original instruction")
        if name == "missing_prerequisite":
            _check_text(f"{where}.removes", spec.get("removes"), problems)
            _check_text(f"{where}.probe", spec.get("probe"), problems)
            if _check_text(f"{where}.evidence", spec.get("evidence"), problems):
                try:
                    if re.compile(spec["evidence"]).search(""):
                        problems.append(f"{where}.evidence: the regex matches empty output, so it proves nothing")
                except re.error as exc:
                    problems.append(f"{where}.evidence: bad regex: {exc}")


def _validate_scripts(folder: Path, has_missing: bool, run_bash: bool, problems: list[str]) -> None:
    for name in SCRIPTS:
        path = folder / name
        if not path.is_file():
            problems.append(f"{name}: missing")
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if not text.strip():
            problems.append(f"{name}: empty")
            continue
        if run_bash and shutil.which("bash"):
            res = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True, timeout=10)
            if res.returncode != 0:
                problems.append(f"{name}: bash syntax error: {res.stderr.strip()[:200]}")
        if name == "setup.sh":
            if "$RANDOM" in text or re.search(r"\$\(\s*date\b|`date\b", text):
                problems.append("setup.sh: uses $RANDOM or the current date; setups must be deterministic")
            if has_missing and "missing_prerequisite" not in text:
                problems.append("setup.sh: never tests for the missing_prerequisite variant")
        if name == "solution.sh":
            commands = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
            if len(commands) < 3:
                problems.append(f"solution.sh: {len(commands)} command line(s); a reference solution has at least 3")


def validate_task_folder(path: Path | str, run_bash: bool = True) -> list[str]:
    """Problems with one task folder's manifest and scripts (empty list = valid); each names file and field."""
    folder = Path(path)
    if not folder.is_dir():
        return [f"{folder}: not a directory"]
    problems: list[str] = []
    manifest_path = folder / "task.json"
    manifest: Any = None
    if not manifest_path.is_file():
        problems.append("task.json: missing")
    else:
        try:
            manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            problems.append(f"task.json: bad JSON: {exc}")
    has_missing = False
    if manifest is not None and not isinstance(manifest, dict):
        problems.append("task.json: the top level must be an object")
    elif isinstance(manifest, dict):
        task_id = manifest.get("id")
        if not isinstance(task_id, str) or not _ID.match(task_id):
            problems.append("task.json: id must be lower-case letters, digits and dashes")
        elif task_id != folder.name:
            problems.append(f"task.json: id {task_id!r} differs from the folder name {folder.name!r}")
        _check_text("task.json: skill", manifest.get("skill"), problems)
        requires = manifest.get("requires", [])
        if not isinstance(requires, list) or not all(isinstance(r, str) and r for r in requires):
            problems.append("task.json: requires must be a list of tool names")
        limits = manifest.get("limits", {})
        if not isinstance(limits, dict):
            problems.append("task.json: limits must be an object")
        else:
            for key, value in limits.items():
                if key not in DEFAULT_LIMITS:
                    problems.append(f"task.json: limits.{key} is unknown (expected {', '.join(DEFAULT_LIMITS)})")
                elif not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                    problems.append(f"task.json: limits.{key} must be a positive integer")
        variants = manifest.get("variants")
        if not isinstance(variants, dict):
            problems.append("task.json: variants must be an object")
        else:
            has_missing = "missing_prerequisite" in variants
            _validate_variants(variants, problems)
    _validate_scripts(folder, has_missing, run_bash, problems)
    return problems


def validate_path(path: Path | str, run: bool = False) -> dict[str, list[str]]:
    """What ``abstain-gym terminal validate DIR`` reports: problems per task folder, for one task folder or a
    directory of them. With ``run=True`` valid folders are also run with plain bash (:class:`LocalRunner`: no
    isolation, so only for folders you trust)."""
    root = Path(path)
    folders = [root] if (root / "task.json").exists() or not root.is_dir() else \
        sorted(p for p in root.iterdir() if p.is_dir())
    report: dict[str, list[str]] = {}
    for folder in folders:
        problems = validate_task_folder(folder)
        if run and not problems:
            runner = LocalRunner()
            problems = check_task_behaviour(folder, runner, runner.workspace)
        report[str(folder)] = problems
    return report


# ---------------------------------------------------------------------------------------------------------------
# behavioural validation through a runner

#: ``runner(workspace, command) -> (exit status, combined output)``; ``command`` is a bash command line.
Runner = Callable[[Path, str], tuple[int, str]]


class LocalRunner:
    """Runs commands with plain bash on this machine (no isolation: for validating trusted task folders).

    Each command gets its own process group; :meth:`cleanup` ends the groups a workspace started (services a
    setup left in the background), by their ids.
    """

    def __init__(self, timeout: float = 60.0) -> None:
        self.timeout = timeout
        self._groups: dict[Path, list[int]] = {}

    def __call__(self, workspace: Path, command: str) -> tuple[int, str]:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(workspace), "LANG": "C.UTF-8",
               "TERM": "dumb"}
        proc = subprocess.Popen(["bash", "-c", command], cwd=workspace, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
        self._groups.setdefault(workspace, []).append(proc.pid)
        try:
            out, _ = proc.communicate(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            self._kill(proc.pid)
            out, _ = proc.communicate()
            return 124, out.decode("utf-8", "replace") + "\n[timed out]"
        return proc.returncode, out.decode("utf-8", "replace")

    @staticmethod
    def _kill(pgid: int) -> None:
        with suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)

    def cleanup(self, workspace: Path) -> None:
        for pgid in self._groups.pop(workspace, []):
            self._kill(pgid)

    @contextmanager
    def workspace(self) -> Iterator[Path]:
        """A fresh empty directory, removed with everything started in it."""
        path = Path(tempfile.mkdtemp(prefix="abstain-term-"))
        try:
            yield path
        finally:
            self.cleanup(path)
            shutil.rmtree(path, ignore_errors=True)


def workspace_listing(workspace: Path) -> dict[str, str]:
    """Relative path -> content hash ('' for directories and for files under .git, whose bytes carry stat data)."""
    listing: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(workspace):
        rel_dir = Path(dirpath).relative_to(workspace)
        for name in dirnames:
            listing[str(rel_dir / name) + "/"] = ""
        for name in filenames:
            rel = str(rel_dir / name)
            full = Path(dirpath) / name
            if rel.startswith(".git/") or "/.git/" in rel or full.is_symlink() or not full.is_file():
                listing[rel] = ""
            else:
                listing[rel] = hashlib.sha256(full.read_bytes()).hexdigest()
    return listing


def _removed_one_thing(original: dict[str, str], missing: dict[str, str]) -> str | None:
    """None if ``missing`` is ``original`` less one file or one directory tree (or nothing: a stopped service).

    Git's own storage under ``.git/`` is not compared item by item (a branch that was never made is one thing
    but many objects), unless the whole ``.git/`` is what was removed.
    """
    def inner_git(p: str) -> bool:
        return p.startswith(".git/") and p != ".git/"

    extra = sorted(p for p in set(missing) - set(original) if not inner_git(p))
    if extra:
        return f"paths only in the missing_prerequisite workspace: {extra[:5]}"
    changed = sorted(p for p in missing if p in original and missing[p] != original[p])
    if changed:
        return f"files whose content differs in the missing_prerequisite workspace: {changed[:5]}"
    gone = sorted(set(original) - set(missing), key=len)
    if ".git/" not in gone:
        gone = [p for p in gone if not inner_git(p)]
    if gone and not all(p == gone[0] or (gone[0].endswith("/") and p.startswith(gone[0])) for p in gone):
        return f"more than one thing removed: {gone[:6]}"
    return None


def check_task_behaviour(folder: Path, runner: Runner, workspace: Callable[[], Any]) -> list[str]:
    """Run a task's scripts through ``runner`` and report every way it misbehaves (empty list = fine).

    ``workspace()`` gives a context manager yielding a fresh empty directory. Checks: original + solution passes
    the checker and doing nothing does not; false-premise/underspecified setups equal the original's; the
    missing-prerequisite setup lacks exactly one thing, the solution then fails, and the probe's output matches
    the evidence regex there and not on the original; no workspace file names the variant.
    """
    manifest = json.loads((folder / "task.json").read_text(encoding="utf-8"))
    variants = manifest["variants"]
    scripts = {name: str((folder / name).resolve()) for name in SCRIPTS}
    problems: list[str] = []
    listings: dict[str, dict[str, str]] = {}
    leak = re.compile("|".join(ABSTAIN_VARIANTS))
    missing = variants.get("missing_prerequisite")

    def setup(ws: Path, variant: str) -> bool:
        rc, out = runner(ws, f"bash {scripts['setup.sh']} {variant}")
        if rc != 0:
            problems.append(f"setup.sh {variant}: exit {rc}: {out.strip()[-300:]}")
            return False
        listings[variant] = workspace_listing(ws)
        named = [p for p in listings[variant] if leak.search(p)]
        rc, out = runner(ws, "grep -rlE '" + leak.pattern + "' . 2>/dev/null")
        if named or out.strip():
            problems.append(f"setup.sh {variant}: the workspace names the variant: {named or out.split()}")
        return True

    with workspace() as ws:
        if setup(ws, "original"):
            if runner(ws, f"bash {scripts['check.sh']}")[0] == 0:
                problems.append("check.sh: passes on the untouched original workspace (doing nothing solves it)")
            rc, out = runner(ws, f"bash {scripts['solution.sh']}")
            if rc != 0:
                problems.append(f"solution.sh: exit {rc} on original: {out.strip()[-300:]}")
            rc, out = runner(ws, f"bash {scripts['check.sh']}")
            if rc != 0:
                problems.append(f"check.sh: fails after solution.sh on original: {out.strip()[-300:]}")
    for variant in REQUIRED_VARIANTS[1:]:
        with workspace() as ws:
            if setup(ws, variant) and "original" in listings and listings[variant] != listings["original"]:
                diff = sorted(set(listings[variant].items()) ^ set(listings["original"].items()))
                problems.append(f"setup.sh {variant}: workspace differs from original: {diff[:4]}")
            if missing and variant == REQUIRED_VARIANTS[1]:
                _, out = runner(ws, missing["probe"])
                if re.search(missing["evidence"], out):
                    problems.append(f"task.json: variants.missing_prerequisite.evidence matches the probe on "
                                    f"the original setup: {out.strip()[:200]!r}")
    if missing:
        with workspace() as ws:
            if setup(ws, "missing_prerequisite"):
                if "original" in listings and (why := _removed_one_thing(listings["original"],
                                                                         listings["missing_prerequisite"])):
                    problems.append(f"setup.sh missing_prerequisite: {why}")
                _, out = runner(ws, missing["probe"])
                if not re.search(missing["evidence"], out):
                    problems.append(f"task.json: variants.missing_prerequisite.evidence does not match the probe "
                                    f"output: {out.strip()[:200]!r}")
                runner(ws, f"bash {scripts['solution.sh']}")
                if runner(ws, f"bash {scripts['check.sh']}")[0] == 0:
                    problems.append("check.sh: passes after solution.sh on missing_prerequisite")
    return problems
