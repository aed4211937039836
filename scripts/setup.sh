#!/usr/bin/env bash
# Everything agentabstain-gym needs on a fresh Debian machine, as root: the sandboxes (bubblewrap, util-linux's
# unshare, Docker and the terminal image), the tools the terminal tasks use, and the package with its extras.
# Idempotent: run it again and it only checks. Used by the README's two commands and by .ci/run.
# Without root or Debian: `pip install -e .` is enough for the web shop, QA and tool families (see the README).
set -euo pipefail
cd "$(dirname "$0")/.."
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore DEBIAN_FRONTEND=noninteractive
say() { printf 'setup: %s\n' "$*"; }
fail() { printf 'setup: %s\n' "$*" >&2; exit 1; }

# every check first, so nothing is installed when a later step could not work
[ "$(id -u)" = 0 ] || fail "needs root (apt-get, dockerd); without root, 'pip install -e .' runs the web, QA and tool families"
command -v apt-get >/dev/null || fail "needs Debian or a derivative (apt-get); elsewhere, 'pip install -e .' runs the web, QA and tool families"
PY="$(command -v python || command -v python3 || true)"
[ -n "$PY" ] || fail "needs Python 3.10 or newer (python3)"
"$PY" -c 'import sys; sys.exit(sys.version_info < (3, 10))' || fail "needs Python 3.10 or newer, not $("$PY" -V 2>&1)"
if [ -z "${PIP_BREAK_SYSTEM_PACKAGES:-}" ] && "$PY" - <<'PYEOF'
import os, sys, sysconfig
marker = os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")
sys.exit(0 if os.path.exists(marker) and sys.prefix == sys.base_prefix else 1)
PYEOF
then
  fail "$PY is managed by the system (PEP 668): make a venv first ('python3 -m venv .venv && . .venv/bin/activate'; Debian: apt-get install python3-venv), then run this again"
fi

# bwrap and unshare sandboxes use the host's /usr, so the task tools are installed on the host (python3-pytest:
# Terminal-Bench tasks' tests run with the sandbox's python3)
say "apt packages: sandboxes, Docker and the terminal tasks' tools (1-2 min on a first run)"
apt-get update -qq
apt-get install -y -qq --no-install-recommends bubblewrap docker.io mmdebstrap tmux util-linux bsdutils \
  bash coreutils findutils grep sed gawk diffutils file python3 python3-pytest gcc libc6-dev make binutils git \
  sqlite3 tar gzip xz-utils bzip2 zip unzip jq curl procps psmisc bc netcat-openbsd iproute2 patch ca-certificates \
  openssl python3-numpy chromium chromium-driver >/dev/null

# torch first, pinned: the CPU wheel on local disk (an unpinned torch pulls a multi-GB CUDA build)
say "torch==2.13.0 (CPU build)"
"$PY" -m pip install --quiet torch==2.13.0
say "agentabstain-gym and its extras (test, rl, docker, llm, plot, ray, mcp, inspect, verifiers, docs; about 1 min on a first run)"
"$PY" -m pip install --quiet -e ".[test,rl,docker,llm,plot,ray,mcp,inspect,verifiers,docs]"

if ! docker info >/dev/null 2>&1; then
  say "starting dockerd"
  (dockerd >/tmp/dockerd.log 2>&1 &)
  for _ in $(seq 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
  docker info >/dev/null 2>&1 || { tail -50 /tmp/dockerd.log; exit 1; }
fi
say "terminal image (built locally with mmdebstrap: 2-3 min the first time, then a check)"
abstain-gym terminal build-image >/dev/null
say "ready"
