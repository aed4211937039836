"""The README's quick start runs as written (the README must stay true)."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def test_quick_start_runs(capsys) -> None:
    code = re.search(r"## Quick start\n\n```python\n(.*?)```", README.read_text(), re.S)
    assert code is not None, "README lost its quick start"
    exec(compile(code.group(1), "README quick start", "exec"), {})
    out = capsys.readouterr().out
    assert "absrec@1" in out and "over_abstention_rate" in out


def test_install_lines_work_from_a_clone() -> None:
    """The package is installed from a clone: every ``pip install`` line names extras that exist, never the package
    from a registry (it is not on one), and torch only as the pinned CPU build."""
    import configparser

    config = configparser.ConfigParser()
    config.read(README.parent / "setup.cfg")
    extras = {name.strip() for name in config["options.extras_require"]}
    sources = [README, *sorted((README.parent / "examples").glob("*.py")), README.parent / "scripts" / "setup.sh"]
    lines = [line for path in sources for line in path.read_text().splitlines() if "pip install" in line]
    assert len(lines) >= 5
    for line in lines:
        assert "agentabstain-gym[" not in line and "pip install agentabstain-gym" not in line, line
        for group in re.findall(r'-e "?\.\[([^\]]+)\]', line):
            assert set(group.split(",")) <= extras, (line, extras)
        if re.search(r"\btorch\b", line):
            assert "torch==2.13.0" in line, line
