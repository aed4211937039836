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
