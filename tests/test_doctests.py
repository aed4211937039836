"""The examples in the package's docstrings run, as part of ``python -m pytest -q``.

Only modules whose source holds an example are imported (importing every module would pull in every optional
extra); ``python -m pytest --doctest-modules agentabstain_gym`` runs the same examples through pytest's collector.
"""

from __future__ import annotations

import doctest
import importlib
import io
from pathlib import Path

import pytest

import agentabstain_gym

PACKAGE = Path(agentabstain_gym.__file__).parent
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _modules_with_examples() -> list[str]:
    names = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if ">>> " in path.read_text(encoding="utf-8"):
            parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
            names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


MODULES = _modules_with_examples()


def test_the_package_has_examples() -> None:
    assert len(MODULES) >= 5, MODULES


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name: str) -> None:
    module = importlib.import_module(name)
    tests = [t for t in doctest.DocTestFinder().find(module, name) if t.examples]
    assert tests, f"{name} mentions '>>> ' but no docstring of it holds an example"
    runner, out = doctest.DocTestRunner(optionflags=FLAGS), io.StringIO()
    for test in tests:
        runner.run(test, out=out.write)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, out.getvalue()
