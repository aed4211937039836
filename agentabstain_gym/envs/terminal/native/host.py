"""What a Terminal-Bench task needs from the host on bwrap and unshare, and the shell shims that replace installs.

Those sandboxes show the host's ``/usr``, so a package a Dockerfile or test script would install must already be
on the host: :func:`missing_apt` asks dpkg, :func:`missing_pip` asks the Python the sandbox runs (``/usr/bin/python3``;
the runner's own Python is invisible inside). :func:`shim_prelude` is bash that setup steps and test scripts run
first: package installs become no-ops that say so on stderr, ``uv run`` / ``uvx`` run their command directly,
``pytest`` runs as ``python3 -I -m pytest`` (without Harbor's ``--ctrf`` report option, whose plugin is not needed for
a verdict; during a check with the tests' own config only), and each pytest exit status is written to the checker's
output stream. During a check ``source`` and ``.`` run only the task's own files under ``/tests``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Sequence
from functools import lru_cache

from agentabstain_gym.envs.terminal.sandbox.base import SANDBOX_PATH

#: apt package -> command that shows it is there when dpkg does not know the name (a virtual package, or a tool
#: installed outside dpkg).
_COMMAND_OF = {"python3-pip": "pip3", "python-is-python3": "python", "nodejs": "node", "build-essential": "gcc",
               "openjdk-17-jdk": "javac", "default-jdk": "javac", "golang": "go", "golang-go": "go",
               "sqlite3": "sqlite3", "procps": "ps", "iproute2": "ip", "netcat-openbsd": "nc", "netcat": "nc"}


def sandbox_python() -> str | None:
    """The ``python3`` a sandbox's shell finds (bwrap and unshare show the host's ``/usr``), or None."""
    found = shutil.which("python3", path=SANDBOX_PATH)
    return found if found and found.startswith("/usr/") else None


@lru_cache(maxsize=512)
def _dpkg_installed(package: str) -> bool:
    if shutil.which("dpkg-query") is None:
        return False
    res = subprocess.run(["dpkg-query", "-W", "-f=${Status}", package], capture_output=True, text=True, timeout=20)
    return res.returncode == 0 and res.stdout.strip().endswith(" installed")


def missing_apt(packages: Sequence[str]) -> list[str]:
    """The apt packages (in order) that this host lacks: not installed per dpkg and no command of that name."""
    out = []
    for package in packages:
        command = _COMMAND_OF.get(package, package)
        if not _dpkg_installed(package) and shutil.which(command, path=SANDBOX_PATH) is None:
            out.append(package)
    return out


_PROBE = """
import importlib.metadata as m, json, sys
out = {}
for name in json.loads(sys.argv[1]):
    try:
        out[name] = m.version(name)
    except m.PackageNotFoundError:
        out[name] = None
print(json.dumps(out))
"""


@lru_cache(maxsize=64)
def _pip_versions(names: tuple[str, ...]) -> dict[str, str | None]:
    python = sandbox_python()
    if python is None:
        return dict.fromkeys(names)
    res = subprocess.run([python, "-I", "-c", _PROBE, json.dumps(list(names))], capture_output=True, text=True,
                         timeout=60, env={"PATH": SANDBOX_PATH, "LANG": "C.UTF-8"})
    try:
        return json.loads(res.stdout)
    except json.JSONDecodeError:
        return dict.fromkeys(names)


def missing_pip(packages: Sequence[str]) -> list[str]:
    """The Python distributions (in order) the sandbox's ``python3`` cannot import metadata of."""
    if not packages:
        return []
    versions = _pip_versions(tuple(sorted(set(packages))))
    return [p for p in packages if versions.get(p) is None]


def missing_commands(commands: Sequence[str]) -> list[str]:
    """Commands (in order) not on the sandbox's ``PATH``."""
    return [c for c in commands if shutil.which(c, path=SANDBOX_PATH) is None]


#: bash run before setup steps and test scripts (functions are exported so child bash scripts get them too).
_SHIMS = r"""
__agx_skip() { printf '[abstain-gym: skipped `%s`: packages come from the host in this sandbox]\n' "$*" >&2; }
apt-get() { __agx_skip apt-get "$@"; }
apt() { __agx_skip apt "$@"; }
aptitude() { __agx_skip aptitude "$@"; }
apk() { __agx_skip apk "$@"; }
yum() { __agx_skip yum "$@"; }
dnf() { __agx_skip dnf "$@"; }
microdnf() { __agx_skip microdnf "$@"; }
zypper() { __agx_skip zypper "$@"; }
pip() { case "$1" in install|download|uninstall) __agx_skip pip "$@";; *) command python3 -m pip "$@";; esac; }
pip3() { pip "$@"; }
__agx_python() {
  if [ "$2" = -m ] && [ "$3" = pip ]; then shift 3; pip "$@"
  elif [ "$2" = -m ] && { [ "$3" = pytest ] || [ "$3" = py.test ]; }; then shift 3; __agx_pytest "$@"
  elif [ -n "${__AGX_CHECK:-}" ] && { [ "$2" = -c ] || [ "$2" = -m ]; } && [ $# -ge 3 ]; then
    # the tests' own `python3 -c CODE` / `-m MODULE`: isolated (-I), with the working directory and PYTHONPATH put
    # after the standard library, so a json.py or sitecustomize.py the agent left there cannot run in its place
    local exe="$1" how="$2" what="$3"; shift 3
    command "$exe" -I -c 'import os, sys
sys.path += [os.getcwd()] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
how, what = sys.argv[1], sys.argv[2]
if how == "-c":
    sys.argv[:] = ["-c"] + sys.argv[3:]
    exec(compile(what, "<string>", "exec"), {"__name__": "__main__", "__builtins__": __builtins__})
else:
    import runpy
    sys.argv[:] = [what] + sys.argv[3:]
    runpy.run_module(what, run_name="__main__", alter_sys=True)' "$how" "$what" "$@"
  else local exe="$1"; shift; command "$exe" "$@"; fi
}
python3() { __agx_python python3 "$@"; }
python() { if type -P python >/dev/null 2>&1; then __agx_python python "$@"; else __agx_python python3 "$@"; fi; }
__agx_pytest() {
  local args=() pin=() skip=0 own=0 a st f py
  for a in "$@"; do
    if [ "$skip" = 1 ]; then skip=0; continue; fi
    case "$a" in --ctrf) skip=1; continue;; --ctrf=*) continue;; -c|-c?*|--config-file*|--rootdir*) own=1;; esac
    args+=("$a")
  done
  # during a check the config is the tests' own: without -c pytest reads a pytest.ini / tox.ini / pyproject.toml /
  # setup.cfg and conftest.py from the ancestors of /tests (or of the workdir), which the agent may have written
  if [ -n "${__AGX_CHECK:-}" ] && [ "$own" = 0 ]; then
    pin=(-c /dev/null)
    for f in pytest.ini pyproject.toml tox.ini setup.cfg; do
      if [ -f "$__AGX_TESTS/$f" ]; then pin=(-c "$__AGX_TESTS/$f"); break; fi
    done
    pin+=(--rootdir "$__AGX_TESTS" --confcutdir "$__AGX_TESTS")
  fi
  # -I: neither the working directory (the agent's), PYTHONPATH nor the user site come before pytest and the standard
  # library, so nothing planted there (pytest.py, sitecustomize.py, json.py, a .pth) runs in its place; PYTHONPATH is
  # appended afterwards so the tests still import what the task puts there. The python is the host's read-only one
  # where the backend says so (__AGX_PYTHON), not whatever the agent put first on PATH.
  py=${__AGX_PYTHON:-python3}
  command "$py" -I -c 'import os, sys
import pytest
sys.path += [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
sys.exit(pytest.console_main())' -p no:cacheprovider "${pin[@]}" "${args[@]}"; st=$?
  # each run's status goes to the checker's output stream (fd 3), where nothing can erase it later (a log file could
  # be rewritten by a process the agent's program left running)
  if [ -n "${__AGX_NONCE:-}" ]; then printf '\036AGX-PYTEST-%s:%s\036\n' "$__AGX_NONCE" "$st" >&3; fi 2>/dev/null
  return "$st"
}
pytest() { __agx_pytest "$@"; }
py.test() { __agx_pytest "$@"; }
__agx_run() {
  while [ $# -gt 0 ]; do
    case "$1" in
      --) shift; break;;
      -w|--with|-p|--python|--from|--with-requirements|--with-editable|--directory|--project|--extra|--group|\
--env-file|--index|--index-url|-i|--extra-index-url) shift 2;;
      -*) shift;;
      *) break;;
    esac
  done
  [ $# -gt 0 ] || return 0
  local cmd="$1"; shift
  case "$cmd" in
    pytest|py.test) __agx_pytest "$@";;
    python|python3) __agx_python python3 "$@";;
    pip|pip3) pip "$@";;
    *) "$cmd" "$@";;
  esac
}
uv() {
  case "$1" in
    run) shift; __agx_run "$@";;
    tool) if [ "$2" = run ]; then shift 2; __agx_run "$@"; else __agx_skip uv "$@"; fi;;
    pip|venv|python|self|cache|lock|sync|add|remove|init) __agx_skip uv "$@";;
    *) if type -P uv >/dev/null 2>&1; then command uv "$@"; else __agx_skip uv "$@"; fi;;
  esac
}
uvx() { __agx_run "$@"; }
# A check sources only the task's own files: the uv installer's env file, the activate script of a skipped `uv venv`
# and anything else outside /tests is the agent's to write, and sourcing it would run the agent's code in the tests'
# shell (where it could simply `exit 0`).
__agx_source() {
  local f="${2:-}"
  if [ -n "${__AGX_CHECK:-}" ]; then
    [ "${f#/}" != "$f" ] || f="$PWD/$f"
    case "$f/" in */../*) ;; "$__AGX_TESTS"/*) builtin "$@"; return;; esac
    printf '[abstain-gym: skipped `%s %s`: a check sources only files under %s]\n' "$1" "${2:-}" "$__AGX_TESTS" >&2
    return 0
  fi
  if [ -e "$f" ]; then builtin "$@"; else __agx_skip "$@"; fi
}
source() { __agx_source source "$@"; }
.() { __agx_source . "$@"; }
export -f __agx_skip apt-get apt aptitude apk yum dnf microdnf zypper pip pip3 __agx_python python3 python \
  __agx_pytest pytest py.test __agx_run uv uvx __agx_source source .
"""


def shim_prelude() -> str:
    """The shims, outside a check (setup steps, the reference solution): no check variables set."""
    return _SHIMS.lstrip("\n") + "unset __AGX_CHECK __AGX_TESTS __AGX_NONCE __AGX_PYTHON\n"
