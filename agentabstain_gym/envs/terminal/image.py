"""Build the Docker image of the terminal family locally: ``abstain-gym terminal build-image``.

Images are never pulled (no registry is assumed reachable): a minimal Debian root file system is made with
``mmdebstrap`` (or ``debootstrap``) from a Debian mirror, with the tools the tasks use, and ``docker import``ed. The
tag is a hash of what goes in (suite, package list, recipe version), so building is idempotent: an existing image
with the same tag is kept, and a changed package list makes a new tag instead of silently reusing an old image.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

REPOSITORY = "agentabstain-gym-terminal"
SUITE = "bookworm"
RECIPE_VERSION = 2
#: The unprivileged user the agent's shell runs as in a container (a passwd entry, so git and whoami work).
AGENT_UID = 1000
_AGENT_PASSWD = f"agent:x:{AGENT_UID}:{AGENT_UID}:agent:/root:/bin/bash"
_AGENT_GROUP = f"agent:x:{AGENT_UID}:"
DEFAULT_MIRROR = "http://deb.debian.org/debian"
#: What the tasks may use. The bwrap and unshare backends use the host's /usr instead: install the same there.
PACKAGES: tuple[str, ...] = (
    "bash", "bc", "bsdutils", "bzip2", "ca-certificates", "coreutils", "curl", "diffutils", "file", "findutils",
    "gawk", "gcc", "git", "grep", "gzip", "iproute2", "jq", "less", "libc6-dev", "make", "netcat-openbsd",
    "openssl", "patch", "procps", "psmisc", "python3", "python3-numpy", "sed", "sqlite3", "tar", "unzip",
    "util-linux", "xz-utils", "zip",
)
#: Commands checked in a fresh container of the built image before it is called done.
CHECK_COMMANDS = ("bash", "script", "python3", "gcc", "make", "git", "sqlite3", "tar", "gzip", "xz", "zip", "unzip",
                  "jq", "ps", "find", "grep", "sed", "awk", "diff", "file", "curl", "nc", "bc", "ip", "openssl")


def content_tag(suite: str = SUITE, packages: Sequence[str] = PACKAGES) -> str:
    """A tag naming exactly what is in the image."""
    blob = json.dumps({"suite": suite, "packages": sorted(packages), "recipe": RECIPE_VERSION}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


def image_name(suite: str = SUITE, packages: Sequence[str] = PACKAGES) -> str:
    """The image the docker backend uses by default."""
    return f"{REPOSITORY}:{content_tag(suite, packages)}"


def _make_rootfs(tarball: Path, suite: str, mirror: str, packages: Sequence[str], log: Callable[[str], None]) -> None:
    include = ",".join(packages)
    if shutil.which("mmdebstrap"):
        hook = f'echo "{_AGENT_PASSWD}" >> "$1/etc/passwd"; echo "{_AGENT_GROUP}" >> "$1/etc/group"'
        argv = ["mmdebstrap", "--quiet", "--variant=minbase", f"--include={include}", f"--customize-hook={hook}",
                suite, str(tarball), f"deb {mirror} {suite} main"]
        log("running: " + " ".join(argv[:4]) + " ...")
        subprocess.run(argv, check=True)
        return
    if shutil.which("debootstrap"):
        root = tarball.parent / "rootfs"
        argv = ["debootstrap", "--variant=minbase", f"--include={include}", suite, str(root), mirror]
        log("running: debootstrap --variant=minbase ...")
        subprocess.run(argv, check=True)
        with open(root / "etc" / "passwd", "a", encoding="utf-8") as passwd:
            passwd.write(_AGENT_PASSWD + "\n")
        with open(root / "etc" / "group", "a", encoding="utf-8") as group:
            group.write(_AGENT_GROUP + "\n")
        subprocess.run(["tar", "-C", str(root), "-cf", str(tarball), "."], check=True)
        shutil.rmtree(root, ignore_errors=True)
        return
    raise RuntimeError("building the image needs mmdebstrap or debootstrap (apt-get install mmdebstrap)")


def build_image(*, suite: str = SUITE, mirror: str | None = None, packages: Sequence[str] = PACKAGES,
                force: bool = False, log: Callable[[str], None] = print) -> str:
    """Build (or find) the image and return its name; ``force`` rebuilds even if it exists."""
    from agentabstain_gym.envs.terminal.sandbox.docker import client as docker_client

    mirror = mirror or os.environ.get("ABSTAIN_GYM_DEBIAN_MIRROR", DEFAULT_MIRROR)
    tag = content_tag(suite, packages)
    name = f"{REPOSITORY}:{tag}"
    import docker

    c = docker_client()
    try:
        if not force:
            try:
                c.images.get(name)
                log(f"image {name} exists; nothing to do")
                return name
            except docker.errors.ImageNotFound:
                pass
        with tempfile.TemporaryDirectory(prefix="abstain-gym-image-") as tmp:
            tarball = Path(tmp) / "rootfs.tar"
            _make_rootfs(tarball, suite, mirror, packages, log)
            log(f"importing {tarball.stat().st_size >> 20} MiB as {name}")
            c.api.import_image_from_file(str(tarball), repository=REPOSITORY, tag=tag, changes=[
                'CMD ["bash"]', "WORKDIR /workspace", "ENV LANG=C.UTF-8",
                f"LABEL io.agentabstain-gym.image={tag}"])
        check = "for c in " + " ".join(CHECK_COMMANDS) + "; do command -v $c >/dev/null || echo missing: $c; done"
        out = c.containers.run(name, ["bash", "-c", check], remove=True, network_mode="none").decode()
        if out.strip():
            raise RuntimeError(f"the built image {name} lacks tools: {out.strip()}")
        log(f"built {name}")
        return name
    finally:
        c.close()
