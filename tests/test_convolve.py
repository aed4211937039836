"""The CONVOLVE protocol: the paper's split, a deterministic miner run reproducible byte for byte, and the
improvement of executable stops over the scripted baselines on the held-out tasks of AbstainQA-v0 and of the paper's
AbstainWebShop-v1 (over-abstention on their solvable twins at most 5 points above the base)."""

from __future__ import annotations

from collections import Counter

import gymnasium as gym
import pytest

import agentabstain_gym
from agentabstain_gym.convolve import (
    ConvolveConfig,
    format_comparison,
    main,
    protocol_split,
    run_convolve,
    twins_of,
    write_outputs,
)


@pytest.fixture(scope="module")
def qa_tasks() -> list:
    return list(gym.make("AbstainQA-v0").unwrapped.tasks())


@pytest.fixture(scope="module")
def results() -> dict:
    return {agent: run_convolve(ConvolveConfig(agent=agent, seed=0)) for agent in ("never-abstain", "rules")}


@pytest.fixture(scope="module")
def web_results() -> dict:
    return {agent: run_convolve(ConvolveConfig(env_id="AbstainWebShop-v1", agent=agent, seed=0))
            for agent in ("never-abstain", "rules")}


def test_split_is_stratified_disjoint_and_respects_env_splits(qa_tasks: list) -> None:
    splits = protocol_split(qa_tasks, seed=0)
    assert [len(splits[k]) for k in ("train", "val", "heldout")] == [20, 8, 101]
    assert Counter(t.category for t in splits["train"]) == dict.fromkeys(
        ["answer_unknown", "false_premise", "subjective", "underspecified_context", "underspecified_intent"], 4)
    assert sorted(Counter(t.category for t in splits["val"]).values()) == [1, 1, 2, 2, 2]
    assert sorted(Counter(t.category for t in splits["heldout"]).values()) == [20, 20, 20, 20, 21]
    assert {t.split for t in splits["train"]} == {"train"} and {t.split for t in splits["val"]} == {"val"}
    assert {t.split for t in splits["heldout"]} <= {"test", "val"}
    pairs = [{t.pair_id for t in splits[k]} for k in ("train", "val", "heldout")]
    assert not (pairs[0] & pairs[1] or pairs[0] & pairs[2] or pairs[1] & pairs[2])
    twins = twins_of(splits["heldout"], qa_tasks)
    assert all(len(v) == 1 and not v[0].should_abstain for v in twins.values())
    assert protocol_split(qa_tasks, seed=1)["train"] != splits["train"]


@pytest.mark.parametrize("env", ["qa", "web"])
@pytest.mark.parametrize("agent", ["never-abstain", "rules"])
def test_mined_playbook_beats_the_scripted_base_on_held_out(results: dict, web_results: dict, env: str,
                                                            agent: str) -> None:
    result = (results if env == "qa" else web_results)[agent]
    base, pb = result["heldout"]["base"], result["heldout"]["playbook"]
    print(f"\n{agent}:\n{format_comparison(result)}")
    assert base["n_abstain"] == pb["n_abstain"] == 101 and base["n_solvable"] == pb["n_solvable"] == 101
    assert pb["absrec@1"] > base["absrec@1"] and pb["spl"] > base["spl"]
    assert pb["over_abstention_rate"] is not None
    assert pb["over_abstention_rate"] <= base["over_abstention_rate"] + 0.05
    assert pb["paired_accuracy"] >= base["paired_accuracy"]
    assert result["playbook"]["bullets"], "the miner learned nothing"
    # held-out tasks are played, never reflected on
    learned_from = {t for b in result["playbook"]["bullets"] for t in b["sources"]}
    trained_on = {row["task_id"] for row in result["training_log"] if row["phase"] == "train"}
    assert learned_from <= trained_on and not learned_from & set(result["splits"]["heldout"])
    assert all(row["reflection"] is None for row in result["training_log"] if row["phase"] == "val")


def test_base_and_playbook_conditions_differ_only_by_the_playbook(results: dict) -> None:
    records = results["never-abstain"]["records"]
    assert [(r["task_id"], r["seed"]) for r in records["base"]] == [(r["task_id"], r["seed"])
                                                                    for r in records["playbook"]]
    for base, pb in zip(records["base"], records["playbook"], strict=True):
        if pb["extras"]["playbook_stop"]["fired"] is None:  # no stop fired: the very same episode
            assert base["steps"] == pb["steps"]


def test_deterministic_run_is_reproducible_byte_for_byte(tmp_path, capsys) -> None:
    dirs = [tmp_path / "a", tmp_path / "b"]
    for d in dirs:
        assert main(["--quiet", "--seed", "3", "--heldout", "30", "--out", str(d)]) == 0
    printed = capsys.readouterr().out
    assert "AbsRec@1" in printed and "never-abstain+playbook" in printed
    names = sorted(p.name for p in dirs[0].iterdir())
    assert names == ["convolve.json", "heldout_base.jsonl", "heldout_playbook.jsonl", "playbook.json",
                     "training.jsonl"]
    for name in names:
        assert (dirs[0] / name).read_bytes() == (dirs[1] / name).read_bytes(), name
    other = run_convolve(ConvolveConfig(seed=4, n_heldout=30))
    write_outputs(other, tmp_path / "c")
    assert (tmp_path / "c" / "convolve.json").read_bytes() != (dirs[0] / "convolve.json").read_bytes()


def test_cli_rejects_unknown_names(capsys) -> None:
    assert main(["--env", "Nope-v0"]) == 2
    assert "valid ids" in capsys.readouterr().err
    assert main(["--agent", "wizard"]) == 2


@pytest.mark.skipif("AbstainWebShop-v1" not in agentabstain_gym.ENV_IDS, reason="the web family is not registered")
def test_protocol_split_on_the_web_shop() -> None:
    tasks = list(gym.make("AbstainWebShop-v1").unwrapped.tasks())
    splits = protocol_split(tasks, seed=0)
    assert [len(splits[k]) for k in ("train", "val", "heldout")] == [20, 8, 101]
    assert sorted(Counter(t.category for t in splits["train"]).values()) == [5, 5, 5, 5]


def test_cli_refuses_an_llm_run_without_a_model(monkeypatch, capsys) -> None:
    monkeypatch.delenv("ABSTAIN_GYM_LLM_MODEL", raising=False)
    assert main(["--reflector", "llm"]) == 2 and main(["--agent", "llm"]) == 2
    assert "ABSTAIN_GYM_LLM_MODEL" in capsys.readouterr().err
