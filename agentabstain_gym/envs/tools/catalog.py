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
#: Directories of sandboxes made outside the package (``abstain-gym gen sandbox``), known once added with
#: :func:`add_sandbox_dir` (a pair file naming them in ``sandbox_dirs`` adds them); a package sandbox's name wins.
_EXTRA_DIRS: list[Path] = []


def camel(stem: str) -> str:
    """``user_profile`` -> ``UserProfile``."""
    return "".join(part[:1].upper() + part[1:] for part in stem.split("_") if part)


def snake(name: str) -> str:
    """``UserProfile`` -> ``user_profile`` (the file stem of a sandbox name; ``camel(snake(n)) == n``)."""
    return "".join(("_" + c.lower()) if c.isupper() and i else c.lower() for i, c in enumerate(name))


def add_sandbox_dir(path: str | Path) -> None:
    """Make the sandbox specs of ``path`` (``<snake_name>.yaml`` files) known in this process."""
    directory = Path(path).resolve()
    if directory not in _EXTRA_DIRS:
        _EXTRA_DIRS.append(directory)


def remove_sandbox_dir(path: str | Path) -> None:
    directory = Path(path).resolve()
    if directory in _EXTRA_DIRS:
        _EXTRA_DIRS.remove(directory)


def builtin_sandbox_names() -> tuple[str, ...]:
    """The package's own sandboxes (without any added directory)."""
    return tuple(sorted(_specs(SANDBOX_DIR)))


def _specs(directory: Path) -> dict[str, Path]:
    if not directory.is_dir():
        return {}
    return {camel(p.stem): p for p in directory.glob("*.yaml") if not p.name.startswith(("_", "."))}


def sandbox_files() -> dict[str, Path]:
    """Sandbox name -> spec file, sorted by name (the package's, then those of added directories)."""
    files: dict[str, Path] = {}
    for directory in reversed(_EXTRA_DIRS):  # the first added wins over later ones, the package over all
        files.update(_specs(directory))
    files.update(_specs(SANDBOX_DIR))
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
