"""The benchmark fingerprint of every registered id, and the pinned file that keeps them from changing unnoticed.

An id's fingerprint is :attr:`~agentabstain_gym.core.base_env.AbstainEnv.fingerprint` of the env that
``gym.make(id)`` builds with its registered arguments (the numeric Stop and Discrete forms run their family's tasks,
so they share its value). ``tests/data/fingerprints.json`` pins them; a change that alters one must bump that id's
version (``-v1``) and add a line to its Version History. Update the file with::

    python -m agentabstain_gym.fingerprints --write tests/data/fingerprints.json

``--check FILE`` prints one line per id that differs and exits 1; with neither option the values are printed.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from agentabstain_gym.core.fingerprint import differences

#: What a failing check tells the contributor to do.
VERSION_RULE = ("a change that alters a fingerprint must bump the id's version (-v0 -> -v1) and add a line to its "
                "class's Version History; then run `python -m agentabstain_gym.fingerprints --write "
                "tests/data/fingerprints.json`")


def registered_fingerprint(env_id: str) -> str:
    """The fingerprint of ``gym.make(env_id)`` with the registered arguments (no episode is run)."""
    import gymnasium as gym

    import agentabstain_gym  # noqa: F401 - registers the ids

    env = gym.make(env_id)
    try:
        return str(env.unwrapped.fingerprint)  # type: ignore[attr-defined]
    finally:
        env.close()


def all_ids() -> tuple[str, ...]:
    """Every registered id: the text ids, then the numeric forms."""
    import agentabstain_gym

    return agentabstain_gym.ENV_IDS + agentabstain_gym.SB3_ENV_IDS


def current(env_ids: Iterable[str] | None = None) -> dict[str, str]:
    """Id -> fingerprint for ``env_ids`` (default: every registered id), sorted by id. Numeric forms reuse their
    family id's value when it was computed already (they run the same tasks)."""
    import gymnasium as gym

    out: dict[str, str] = {}
    for env_id in sorted(env_ids if env_ids is not None else all_ids()):
        family = gym.spec(env_id).kwargs.get("env_id")
        out[env_id] = out[family] if family in out else registered_fingerprint(env_id)
    return out


def read_pinned(path: str | Path) -> dict[str, str]:
    """The pinned file's id -> fingerprint (its ``_about`` key skipped)."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object of id -> fingerprint")
    return {k: v for k, v in data.items() if not k.startswith("_")}


def pinned_text(fingerprints: Mapping[str, str]) -> str:
    """The pinned file's text: an ``_about`` line with the version rule, then id -> fingerprint, sorted."""
    about = ("sha256 of each registered id's canonical task list and data (agentabstain_gym/core/fingerprint.py). "
             + VERSION_RULE[0].upper() + VERSION_RULE[1:] + ".")
    return json.dumps({"_about": about, **dict(sorted(fingerprints.items()))}, indent=2, ensure_ascii=False) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m agentabstain_gym.fingerprints [--write FILE | --check FILE]``; 0 ok, 1 differences, 2 bad
    file.
    """
    parser = argparse.ArgumentParser(prog="python -m agentabstain_gym.fingerprints",
                                     description="Benchmark fingerprints of the registered ids.")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--write", metavar="FILE", help="write the pinned file (e.g. tests/data/fingerprints.json)")
    group.add_argument("--check", metavar="FILE", help="compare with a pinned file; exit 1 on any difference")
    args = parser.parse_args(argv)
    values = current()
    if args.write:
        target = Path(args.write)
        if target.exists() and target.is_file():
            try:
                read_pinned(target)
            except (ValueError, json.JSONDecodeError):
                print(f"{target} exists and is not a fingerprint file; not overwritten", file=sys.stderr)
                return 2
        target.write_text(pinned_text(values), encoding="utf-8")
        print(f"wrote {len(values)} fingerprints to {target}")
        return 0
    if args.check:
        try:
            lines = differences(read_pinned(args.check), values)
        except (OSError, ValueError) as exc:
            print(f"cannot read {args.check}: {exc}", file=sys.stderr)
            return 2
        for line in lines:
            print(line)
        if lines:
            print(VERSION_RULE, file=sys.stderr)
        return 1 if lines else 0
    for env_id, value in values.items():
        print(f"{env_id}  {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
