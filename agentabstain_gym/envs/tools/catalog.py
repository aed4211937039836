"""Where sandbox and pair files live, and the sandbox names derived from them (no YAML is read here).

The registration module imports this to make one id per sandbox, so it must stay cheap: a directory listing.
A file ``data/tools/sandboxes/retail_orders.yaml`` is the sandbox ``RetailOrders``; its pairs are in
``data/tools/pairs/retail_orders.yaml``.
"""

from __future__ import annotations

from pathlib import Path

DATA_DIR = Path(__file__).resolve().parents[2] / "data" / "tools"
SANDBOX_DIR = DATA_DIR / "sandboxes"
PAIR_DIR = DATA_DIR / "pairs"


def camel(stem: str) -> str:
    """``user_profile`` -> ``UserProfile``."""
    return "".join(part[:1].upper() + part[1:] for part in stem.split("_") if part)


def sandbox_files() -> dict[str, Path]:
    """Sandbox name -> spec file, sorted by name."""
    if not SANDBOX_DIR.is_dir():
        return {}
    files = {camel(p.stem): p for p in SANDBOX_DIR.glob("*.yaml") if not p.name.startswith(("_", "."))}
    return dict(sorted(files.items()))


def sandbox_names() -> tuple[str, ...]:
    """Every sandbox name, sorted (from the file names; nothing is parsed)."""
    return tuple(sandbox_files())


def sandbox_path(name: str) -> Path:
    """The spec file of sandbox ``name``; an unknown name is a ``KeyError`` listing the known ones."""
    files = sandbox_files()
    if name not in files:
        raise KeyError(f"unknown sandbox {name!r}; known sandboxes: {', '.join(files) or '(none)'}")
    return files[name]


def pair_files() -> dict[str, Path]:
    """Pair file stem's sandbox name -> file, sorted."""
    if not PAIR_DIR.is_dir():
        return {}
    files = {camel(p.stem): p for p in PAIR_DIR.glob("*.yaml") if not p.name.startswith(("_", "."))}
    return dict(sorted(files.items()))
