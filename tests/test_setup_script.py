"""``scripts/setup.sh`` checks what it needs before it installs anything, and says so in one line."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

SETUP = Path(__file__).resolve().parent.parent / "scripts" / "setup.sh"


def fake_path(tmp_path: Path, *, apt: bool, python: str | None) -> str:
    """A PATH with only what the checks use, an ``apt-get`` that records being called, and ``python``."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("id", "dirname", "cat"):
        found = shutil.which(name)
        assert found is not None
        (bin_dir / name).symlink_to(found)
    if apt:
        (bin_dir / "apt-get").write_text(f"#!/bin/sh\n: > {tmp_path / 'apt-was-run'}\nexit 1\n")
        (bin_dir / "apt-get").chmod(0o755)
    if python is not None:
        (bin_dir / "python").symlink_to(python)
    return str(bin_dir)


def run_setup(path: str, **env: str) -> subprocess.CompletedProcess[str]:
    bash = shutil.which("bash")
    assert bash is not None
    return subprocess.run([bash, str(SETUP)], capture_output=True, text=True, timeout=60,
                          env={"PATH": path, "HOME": os.environ.get("HOME", "/root"), **env})


def needs_root() -> None:
    if os.geteuid() != 0:
        pytest.skip("the checks after the root check can only be reached as root")


def test_without_root_it_stops_before_anything(tmp_path: Path) -> None:
    setpriv = shutil.which("setpriv")
    if os.geteuid() != 0 or setpriv is None:
        result = run_setup(fake_path(tmp_path, apt=True, python=None))
        if os.geteuid() == 0:
            pytest.skip("setpriv (util-linux) is needed to drop root")
    else:
        path = fake_path(tmp_path, apt=True, python=None)
        result = subprocess.run([setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "bash", str(SETUP)],
                                capture_output=True, text=True, timeout=60, env={"PATH": path + ":/usr/bin:/bin"})
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        "setup: needs root (apt-get, dockerd); without root, 'pip install -e .' runs the web, QA and tool families"]
    assert not (tmp_path / "apt-was-run").exists()


def test_without_apt_it_names_the_pip_only_path(tmp_path: Path) -> None:
    needs_root()
    result = run_setup(fake_path(tmp_path, apt=False, python=None))
    assert result.returncode == 1
    assert "needs Debian or a derivative (apt-get)" in result.stderr and "pip install -e ." in result.stderr


def test_a_system_managed_python_is_refused_before_apt_runs(tmp_path: Path) -> None:
    needs_root()
    system = Path("/usr/bin/python3")
    if not system.exists() or not list(Path("/usr/lib").glob("python3*/EXTERNALLY-MANAGED")):
        pytest.skip("no externally managed system Python on this machine to try")
    result = run_setup(fake_path(tmp_path, apt=True, python=str(system)))
    assert result.returncode == 1
    assert "is managed by the system (PEP 668): make a venv first" in result.stderr
    assert not (tmp_path / "apt-was-run").exists()
    # told to go ahead anyway, it gets as far as apt (here a stand-in that fails)
    again = tmp_path / "again"
    again.mkdir()
    result = run_setup(fake_path(again, apt=True, python=str(system)), PIP_BREAK_SYSTEM_PACKAGES="1")
    assert (again / "apt-was-run").exists()
    assert "setup: apt packages" in result.stdout
