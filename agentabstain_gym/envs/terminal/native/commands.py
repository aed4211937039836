"""Shell commands of a Dockerfile's ``RUN`` (or of a test script or solution), classified for replay.

A command that only installs packages (``apt-get install``, ``pip install``, ``uv pip install``, ...) is a
requirement, checked against the host and not run; the uv installer and ``uv venv`` are Terminal-Bench harness
tooling; a download, ``git clone`` of a URL or ``npm install`` needs the network; anything else runs, and the paths
it writes (redirections, ``mkdir``, ``cp``, ``sed -i``, ``useradd`` into ``/etc``, ...) tell which directories the
sandbox must make writable. The classification is a plain tokenizer's, not a shell's: it serves reports and the
choice of what to run, while the commands themselves run unchanged.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from agentabstain_gym.envs.terminal.sandbox.layout import normalize

#: Packages Terminal-Bench's own harness needs in the image (its tmux session, its recorder), not the task.
HARNESS_PACKAGES = frozenset({"tmux", "asciinema"})
_APT = ("apt-get", "apt", "aptitude")
_OTHER_PM = ("apk", "yum", "dnf", "microdnf", "zypper")
_PIP = ("pip", "pip3")
_PYTHON = re.compile(r"^python(3(\.\d+)?)?$")
_NETWORK_TOOLS = ("curl", "wget", "git-clone", "npm", "yarn", "pnpm", "cargo", "go", "gem", "conda", "mamba", "uv-sync")
_WRITERS = ("mkdir", "touch", "cp", "mv", "ln", "install", "tee", "chmod", "chown", "rm", "rmdir", "truncate", "dd")
_ETC_WRITERS = ("useradd", "adduser", "groupadd", "addgroup", "usermod", "chpasswd", "passwd", "update-alternatives",
                "locale-gen", "ldconfig", "update-ca-certificates", "dpkg-reconfigure", "systemctl")
#: Package-manager caches a RUN removes after installing; removing them is part of the install.
_CACHES = ("/var/lib/apt", "/var/cache", "/root/.cache", "/tmp")
_UV_INSTALLER = re.compile(r"astral\.sh/uv|install\.python-poetry|get\.pnpm", re.I)


def simple_commands(script: str) -> list[list[str]] | None:
    """The simple commands of a shell line (split at ``&&``, ``||``, ``;``, ``|``, ``&`` and newlines), each a
    list of words with redirections kept as words; None when the text is beyond a plain tokenizer (heredocs,
    unbalanced quotes)."""
    if "<<" in script:
        return None
    lexer = shlex.shlex(script.replace("\n", " ; "), posix=True, punctuation_chars=";&|<>()")
    lexer.whitespace_split = True
    commands: list[list[str]] = [[]]
    try:
        for token in lexer:
            if token in (";", "&&", "||", "|", "&", "(", ")", ";;"):
                if commands[-1]:
                    commands.append([])
            else:
                commands[-1].append(token)
    except ValueError:
        return None
    return [c for c in commands if c]


def _program(words: list[str]) -> list[str]:
    """The words from the program name on (assignments, ``sudo``, ``env`` and ``exec`` prefixes dropped)."""
    i = 0
    while i < len(words) and (re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[i]) or words[i] in ("sudo", "env", "exec",
                                                                                                 "command", "time")):
        i += 1
    return words[i:]


def _operands(words: list[str], with_value: tuple[str, ...] = ()) -> list[str]:
    out: list[str] = []
    skip = False
    for w in words:
        if skip:
            skip = False
        elif w in with_value:
            skip = True
        elif not w.startswith("-"):
            out.append(w)
    return out


def _package_name(spec: str) -> str:
    return re.split(r"[<>=!~;\[ @]", spec, maxsplit=1)[0].strip()


@dataclass
class CommandKind:
    """How one simple command is treated: ``install`` (requirements, not run), ``network``, ``harness`` (tooling of
    Terminal-Bench's harness, not run) or ``other`` (run), with what it installs or writes."""

    kind: str
    apt: list[str] = field(default_factory=list)
    pip: list[str] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)
    why: str = ""


def classify(words: list[str], cwd: str = "/", context: Path | None = None) -> CommandKind:
    """Classify one simple command (see :class:`CommandKind`)."""
    prog = _program(words)
    if not prog:
        return CommandKind("other")
    name = posixpath.basename(prog[0])
    rest = prog[1:]
    text = " ".join(words)
    if name in _APT or name in _OTHER_PM:
        sub = next((w for w in rest if not w.startswith("-")), "")
        if sub in ("install", "add"):
            pkgs = [_package_name(p) for p in _operands(rest, ("-o", "-t", "--target-release"))[1:]]
            return CommandKind("install", apt=[p for p in pkgs if p])
        return CommandKind("install")  # update, upgrade, clean, autoremove, ...: package-manager housekeeping
    pip_args: list[str] | None = None
    if name in _PIP or re.match(r"^pip3\.\d+$", name):
        pip_args = rest
    elif _PYTHON.match(name) and rest[:2] == ["-m", "pip"]:
        pip_args = rest[2:]
    elif name == "uv" and rest[:1] == ["pip"]:
        pip_args = rest[1:]
    if pip_args is not None:
        if not pip_args or pip_args[0] != "install":
            return CommandKind("install")
        args = pip_args[1:]
        specs: list[str] = []
        i = 0
        while i < len(args):
            a = args[i]
            if a in ("-r", "--requirement") and i + 1 < len(args):
                specs += _requirements_file(args[i + 1], cwd, context)
                i += 2
                continue
            if a in ("-e", "--editable") or (not a.startswith("-") and (a.startswith((".", "/")) or "://" in a)):
                return CommandKind("network", why=f"installs a local or remote project ({text[:80]})")
            if a in ("-i", "--index-url", "--extra-index-url", "-c", "--constraint", "--target", "-t", "--prefix"):
                i += 2
                continue
            if not a.startswith("-"):
                specs.append(a)
            i += 1
        return CommandKind("install", pip=[p for p in (_package_name(s) for s in specs) if p])
    if name == "uv" and rest[:1] in (["venv"], ["python"]):
        return CommandKind("harness", why="uv environment set-up")
    if name in ("uv", "uvx") and rest[:1] in (["sync"], ["add"], ["tool"]):
        return CommandKind("network", why=f"uv resolves packages from the network ({text[:80]})")
    if name in ("curl", "wget") and _UV_INSTALLER.search(text):
        return CommandKind("harness", why="installer of a harness tool (uv)")
    if name in ("sh", "bash") and not rest:
        return CommandKind("harness", why="shell reading a piped installer")
    if name in ("source", ".") and rest and (".local/bin/env" in rest[0] or "cargo/env" in rest[0]):
        return CommandKind("harness", why="loads a harness tool's environment")
    if name in ("curl", "wget") or (name == "git" and rest[:1] == ["clone"] and "://" in text) \
            or (name in ("npm", "yarn", "pnpm") and any(w in ("install", "i", "add", "ci") for w in rest[:1])) \
            or (name in ("cargo", "go", "gem") and rest[:1] == ["install"]) \
            or (name in ("conda", "mamba") and rest[:1] == ["install"]):
        return CommandKind("network", why=f"needs the network ({text[:80]})")
    writes = _written_paths(name, rest, words, cwd)
    if name == "rm" and writes and all(any(w == c or w.startswith(c + "/") for c in _CACHES) for w in writes):
        return CommandKind("install")  # clearing package caches
    return CommandKind("other", writes=writes)


def _requirements_file(path: str, cwd: str, context: Path | None) -> list[str]:
    if context is None:
        return []
    candidate = context / path.lstrip("/") if not path.startswith("/") else None
    if candidate is None or not candidate.is_file():
        return []
    lines = candidate.read_text(encoding="utf-8", errors="replace").splitlines()
    return [ln.split("#", 1)[0].strip() for ln in lines if ln.split("#", 1)[0].strip() and not ln.startswith("-")]


def _written_paths(name: str, rest: list[str], words: list[str], cwd: str) -> list[str]:
    """Paths a plain command writes (redirection targets, operands of writers), absolute, for the plan's writes."""
    out: list[str] = []
    for i, w in enumerate(words[:-1]):
        if w in (">", ">>", "&>", ">|") or re.fullmatch(r"\d?>>?", w):
            out.append(words[i + 1])
    if name in _WRITERS:
        ops = _operands(rest, ("-m", "--mode", "-o", "-g", "-t", "--target-directory"))
        out += ops if name in ("mkdir", "touch", "rm", "rmdir", "truncate", "tee", "chmod", "chown") else ops[-1:]
        if name in ("chmod", "chown") and out:
            out = out[1:]
    elif name == "sed" and any(w.startswith("-i") for w in rest):
        out += _operands(rest, ("-e", "-f"))[1:]
    elif name == "tar" and "-C" in rest:
        out.append(rest[rest.index("-C") + 1] if rest.index("-C") + 1 < len(rest) else "")
    elif name == "unzip" and "-d" in rest:
        out.append(rest[rest.index("-d") + 1] if rest.index("-d") + 1 < len(rest) else "")
    elif name == "git" and rest[:1] == ["clone"]:
        out += _operands(rest[1:])[1:2]
    elif name in _ETC_WRITERS:
        out.append("/etc")
    return [normalize(posixpath.join(cwd, p)) for p in out if p and not p.startswith("-") and "$" not in p
            and p != "/dev/null" and not p.startswith("/dev/")]
