"""`abstain-gym tools generate`: fresh pairs from templates are replay-validated, reproducible from the seed, new,
and run through the env and the eval command."""

from __future__ import annotations

import re
from pathlib import Path

import gymnasium as gym
import pytest
import yaml

from agentabstain_gym.cli import main
from agentabstain_gym.envs.tools.fresh import fill, generate, origins, template_files
from agentabstain_gym.envs.tools.splits import shipped_origins
from agentabstain_gym.envs.tools.tasks import file_pairs, load_pairs
from agentabstain_gym.envs.tools.validate import pair_problems


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_generated_pairs_pass_the_replay_validation(seed: int, tmp_path: Path) -> None:
    out = tmp_path / f"fresh{seed}.yaml"
    assert main(["tools", "generate", "--seed", str(seed), "--out", str(out)]) == 0
    pairs = file_pairs(str(out))
    assert len(pairs) >= 2 * len(template_files())
    for pair in pairs:
        assert pair_problems(pair) == []
    curated = {p.positive.instruction for p in load_pairs()}
    assert not curated & {p.positive.instruction for p in pairs}, "generated tasks repeat curated ones"
    # nor do they reuse the T+ records of the shipped train/val splits: fresh means new to a trained model too
    trained = shipped_origins()
    made = origins(yaml.safe_load(out.read_text())["pairs"])
    assert made and not any(keys & trained.get(sandbox, frozenset()) for sandbox, keys in made.items())
    # an added record carries an id in its collection's own numbering: its shape must not mark it as the twin's
    added = [p.params["key"] for p in pairs if p.op == "add_matching_entity"]
    assert added and all(re.fullmatch(r"\D*?[0-9a-f]+", str(k)) for k in added), added


def test_same_seed_same_file_other_seed_other_records(tmp_path: Path) -> None:
    a, b, c = (tmp_path / n for n in ("a.yaml", "b.yaml", "c.yaml"))
    for path, seed in ((a, 5), (b, 5), (c, 6)):
        assert main(["tools", "generate", "--seed", str(seed), "--out", str(path), "--sandbox", "Calendar",
                     "--sandbox", "WorkforceHr"]) == 0
    assert a.read_bytes() == b.read_bytes()
    ids = lambda p: {e["id"].split("-", 1)[1] for e in yaml.safe_load(p.read_text())["pairs"]}  # noqa: E731
    assert ids(a) != ids(c)


def test_fill_keeps_types_and_applies_filters() -> None:
    record = {"title": "Team retro", "start": "2025-03-20T14:30", "seats": 4, "tags": ["a"]}
    assert fill("{seats}", record) == 4 and fill("{tags}", record) == ["a"]
    assert fill("{title} on {start|weekday} {start|day} at {start|time}", record) == \
        "Team retro on Thursday 20 March at 14:30"
    assert fill({"d": ["{start|date}"]}, record) == {"d": ["2025-03-20"]}


def test_env_and_eval_run_a_generated_file(tmp_path: Path, capsys) -> None:
    out = tmp_path / "fresh.yaml"
    entries, _ = generate(3, sandboxes=["Calendar"], per_template=1)
    from agentabstain_gym.envs.tools.fresh import write_pairs

    write_pairs(entries, out, seed=3)
    env = gym.make("AbstainTools-v0", pairs_file=str(out))
    n = len(file_pairs(str(out)))
    assert env.unwrapped.listing()["pairs"] == n
    obs, info = env.reset(seed=0)
    assert "Request from the user" in obs and info["tools"]
    capsys.readouterr()
    assert main(["eval", "--pairs", str(out), "--agent", "always-abstain", "--quiet"]) == 0
    assert "macro" in capsys.readouterr().out
    assert main(["eval", "--pairs", str(tmp_path / "missing.yaml"), "--quiet"]) == 2
    assert "no such pair file" in capsys.readouterr().err


def test_unknown_sandbox_is_a_usage_error(tmp_path: Path, capsys) -> None:
    assert main(["tools", "generate", "--seed", "1", "--out", str(tmp_path / "x.yaml"), "--sandbox", "Nope"]) == 2
    assert "no templates" in capsys.readouterr().err


def test_pick_unique_keeps_only_records_the_request_names_alone() -> None:
    import numpy as np

    from agentabstain_gym.envs.tools.fresh import _candidates

    pick = {"collection": "events", "where": {"field": "item.calendar_id", "op": "eq", "value": "cal-work"}}
    every = _candidates("Calendar", pick, np.random.default_rng(0))
    alone = _candidates("Calendar", {**pick, "unique": ["title"]}, np.random.default_rng(0))
    titles = [r["title"] for r in every]
    assert 0 < len(alone) < len(every)
    assert all(titles.count(r["title"]) == 1 for r in alone)
