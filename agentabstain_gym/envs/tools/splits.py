"""The ``train`` and ``val`` splits of the tool family: generated pairs, never the curated benchmark.

The curated pairs are the ``test`` split. Training and validation pairs come from the sandboxes' T+ templates
(:mod:`agentabstain_gym.envs.tools.fresh`) with fixed seeds, so they are replay-validated like every pair, and their
T+ records are disjoint from the curated pairs' and from each other's: the generator never draws a record a curated
pair uses, and ``val`` never draws a record ``train`` was made from. They ship as data
(``data/tools/splits/{train,val}.yaml``) so that building the env costs a file read, not a generation run;
``python -m agentabstain_gym.envs.tools.splits --check`` says whether the shipped files are what the seeds make
today (a test runs it), and ``--write`` rewrites them after a change to templates, sandboxes or curated pairs.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agentabstain_gym.envs.tools import catalog

SPLIT_DIR = catalog.DATA_DIR / "splits"
#: split -> (generator seed, T+ records drawn per template). Fixed: changing one changes the split files.
SPLIT_SEEDS: Mapping[str, tuple[int, int]] = {"train": (101, 3), "val": (202, 1)}


def split_path(split: str) -> Path:
    return SPLIT_DIR / f"{split}.yaml"


def build_splits() -> dict[str, list[dict[str, Any]]]:
    """The entries of every generated split, ``train`` first so that ``val`` can skip its records."""
    from agentabstain_gym.envs.tools.fresh import generate, origins

    out: dict[str, list[dict[str, Any]]] = {}
    taken: dict[str, frozenset[str]] = {}
    for split, (seed, per_template) in SPLIT_SEEDS.items():
        entries, _ = generate(seed, per_template=per_template, exclude=taken)
        out[split] = entries
        for sandbox, keys in origins(entries).items():
            taken[sandbox] = taken.get(sandbox, frozenset()) | keys
    return out


def render(split: str, entries: Sequence[Mapping[str, Any]]) -> str:
    """The YAML text of one split file (deterministic: same entries, same bytes)."""
    import yaml

    seed, per_template = SPLIT_SEEDS[split]
    head = (f"# The {split} split of AbstainTools-v0: generated pairs (seed {seed}, {per_template} T+ record(s) per "
            f"template), never curated ones.\n# Made by `python -m agentabstain_gym.envs.tools.splits --write`; "
            f"do not edit by hand.\n")
    body = yaml.safe_dump({"generated": {"seed": seed, "per_template": per_template,
                                         "by": "agentabstain_gym.envs.tools.splits"},
                           "split": split, "pairs": list(entries)},
                          sort_keys=False, allow_unicode=True, width=120)
    return head + body


def stale_splits(built: Mapping[str, Sequence[Mapping[str, Any]]] | None = None) -> list[str]:
    """The splits whose shipped file differs from what the seeds make now (empty: all current)."""
    built = build_splits() if built is None else built
    return [s for s, entries in built.items()
            if not split_path(s).is_file() or split_path(s).read_text(encoding="utf-8") != render(s, entries)]


def shipped_origins() -> dict[str, frozenset[str]]:
    """Sandbox -> the T+ records of the shipped train and val pairs (``tools generate`` skips them too, so that
    its fresh pairs are new to a model trained on the train split)."""
    from agentabstain_gym.envs.tools.fresh import origins
    from agentabstain_gym.envs.tools.spec import read_yaml

    out: dict[str, frozenset[str]] = {}
    for split in SPLIT_SEEDS:
        if split_path(split).is_file():
            for sandbox, keys in origins(read_yaml(split_path(split)).get("pairs") or []).items():
                out[sandbox] = out.get(sandbox, frozenset()) | keys
    return out


def summary(entries: Sequence[Mapping[str, Any]]) -> str:
    scenarios = Counter(d["scenario"] for e in entries for d in e["deltas"])
    return (f"{sum(scenarios.values())} pairs from {len(entries)} T+ tasks ("
            + ", ".join(f"{k} {v}" for k, v in sorted(scenarios.items())) + ")")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m agentabstain_gym.envs.tools.splits",
                                     description="Check or rewrite the generated train/val pair files.")
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="exit 1 if a shipped split file is out of date")
    mode.add_argument("--write", action="store_true", help="rewrite the split files from the fixed seeds")
    args = parser.parse_args(argv)
    built = build_splits()
    stale = stale_splits(built)
    for split, entries in built.items():
        print(f"{split}: {summary(entries)}" + (" (file out of date)" if split in stale else ""))
    if args.check:
        if stale:
            print("run: python -m agentabstain_gym.envs.tools.splits --write")
        return 1 if stale else 0
    SPLIT_DIR.mkdir(parents=True, exist_ok=True)
    for split in stale:
        split_path(split).write_text(render(split, built[split]), encoding="utf-8")
        print(f"wrote {split_path(split)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
