#!/usr/bin/env bash
# Everything agentabstain-gym needs on a fresh Debian machine, as root: the sandboxes (bubblewrap, util-linux's
# unshare, Docker and the terminal image), the tools the terminal tasks use, and the package with its extras.
# Idempotent: run it again and it only checks. Used by the README's two commands and by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore DEBIAN_FRONTEND=noninteractive

# bwrap and unshare sandboxes use the host's /usr, so the task tools are installed on the host
apt-get update -qq
apt-get install -y -qq --no-install-recommends bubblewrap docker.io mmdebstrap tmux util-linux bsdutils \
  bash coreutils findutils grep sed gawk diffutils file python3 gcc libc6-dev make binutils git sqlite3 tar gzip \
  xz-utils bzip2 zip unzip jq curl procps psmisc bc netcat-openbsd iproute2 patch ca-certificates >/dev/null

# torch first, pinned: the CPU wheel on local disk (an unpinned torch pulls a multi-GB CUDA build)
python -m pip install --quiet torch==2.13.0
python -m pip install --quiet -e ".[test,rl,docker,llm,plot,ray]"

if ! docker info >/dev/null 2>&1; then
  (dockerd >/tmp/dockerd.log 2>&1 &)
  for _ in $(seq 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
  docker info >/dev/null 2>&1 || { tail -50 /tmp/dockerd.log; exit 1; }
fi
abstain-gym terminal build-image >/dev/null
