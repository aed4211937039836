"""A Terminal-Bench task's Dockerfile, read as a setup plan for the bwrap and unshare sandboxes.

Those sandboxes use the host's ``/usr`` and ``/etc`` instead of the task's base image, so a Dockerfile is not built
but replayed: ``WORKDIR`` and ``ENV`` shape the sandbox, ``COPY``/``ADD`` become files unpacked into it, and each
``RUN`` is split into its simple commands. Commands that only install packages (``apt-get install``, ``pip
install``, ``uv pip install``, ...) become requirements, checked against the host, and are not run; a ``RUN`` that
does only that is dropped; every other ``RUN`` runs in the sandbox at setup with the install commands turned into
no-ops (see :func:`.host.shim_prelude`; the classification is in :mod:`.commands`). What cannot be replayed (a
multi-stage ``COPY --from``, ``ADD`` of a URL, a download, a write into ``/usr`` or ``/etc``) is a problem the
compatibility report names. ``.dockerignore`` is honoured, and nothing that links out of the build context is
copied.
"""

from __future__ import annotations

import fnmatch
import json
import posixpath
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from agentabstain_gym.envs.terminal.native.commands import (
    HARNESS_PACKAGES,
    CommandKind,
    classify,
    simple_commands,
)
from agentabstain_gym.envs.terminal.sandbox.layout import mount_point, normalize, reserved_tree

_CONTINUATION = re.compile(r"\\\s*$")
_HEREDOC = re.compile(r"<<(-?)\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\2")
_VAR = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(?::?([-+])([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))")
IGNORED = ("CMD", "ENTRYPOINT", "EXPOSE", "LABEL", "MAINTAINER", "VOLUME", "HEALTHCHECK", "STOPSIGNAL", "SHELL",
           "ONBUILD", "USER")
@dataclass
class Instruction:
    """One Dockerfile instruction: keyword, its argument text (heredoc bodies included), first line number."""

    keyword: str
    args: str
    line: int


@dataclass
class FileEntry:
    """A file or directory to put at ``dest`` (absolute) in the sandbox; ``source`` None makes a directory."""

    dest: str
    source: Path | None
    mode: int | None = None


@dataclass
class Step:
    """One setup step: files to unpack, or a script to run in ``workdir``."""

    kind: str  # "files" | "run"
    line: int
    workdir: str
    files: list[FileEntry] = field(default_factory=list)
    script: str = ""


@dataclass
class BuildPlan:
    """What a Dockerfile asks for, as the bwrap and unshare sandboxes can give it."""

    base_images: list[str] = field(default_factory=list)
    workdir: str = "/"
    env: dict[str, str] = field(default_factory=dict)
    steps: list[Step] = field(default_factory=list)
    apt_packages: list[str] = field(default_factory=list)
    pip_packages: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    writes: set[str] = field(default_factory=set)
    directories: set[str] = field(default_factory=set)
    skipped_runs: int = 0

    @property
    def writable_dirs(self) -> list[str]:
        """Directories to make writable so every write the plan makes outside the working directory lands."""
        return sorted({m for p in self.writes if (m := mount_point(p)) is not None and reserved_tree(p) is None})


def parse(text: str) -> list[Instruction]:
    """Instructions of a Dockerfile: comments dropped, continued lines joined, heredoc bodies kept with their
    instruction (``RUN <<EOF`` / ``COPY <<EOF``, and ``cat <<EOF > f`` inside a RUN)."""
    lines = text.splitlines()
    out: list[Instruction] = []
    i = 0
    while i < len(lines):
        raw = lines[i]
        start = i
        i += 1
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            continue
        parts = [raw]
        while _CONTINUATION.search(parts[-1]) and i < len(lines):
            parts[-1] = _CONTINUATION.sub("", parts[-1])
            while i < len(lines) and (not lines[i].strip() or lines[i].strip().startswith("#")):
                i += 1  # comment and empty lines inside a continued instruction are dropped, as Docker does
            if i < len(lines):
                parts.append(lines[i])
                i += 1
        joined = " ".join(p.strip() for p in parts)
        for dash, _, word in _HEREDOC.findall(joined):
            body = []
            while i < len(lines):
                line = lines[i]
                i += 1
                if (line.lstrip("\t") if dash else line) == word:
                    break
                body.append(line)
            joined += "\n" + "\n".join(body) + "\n" + word
        keyword, _, args = joined.strip().partition(" ")
        out.append(Instruction(keyword.upper(), args.strip(), start + 1))
    return out


def substitute(text: str, variables: dict[str, str]) -> str:
    """``$VAR``, ``${VAR}``, ``${VAR:-default}`` and ``${VAR:+alt}`` with Dockerfile semantics."""
    def repl(m: re.Match[str]) -> str:
        name = m.group(1) or m.group(4)
        value = variables.get(name, "")
        if m.group(2) == "-":
            return value or m.group(3)
        if m.group(2) == "+":
            return m.group(3) if value else ""
        return value
    return _VAR.sub(repl, text)


def _json_or_split(args: str) -> list[str] | None:
    if args.startswith("["):
        try:
            value = json.loads(args)
        except json.JSONDecodeError:
            return None
        return [str(v) for v in value] if isinstance(value, list) else None
    try:
        return shlex.split(args)
    except ValueError:
        return None


def _flags(words: list[str]) -> tuple[dict[str, str], list[str]]:
    flags: dict[str, str] = {}
    while words and words[0].startswith("--"):
        key, _, value = words.pop(0)[2:].partition("=")
        flags[key] = value
    return flags, words


def _key_values(args: str) -> dict[str, str]:
    """``ENV a=1 b="x y"`` or the legacy ``ENV a 1 2``."""
    words = shlex.split(args)
    if words and "=" not in words[0]:
        return {words[0]: " ".join(words[1:])}
    return {k: v for k, _, v in (w.partition("=") for w in words)}


_ARCHIVE = re.compile(r"\.(tar|tar\.gz|tgz|tar\.bz2|tbz2|tar\.xz|txz)$")


def build_plan(text: str, context: Path, base_env: dict[str, str] | None = None) -> BuildPlan:
    """The setup plan of a Dockerfile whose build context is ``context`` (only its last stage is replayed)."""
    plan = BuildPlan()
    variables: dict[str, str] = dict(base_env or {})
    instructions = parse(text)
    froms = [i for i, ins in enumerate(instructions) if ins.keyword == "FROM"]
    if not froms:
        plan.problems.append("Dockerfile: no FROM instruction")
        return plan
    stage_names = []
    for ins in instructions[:froms[0]]:
        if ins.keyword == "ARG":
            name, _, default = ins.args.partition("=")
            variables.setdefault(name.strip(), default.strip().strip('"'))
    for i in froms:
        words = substitute(instructions[i].args, variables).split()
        _, words = _flags(words)
        if words:
            plan.base_images.append(words[0])
            if len(words) >= 3 and words[1].lower() == "as":
                stage_names.append(words[2])
    if len(froms) > 1:
        plan.notes.append(f"multi-stage build: only the last stage ({plan.base_images[-1]}) is replayed")
    cwd = "/"
    for ins in instructions[froms[-1] + 1:]:
        where = f"Dockerfile line {ins.line}"
        kw = ins.keyword
        if kw == "ARG":
            name, _, default = ins.args.partition("=")
            variables.setdefault(name.strip(), substitute(default.strip().strip('"'), variables))
        elif kw == "ENV":
            try:
                pairs = _key_values(substitute(ins.args, variables))
            except ValueError:
                plan.problems.append(f"{where}: cannot read ENV {ins.args[:60]!r}")
                continue
            variables.update(pairs)
            plan.env.update(pairs)
        elif kw == "WORKDIR":
            cwd = normalize(posixpath.join(cwd, substitute(ins.args, variables).strip().strip('"')))
            plan.workdir = cwd
            plan.writes.add(cwd)
            plan.directories.add(cwd)
            plan.steps.append(Step("files", ins.line, cwd, files=[FileEntry(cwd, None)]))
        elif kw in ("COPY", "ADD"):
            _copy(plan, ins, kw, cwd, variables, context, stage_names)
        elif kw == "RUN":
            _run(plan, ins, cwd, context)
        elif kw in IGNORED:
            if kw == "USER" and ins.args.strip() not in ("root", "0", "0:0"):
                plan.notes.append(f"{where}: USER {ins.args.strip()} is ignored (the agent works as root)")
        else:
            plan.problems.append(f"{where}: instruction {kw} is not supported")
    return plan


def _copy(plan: BuildPlan, ins: Instruction, kw: str, cwd: str, variables: dict[str, str], context: Path,
          stage_names: list[str]) -> None:
    where = f"Dockerfile line {ins.line}"
    if "<<" in ins.args:
        plan.problems.append(f"{where}: {kw} with a heredoc is not supported")
        return
    words = _json_or_split(substitute(ins.args, variables))
    if not words:
        plan.problems.append(f"{where}: cannot read {kw} {ins.args[:60]!r}")
        return
    flags, words = _flags(words)
    if "from" in flags:
        plan.problems.append(f"{where}: {kw} --from={flags['from']} copies from another build stage or image")
        return
    if len(words) < 2:
        plan.problems.append(f"{where}: {kw} needs a source and a destination")
        return
    mode = int(flags["chmod"], 8) if re.fullmatch(r"[0-7]{3,4}", flags.get("chmod", "")) else None
    *sources, dest = words
    dest_abs = normalize(posixpath.join(cwd, dest))
    into_dir = dest.endswith(("/", "/.")) or dest == "." or len(sources) > 1 or dest_abs in plan.directories
    root = context.resolve()
    ignored = dockerignore(root)
    step = Step("files", ins.line, cwd)
    for src in sources:
        if "://" in src:
            plan.problems.append(f"{where}: ADD of a URL needs the network ({src})")
            continue
        matches = sorted(root.glob(src.lstrip("/"))) if any(c in src for c in "*?[") else [root / src.lstrip("/")]
        if not matches or not all(m.exists() for m in matches):
            plan.problems.append(f"{where}: {kw} source {src!r} does not exist in the build context")
            continue
        for match in matches:
            real = match.resolve()
            if real != root and root not in real.parents:
                plan.problems.append(f"{where}: {kw} source {src!r} lies outside the build context")
                continue
            if kw == "ADD" and real.is_file() and _ARCHIVE.search(real.name):
                _add_archive(plan, ins.line, cwd, real, dest_abs)
                continue
            if real.is_dir():
                step.files.append(FileEntry(dest_abs, None, mode))
                for path in sorted(real.rglob("*")):
                    rel = path.relative_to(root).as_posix()
                    if ignored(rel):
                        continue
                    inside = path.resolve()
                    if inside != root and root not in inside.parents:
                        plan.problems.append(f"{where}: {rel} links outside the build context")
                        continue
                    target = posixpath.join(dest_abs, path.relative_to(real).as_posix())
                    step.files.append(FileEntry(target, None if path.is_dir() else path, mode))
            elif not ignored(match.relative_to(root).as_posix()):
                target = posixpath.join(dest_abs, match.name) if into_dir or len(matches) > 1 else dest_abs
                step.files.append(FileEntry(target, real, mode))
    if step.files:
        plan.writes.update(f.dest for f in step.files)
        plan.directories.update(f.dest for f in step.files if f.source is None)
        for f in step.files:
            if (tree := reserved_tree(f.dest)) is not None:
                plan.problems.append(f"{where}: {kw} writes {f.dest} (inside {tree}, read-only on bwrap/unshare)")
                break
        plan.steps.append(step)


def dockerignore(root: Path) -> Callable[[str], bool]:
    """Whether a path (relative to the build context) is excluded by the context's ``.dockerignore``: the last
    matching pattern decides, ``!`` re-includes, a pattern matching a folder excludes what is in it."""
    path = root / ".dockerignore"
    rules: list[tuple[bool, str]] = []
    if path.is_file():
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            negate = line.startswith("!")
            pattern = line.lstrip("!").strip().lstrip("/").removeprefix("./").rstrip("/").replace("**/", "*/")
            if pattern:
                rules.append((negate, pattern))

    def ignored(rel: str) -> bool:
        parts = rel.split("/")
        candidates = ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]
        verdict = False
        for negate, pattern in rules:
            if any(fnmatch.fnmatchcase(c, pattern) for c in candidates):
                verdict = not negate
        return verdict

    return ignored


def _add_archive(plan: BuildPlan, line: int, cwd: str, archive: Path, dest: str) -> None:
    staged = f"/tmp/.agx-add-{line}-{archive.name}"
    plan.steps.append(Step("files", line, cwd, files=[FileEntry(staged, archive)]))
    plan.steps.append(Step("run", line, cwd, script=f"mkdir -p {shlex.quote(dest)} && tar -xf {shlex.quote(staged)} "
                                                    f"-C {shlex.quote(dest)} && rm -f {shlex.quote(staged)}"))
    plan.writes.add(dest)


def _run(plan: BuildPlan, ins: Instruction, cwd: str, context: Path) -> None:
    where = f"Dockerfile line {ins.line}"
    args = ins.args
    if args.startswith("["):
        words = _json_or_split(args)
        script = shlex.join(words) if words else args
    elif args.startswith("<<"):
        first, _, body = args.partition("\n")
        word = _HEREDOC.match(first)
        script = body.rsplit("\n", 1)[0] if word else args
    else:
        _, words = _flags(args.split(" ")) if args.startswith("--") else ({}, [])
        script = " ".join(words) if words else args
    commands = simple_commands(script)
    kinds = [classify(c, cwd, context) for c in commands] if commands is not None else [CommandKind("other")]
    for k, words in zip(kinds, commands or [[script]], strict=False):
        plan.apt_packages += [p for p in k.apt if p not in plan.apt_packages and p not in HARNESS_PACKAGES]
        plan.pip_packages += [p for p in k.pip if p not in plan.pip_packages]
        if k.kind == "network":
            plan.problems.append(f"{where}: {k.why}")
        for path in k.writes:
            plan.writes.add(path)
            if (tree := reserved_tree(path)) is not None:
                plan.problems.append(f"{where}: `{' '.join(words)[:60]}` writes {path} (inside {tree}, read-only "
                                     "on bwrap/unshare)")
    if all(k.kind in ("install", "harness") for k in kinds):
        plan.skipped_runs += 1
        return
    plan.steps.append(Step("run", ins.line, cwd, script=script))
