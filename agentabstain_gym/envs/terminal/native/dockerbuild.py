"""Building a Terminal-Bench task's Dockerfile for the docker backend, locally and without pulling.

A base image (``FROM``) must already be present in the local daemon: nothing is ever pulled, and a missing one is
an error naming it. The built image is tagged with a hash of the Dockerfile and the build context, so a second
episode reuses it and a changed task gets a new image.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from agentabstain_gym.envs.terminal.native.dockerfile import _flags, parse, substitute
from agentabstain_gym.envs.terminal.native.folders import NativeSpec
from agentabstain_gym.envs.terminal.sandbox.base import SandboxError

REPOSITORY = "agentabstain-gym-tb"


def base_images(spec: NativeSpec) -> list[str]:
    """The images the Dockerfile starts from (stages that name an earlier stage are not images)."""
    if spec.dockerfile is None:
        return []
    variables: dict[str, str] = {}
    stages: set[str] = set()
    images: list[str] = []
    for ins in parse(spec.dockerfile.read_text(encoding="utf-8", errors="replace")):
        if ins.keyword == "ARG" and not images:
            name, _, default = ins.args.partition("=")
            variables.setdefault(name.strip(), default.strip().strip('"'))
        elif ins.keyword == "FROM":
            _, words = _flags(substitute(ins.args, variables).split())
            if not words:
                continue
            if words[0] not in stages and words[0] != "scratch" and words[0] not in images:
                images.append(words[0])
            if len(words) >= 3 and words[1].lower() == "as":
                stages.add(words[2])
    return images


def _client():  # noqa: ANN202 - the docker SDK is optional
    from agentabstain_gym.envs.terminal.sandbox.docker import client

    return client()


def missing_base_images(spec: NativeSpec) -> list[str]:
    """Base images of the task not present in the local daemon."""
    import docker

    c = _client()
    try:
        missing = []
        for image in base_images(spec):
            try:
                c.images.get(image)
            except docker.errors.ImageNotFound:
                missing.append(image)
        return missing
    finally:
        c.close()


def image_tag(spec: NativeSpec) -> str:
    """``agentabstain-gym-tb:<task>-<hash of the Dockerfile and every file of the context>``."""
    digest = hashlib.sha256()
    context = spec.context.resolve()
    for path in sorted(p for p in context.rglob("*") if p.is_file()):
        digest.update(path.relative_to(context).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    if spec.dockerfile is not None:
        digest.update(spec.dockerfile.read_bytes())
    name = "".join(c if c.isalnum() or c in "._-" else "-" for c in spec.name.lower())[:60]
    return f"{REPOSITORY}:{name}-{digest.hexdigest()[:12]}"


def build_task_image(spec: NativeSpec) -> str:
    """The task's image, built now if it is not there yet; ``SandboxError`` (one line) if it cannot be."""
    import docker

    if spec.dockerfile is None:
        raise SandboxError(f"task {spec.name} has no Dockerfile to build")
    tag = image_tag(spec)
    c = _client()
    try:
        try:
            c.images.get(tag)
            return tag
        except docker.errors.ImageNotFound:
            pass
        missing = missing_base_images(spec)
        if missing:
            raise SandboxError(f"task {spec.name}: base image {', '.join(missing)} is not present locally "
                               "(images are never pulled: `docker pull` or `docker load` it yourself)")
        dockerfile = Path(spec.dockerfile).resolve()
        try:
            rel = dockerfile.relative_to(spec.context.resolve()).as_posix()
        except ValueError:
            rel = str(dockerfile)
        try:
            c.images.build(path=str(spec.context), dockerfile=rel, tag=tag, pull=False, rm=True, forcerm=True,
                           labels={"io.agentabstain-gym.task": spec.name})
        except docker.errors.BuildError as exc:
            last = next((str(x.get("stream") or x.get("error") or "").strip() for x in reversed(exc.build_log)
                         if isinstance(x, dict) and (x.get("stream") or x.get("error"))), str(exc))
            raise SandboxError(f"task {spec.name}: docker build failed: {last.splitlines()[-1][:300]}") from None
        except docker.errors.APIError as exc:
            raise SandboxError(f"task {spec.name}: docker build failed: {str(exc).splitlines()[0][:300]}") from None
        return tag
    finally:
        c.close()
