"""Shared fixtures: a per-session search cache, and skips that turn into failures under ABSTAIN_GYM_REQUIRE_ALL=1."""

from __future__ import annotations

import os
import shutil

import pytest


@pytest.fixture(scope="session", autouse=True)
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Build search indexes in a fresh directory, so tests never depend on a user's cache."""
    if "ABSTAIN_GYM_CACHE" not in os.environ:
        os.environ["ABSTAIN_GYM_CACHE"] = str(tmp_path_factory.mktemp("abstain-gym-cache"))


def require_command(name: str, why: str) -> None:
    """Skip when ``name`` is not installed, or fail when CI demands every component."""
    if shutil.which(name):
        return
    message = f"{name} is not installed ({why})"
    if os.environ.get("ABSTAIN_GYM_REQUIRE_ALL") == "1":
        pytest.fail(message + "; ABSTAIN_GYM_REQUIRE_ALL=1 forbids skipping")
    pytest.skip(message)
