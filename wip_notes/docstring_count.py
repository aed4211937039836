"""Count public objects of agentabstain_gym without a docstring (modules, classes, functions, methods).

Public: no part of the dotted name starts with "_" (dunder methods are not counted). Run from the repo root:
``python wip_notes/docstring_count.py [--list]``.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path


def objects(path: Path, module: str) -> list[tuple[str, bool]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = [(module, ast.get_docstring(tree) is not None)]

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                if node.name.startswith("_"):
                    continue
                if any(isinstance(d, ast.Attribute) and d.attr in ("setter", "deleter") for d in
                       getattr(node, "decorator_list", [])):
                    continue
                if any(isinstance(d, ast.Name) and d.id == "overload" for d in node.decorator_list):
                    continue
                name = f"{prefix}.{node.name}"
                out.append((name, ast.get_docstring(node) is not None))
                if isinstance(node, ast.ClassDef):
                    visit(node.body, name)

    visit(tree.body, module)
    return out


def main() -> int:
    root = Path("agentabstain_gym")
    rows = []
    for path in sorted(root.rglob("*.py")):
        parts = path.with_suffix("").parts
        if any(p.startswith("_") and p != "__init__" for p in parts):
            continue
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        rows += objects(path, module)
    missing = [name for name, has in rows if not has]
    if "--list" in sys.argv:
        print("\n".join(missing))
    print(f"{len(rows)} public objects, {len(missing)} without a docstring")
    return 0


if __name__ == "__main__":
    sys.exit(main())
