"""The tool family's splits: the curated pairs are ``test``; ``train`` and ``val`` are generated pairs, shipped as
data, current with their fixed seeds, made from records no curated pair uses and disjoint from each other; CONVOLVE
and PPO training run on them."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import gymnasium as gym
import pytest

import agentabstain_gym  # noqa: F401
from agentabstain_gym.envs.tools.spec import read_yaml
from agentabstain_gym.envs.tools.splits import SPLIT_SEEDS, split_path, stale_splits
from agentabstain_gym.envs.tools.tasks import load_pairs, split_pairs


@pytest.fixture(scope="module")
def entries() -> dict[str, list[dict]]:
    return {s: read_yaml(split_path(s))["pairs"] for s in SPLIT_SEEDS}


@pytest.fixture(scope="module")
def env() -> gym.Env:
    return gym.make("AbstainTools-v0")


def test_shipped_split_files_are_what_the_fixed_seeds_make() -> None:
    assert stale_splits() == [], "run: python -m agentabstain_gym.envs.tools.splits --write"


def test_generated_t_plus_records_are_disjoint_from_curated_pairs_and_from_each_other(entries: dict) -> None:
    # the curated side computed here from the pairs themselves, not from the generator's own bookkeeping
    curated: dict[str, set[str]] = {}
    for pair in load_pairs():
        for sandbox in pair.positive.sandboxes:
            curated.setdefault(sandbox, set()).update(
                v for call in pair.positive.gold for v in call["arguments"].values() if isinstance(v, str))
    origins = {s: Counter() for s in entries}
    for split, items in entries.items():
        assert len(items) >= 90, split
        for e in items:
            sandbox, key = e["sandboxes"][0], e["origin"]["key"]
            assert key not in curated.get(sandbox, set()), (split, e["id"])
            origins[split][(sandbox, key)] += 1
    assert not set(origins["train"]) & set(origins["val"])
    requests = {p.positive.instruction for p in load_pairs()}
    for split in entries:
        assert not requests & {p.positive.instruction for p in split_pairs(split)}, split


def test_env_has_train_val_and_the_curated_pairs_as_test(env: gym.Env) -> None:
    tasks = env.unwrapped.tasks()
    by_split = Counter(t.split for t in tasks)
    assert by_split["test"] == 2 * len(load_pairs()) == 526
    assert by_split["train"] >= 1000 and by_split["val"] >= 300
    curated = {p.key for p in load_pairs()}
    assert {t.payload["pair_key"] for t in tasks if t.split == "test"} == curated
    for split in ("train", "val"):
        mine = [t for t in tasks if t.split == split]
        assert {t.scenario for t in mine if t.should_abstain} == {f"S{i}" for i in range(1, 9)}
        solvable = {t.pair_id for t in mine if not t.should_abstain}
        assert all(t.pair_id in solvable for t in mine if t.should_abstain)  # every twin in its own split
        env.reset(seed=0, options={"split": split})
        assert env.unwrapped._task.split == split
    val_env = gym.make("AbstainTools-v0", split="val")
    assert {t.split for t in val_env.unwrapped.tasks()} == {"val"}
    listing = env.unwrapped.listing()
    assert listing["pairs_by_split"] == {"train": by_split["train"] // 2, "val": by_split["val"] // 2,
                                         "test": len(load_pairs())}
    assert listing["pairs"] == len(load_pairs())  # the scenario table is the curated test split's


def test_eval_default_split_is_still_the_curated_pairs(env: gym.Env) -> None:
    from agentabstain_gym.runner import EvalConfig, plan

    planned = plan(EvalConfig(env_ids=["AbstainTools-v0"], agents=["never-abstain"]))
    ids = {t.task_id for t in env.unwrapped.tasks() if t.split == "test"}
    assert {e.task_id for e in planned} == ids


def test_convolve_trains_and_validates_on_generated_pairs_and_holds_out_curated_ones() -> None:
    from agentabstain_gym.convolve import ConvolveConfig, run_convolve

    result = run_convolve(ConvolveConfig(env_id="AbstainTools-v0", agent="rules", seed=0, n_train=8, n_val=8,
                                         n_heldout=24))
    split_of = {t.task_id: t.split for t in gym.make("AbstainTools-v0").unwrapped.tasks()}
    assert [len(result["splits"][k]) for k in ("train", "val", "heldout")] == [8, 8, 24]
    assert {split_of[t] for t in result["splits"]["train"]} == {"train"}
    assert {split_of[t] for t in result["splits"]["val"]} == {"val"}
    assert {split_of[t] for t in result["splits"]["heldout"]} == {"test"}
    assert any(e["phase"] == "train" for e in result["training_log"])
    again = run_convolve(ConvolveConfig(env_id="AbstainTools-v0", agent="rules", seed=0, n_train=8, n_val=8,
                                        n_heldout=24))
    assert again["playbook"] == result["playbook"] and again["heldout"] == result["heldout"]


def test_train_command_runs_on_the_tool_family(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from test_rl_forms import require_sb3

    require_sb3()
    from agentabstain_gym.cli import main

    out = tmp_path / "rl"
    assert main(["train", "--env", "AbstainTools-v0", "--timesteps", "256", "--seeds", "0", "--no-plot",
                 "--no-calibrate", "--checkpoints", "1", "--n-envs", "1", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "AbstainTools-v0, test split" in text and "| PPO seed 0 |" in text
    assert (out / "AbstainTools-Stop-v0-ppo-seed0.zip").is_file()


def test_oracle_solves_both_sides_of_every_generated_pair() -> None:
    from agentabstain_gym.core.metrics import paired_metrics
    from agentabstain_gym.envs.tools.oracle import ToolsOracle

    for split in ("train", "val"):
        env = gym.make("AbstainTools-v0", split=split)
        records = []
        for task in env.unwrapped.tasks():
            agent = ToolsOracle(env)
            agent.reset()
            obs, info = env.reset(seed=0, options={"task_id": task.task_id})
            while True:
                obs, _, terminated, truncated, info = env.step(agent.act(obs, info))
                if terminated or truncated:
                    break
            records.append(info["abstention"])
        assert paired_metrics(records)["paired_accuracy"] == 1.0, split
