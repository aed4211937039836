"""Shared fixtures: a per-session search cache, and skips that turn into failures under ABSTAIN_GYM_REQUIRE_ALL=1."""

from __future__ import annotations

import os
import shutil

import pytest

#: Task folders under data/ hold pytest files of their own (Terminal-Bench's tests/test_outputs.py), which run only
#: inside a task's sandbox.
collect_ignore_glob = ["data/*"]


@pytest.fixture(scope="session", autouse=True)
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Build search indexes in a fresh directory, so tests never depend on a user's cache."""
    if "ABSTAIN_GYM_CACHE" not in os.environ:
        os.environ["ABSTAIN_GYM_CACHE"] = str(tmp_path_factory.mktemp("abstain-gym-cache"))


def skip_or_fail(message: str, *, allow_module_level: bool = False) -> None:
    """Skip with ``message``, or fail when CI demands every component (``ABSTAIN_GYM_REQUIRE_ALL=1``)."""
    if os.environ.get("ABSTAIN_GYM_REQUIRE_ALL") == "1":
        pytest.fail(message + "; ABSTAIN_GYM_REQUIRE_ALL=1 forbids skipping")
    pytest.skip(message, allow_module_level=allow_module_level)


def require_command(name: str, why: str) -> None:
    """Skip (or fail, in CI) when the command ``name`` is not installed."""
    if not shutil.which(name):
        skip_or_fail(f"{name} is not installed ({why})")


def require_backend(name: str) -> None:
    """Skip (or, under ABSTAIN_GYM_REQUIRE_ALL=1, fail) when the terminal sandbox backend ``name`` cannot run here."""
    from agentabstain_gym.envs.terminal.sandbox import why_unavailable

    if name == "bwrap":
        require_command("bwrap", "the default terminal sandbox")
    elif name == "unshare":
        require_command("unshare", "the util-linux fallback sandbox")
    why = why_unavailable(name)
    if why is not None:
        skip_or_fail(f"the {name} backend is not available: {why}")
