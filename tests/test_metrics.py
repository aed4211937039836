"""Tests of the section-4 metrics: the paper's worked example, premature handling, paired metrics, reports."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentabstain_gym.core import metrics as m
from agentabstain_gym.core.outcome import classify, side_correct
from agentabstain_gym.core.record import EpisodeRecord

_COUNTER = iter(range(10**9))


def rec(
    *,
    should_abstain: bool,
    w: int | None = None,
    tau: int | None = None,
    task_passed: bool = False,
    family: str = "web",
    pair_id: str | None = None,
    category: str | None = None,
    scenario: str | None = None,
    evidence_turn: int | None = None,
    max_turns: int = 10,
    agent: str = "test-agent",
    task_reward: float | None = None,
) -> dict[str, Any]:
    """A complete episode record (every EpisodeRecord field) with its outcome derived by ``classify``."""
    outcome = classify(should_abstain, w, tau, task_passed)
    n = next(_COUNTER)
    return EpisodeRecord(
        env_id="AbstainWebShop-v1", family=family, task_id=f"t{n}", pair_id=pair_id, split="test",
        category=category or ("missing_target" if should_abstain else "answerable"), scenario=scenario,
        should_abstain=should_abstain, w=w, tau=tau, evidence_turn=evidence_turn,
        turns=tau if tau is not None else max_turns, outcome=outcome, success=side_correct(outcome),
        task_reward=task_reward if task_reward is not None else float(outcome == "success"),
        committed=None, agent=agent, seed=n, steps=[], max_turns=max_turns,
        delay=None if tau is None or w is None else tau - w,
    ).to_dict()


def abstain_set(ws: tuple[int, ...], taus: tuple[int | None, ...], max_turns: int = 10) -> list[dict[str, Any]]:
    return [rec(should_abstain=True, w=w, tau=t, max_turns=max_turns) for w, t in zip(ws, taus, strict=True)]


def pairs(n: int, *, act_tau: int | None, act_passed: bool, abstain_tau: int | None, w: int = 1,
          category: str = "missing_target", scenario: str | None = None) -> list[dict[str, Any]]:
    out = []
    for _ in range(n):
        pid = f"{category}-{next(_COUNTER)}"
        out.append(rec(should_abstain=False, tau=act_tau, task_passed=act_passed, pair_id=pid, scenario=scenario))
        out.append(rec(should_abstain=True, w=w, tau=abstain_tau, pair_id=pid, category=category, scenario=scenario))
    return out


# ---------------------------------------------------------------------------------------------------------------
# should-abstain metrics


def test_worked_example_from_paper() -> None:
    records = abstain_set((1, 2, 3), (1, None, 4))
    assert m.abs_rec_at_k(records, 1) == pytest.approx(1 / 3)
    assert m.abs_rec_at_k(records, 2) == pytest.approx(2 / 3)
    assert m.abs_rec_at_k(records, 10) == pytest.approx(2 / 3)
    assert m.spl(records) == pytest.approx((1 + 0 + 0.75) / 3)
    assert m.overall_recall(records) == pytest.approx(2 / 3)
    assert m.premature_rate(records) == 0.0
    assert m.abs_rec_turn_at_k(records, 3) == pytest.approx(1 / 3)
    assert m.abs_rec_turn_at_k(records, 4) == pytest.approx(2 / 3)
    s = m.summarize(records, bootstrap=0)
    assert s["absrec@1"] == pytest.approx(1 / 3) and s["absrec@10"] == pytest.approx(2 / 3)
    assert s["spl"] == pytest.approx(0.5833333)


def test_abstaining_at_turn_one_when_w_is_one_is_timely() -> None:
    records = abstain_set((1,), (1,))
    assert records[0]["outcome"] == "timely"
    assert m.abs_rec_at_k(records, 1) == 1.0
    assert m.abs_rec_turn_at_k(records, 1) == 1.0
    assert m.spl(records) == 1.0
    assert m.delay_stats(records)["mean_delay"] == 0.0


def test_premature_is_a_failure_everywhere_and_has_its_own_rate() -> None:
    records = abstain_set((2, 3), (1, 2))
    assert all(r["outcome"] == "premature" for r in records)
    for k in range(1, 11):
        assert m.abs_rec_at_k(records, k) == 0.0
        assert m.abs_rec_turn_at_k(records, k) == 0.0
    assert m.overall_recall(records) == 0.0
    assert m.spl(records) == 0.0
    assert m.premature_rate(records) == 1.0
    assert m.delay_stats(records)["mean_delay"] is None
    mixed = records + abstain_set((2,), (2,))
    assert m.premature_rate(mixed) == pytest.approx(2 / 3)
    assert m.overall_recall(mixed) == pytest.approx(1 / 3)


def test_k_must_be_positive() -> None:
    with pytest.raises(ValueError):
        m.abs_rec_at_k(abstain_set((1,), (1,)), 0)


def test_delay_and_reaction_delay() -> None:
    records = [
        rec(should_abstain=True, w=2, tau=4, evidence_turn=1),  # delay 2, reaction 2
        rec(should_abstain=True, w=1, tau=1, evidence_turn=0),  # delay 0, reaction 0
        rec(should_abstain=True, w=2, tau=3, evidence_turn=None),  # delay 1, no reaction
        rec(should_abstain=True, w=2, tau=1, evidence_turn=None),  # premature: left out
    ]
    stats = m.delay_stats(records)
    assert stats["mean_delay"] == pytest.approx(1.0)
    assert stats["mean_reaction_delay"] == pytest.approx(1.0)


episode = st.integers(1, 20).flatmap(
    lambda mt: st.tuples(st.just(mt), st.integers(1, mt), st.none() | st.integers(1, mt))
)


@settings(max_examples=150, deadline=None)
@given(st.lists(episode, min_size=1, max_size=40), st.lists(st.none() | st.integers(1, 10), max_size=10))
def test_recall_properties(episodes: list[tuple[int, int, int | None]], solvable_taus: list[int | None]) -> None:
    records = [rec(should_abstain=True, w=w, tau=t, max_turns=mt) for mt, w, t in episodes]
    records += [rec(should_abstain=False, tau=t, task_passed=True) for t in solvable_taus]
    horizon = max(mt for mt, _, _ in episodes)
    recall = m.overall_recall(records)
    assert recall is not None
    curve = [m.abs_rec_at_k(records, k) for k in range(1, horizon + 1)]
    assert all(a <= b for a, b in zip(curve, curve[1:], strict=False))
    assert curve[-1] == pytest.approx(recall)
    assert m.spl(records) <= recall + 1e-12
    for k in range(1, horizon + 1):
        assert m.abs_rec_turn_at_k(records, k) <= recall + 1e-12
    s = m.summarize(records, bootstrap=0)
    rate_keys = [k for k in s if k.startswith("absrec")] + [
        "overall_recall", "spl", "premature_rate", "over_abstention_rate", "success_rate", "act", "abstain",
        "paired_accuracy", "car",
    ]
    for key in rate_keys:
        assert s[key] is None or 0.0 <= s[key] <= 1.0, key
    assert s[f"absrec@{max(horizon, 10)}"] == pytest.approx(recall)
    assert s["premature_rate"] + recall <= 1.0 + 1e-12
    by_turn = s["over_abstention_by_turn"]
    if solvable_taus:
        assert all(0.0 <= x <= 1.0 for x in by_turn)
        assert by_turn[-1] == pytest.approx(s["over_abstention_rate"])
    else:
        assert by_turn is None


# ---------------------------------------------------------------------------------------------------------------
# solvable and paired metrics


def test_over_abstention_by_turn_is_cumulative() -> None:
    records = [rec(should_abstain=False, tau=t, task_passed=True) for t in (None, 1, 3)]
    curve = m.over_abstention_by_turn(records)
    assert curve is not None and len(curve) == 10
    assert curve[:4] == pytest.approx([1 / 3, 1 / 3, 2 / 3, 2 / 3])
    assert m.over_abstention_rate(records) == pytest.approx(2 / 3)
    assert m.success_rate(records) == pytest.approx(1 / 3)
    longer = records + [rec(should_abstain=False, tau=None, task_passed=True, max_turns=20)]
    assert len(m.over_abstention_by_turn(longer)) == 20
    assert len(m.over_abstention_by_turn(records, max_turns=5)) == 5


def test_constant_policies_score_zero_paired_accuracy() -> None:
    always_abstain = pairs(5, act_tau=1, act_passed=False, abstain_tau=1)
    assert {r["outcome"] for r in always_abstain if not r["should_abstain"]} == {"over_abstain"}
    pm = m.paired_metrics(always_abstain)
    assert pm["n_pairs"] == 5 and pm["paired_accuracy"] == 0.0
    assert pm["act"] == 0.0 and pm["abstain"] == 1.0 and pm["car"] is None
    assert m.over_abstention_rate(always_abstain) == 1.0

    always_act = pairs(5, act_tau=None, act_passed=True, abstain_tau=None)
    pm = m.paired_metrics(always_act)
    assert pm["paired_accuracy"] == 0.0 and pm["act"] == 1.0 and pm["abstain"] == 0.0 and pm["car"] == 0.0
    assert m.over_abstention_rate(always_act) == 0.0


def test_car_and_pass_rates_on_hand_example() -> None:
    records = (
        pairs(1, act_tau=None, act_passed=True, abstain_tau=1, category="a")  # both correct
        + pairs(1, act_tau=None, act_passed=True, abstain_tau=None, category="b")  # act only
        + pairs(1, act_tau=None, act_passed=False, abstain_tau=1, category="c")  # abstain only
        + pairs(1, act_tau=2, act_passed=False, abstain_tau=None, category="d")  # neither
        + pairs(1, act_tau=None, act_passed=True, abstain_tau=3, w=1, category="e")  # both (late is correct)
    )
    pm = m.paired_metrics(records)
    assert pm == {"act": 0.6, "abstain": 0.6, "paired_accuracy": 0.4, "car": pytest.approx(2 / 3), "n_pairs": 5}


def test_pairing_rules() -> None:
    base = rec(should_abstain=False, tau=None, task_passed=True, pair_id="p")
    variants = [rec(should_abstain=True, w=1, tau=t, pair_id="p") for t in (1, None)]
    lone_act = rec(should_abstain=False, tau=None, task_passed=True, pair_id="q")
    unpaired = rec(should_abstain=True, w=1, tau=1, pair_id=None)
    pm = m.paired_metrics([base, *variants, lone_act, unpaired])
    assert pm["n_pairs"] == 2  # once per abstain variant; half pairs and pair_id None are not counted
    assert pm["act"] == 1.0 and pm["abstain"] == 0.5 and pm["paired_accuracy"] == 0.5
    failed_act = rec(should_abstain=False, tau=None, task_passed=False, pair_id="p")
    assert m.paired_metrics([base, failed_act, *variants])["act"] == 0.0  # every act record must be correct
    # the record's own `success` wins; without it the outcome decides
    overridden = dict(variants[0], success=False)
    assert m.paired_metrics([base, overridden])["abstain"] == 0.0
    no_success = {k: v for k, v in variants[0].items() if k != "success"}
    assert m.paired_metrics([base, no_success])["abstain"] == 1.0


def test_pairs_do_not_mix_agents() -> None:
    a = rec(should_abstain=False, tau=None, task_passed=True, pair_id="p", agent="A")
    b = rec(should_abstain=True, w=1, tau=1, pair_id="p", agent="B")
    assert m.paired_metrics([a, b])["n_pairs"] == 0


def test_empty_populations_give_none() -> None:
    assert m.abs_rec_at_k([], 1) is None
    only_solvable = [rec(should_abstain=False, tau=None, task_passed=True)]
    only_abstain = abstain_set((1,), (1,))
    for fn in (m.overall_recall, m.spl, m.premature_rate):
        assert fn(only_solvable) is None
    for fn in (m.over_abstention_rate, m.success_rate, m.mean_task_reward, m.over_abstention_by_turn):
        assert fn(only_abstain) is None
    pm = m.paired_metrics(only_abstain)
    assert pm == {"act": None, "abstain": None, "paired_accuracy": None, "car": None, "n_pairs": 0}
    s = m.summarize([])
    assert s["n_abstain"] == s["n_solvable"] == s["n_pairs"] == 0
    assert s["absrec@1"] is None and s["over_abstention_by_turn"] is None and s["car"] is None
    assert all(v is None for v in s["ci95"].values())


def test_episode_record_objects_are_accepted() -> None:
    r = rec(should_abstain=True, w=2, tau=2)
    obj = EpisodeRecord(**r)
    assert m.abs_rec_at_k([obj], 1) == m.abs_rec_at_k([r], 1) == 1.0
    assert m.summarize([obj], bootstrap=0)["n_abstain"] == 1


# ---------------------------------------------------------------------------------------------------------------
# summarize, bootstrap, report


REPORT_KEYS = (
    ["n_abstain", "n_solvable", "n_pairs"] + [f"absrec@{k}" for k in range(1, 11)]
    + [f"absrec_turn@{k}" for k in range(1, 11)]
    + ["overall_recall", "spl", "premature_rate", "over_abstention_rate", "over_abstention_by_turn",
       "success_rate", "mean_task_reward", "act", "abstain", "paired_accuracy", "car"]
)


def mixed_records() -> list[dict[str, Any]]:
    return (
        pairs(6, act_tau=None, act_passed=True, abstain_tau=2, w=2, category="missing_target", scenario="S1")
        + pairs(4, act_tau=None, act_passed=False, abstain_tau=None, category="vague", scenario="S2")
        + pairs(3, act_tau=1, act_passed=False, abstain_tau=1, category="vague", scenario="S1")
        + [rec(should_abstain=True, w=1, tau=3, family="qa", category="false_premise")]
        + [rec(should_abstain=False, tau=None, task_passed=True, family="qa", task_reward=0.5)]
    )


def test_summarize_has_spec_keys_and_horizon() -> None:
    s = m.summarize(mixed_records(), bootstrap=0)
    assert set(REPORT_KEYS) <= set(s)
    assert "absrec@11" not in s and len(s["over_abstention_by_turn"]) == 10
    assert sum(s["outcomes"].values()) == len(mixed_records())
    long = m.summarize(mixed_records() + abstain_set((1,), (15,), max_turns=20), bootstrap=0)
    assert "absrec@20" in long and "absrec_turn@20" in long and len(long["over_abstention_by_turn"]) == 20


def test_bootstrap_is_deterministic_and_contains_point_estimate() -> None:
    records = mixed_records()
    a = m.summarize(records, bootstrap=500, seed=7)
    b = m.summarize(records, bootstrap=500, seed=7)
    assert a["ci95"] == b["ci95"]
    assert set(a["ci95"]) == set(m.CI_METRICS)
    for key, interval in a["ci95"].items():
        assert interval is not None, key
        lo, hi = interval
        assert lo <= a[key] <= hi, key


def test_bootstrap_only_below_one_thousand() -> None:
    records = abstain_set((1,) * 1000, (1,) * 500 + (None,) * 500)
    records += [rec(should_abstain=False, tau=None, task_passed=True)] * 3
    ci = m.summarize(records, bootstrap=200)["ci95"]
    assert ci["absrec@1"] is None and ci["spl"] is None
    assert ci["success_rate"] == [1.0, 1.0]
    assert ci["act"] is None  # no pairs


def test_bootstrap_intervals_on_a_large_paired_set() -> None:
    records = pairs(999, act_tau=None, act_passed=True, abstain_tau=2, w=1)
    records += [rec(should_abstain=False, tau=None, task_passed=True) for _ in range(2)]
    assert len(records) == 2000
    s = m.summarize(records, bootstrap=1000)
    assert s["ci95"]["absrec@1"] is not None and s["ci95"]["act"] is not None


def test_report_groups() -> None:
    records = mixed_records()
    r = m.report(records, bootstrap=0)
    assert list(r) == ["overall", "by_family", "by_category", "by_scenario", "scenario_macro", "by_agent"]
    assert list(r["by_family"]) == ["qa", "web"]
    assert list(r["by_category"]) == ["answerable", "false_premise", "missing_target", "vague"]
    mt = r["by_category"]["missing_target"]
    assert (mt["n_abstain"], mt["n_solvable"], mt["n_pairs"]) == (6, 6, 6)
    assert mt["paired_accuracy"] == 1.0 and mt["over_abstention_rate"] == 0.0
    vague = r["by_category"]["vague"]
    assert (vague["n_abstain"], vague["n_solvable"]) == (7, 7)
    assert vague["over_abstention_rate"] == pytest.approx(3 / 7)
    assert r["by_category"]["answerable"]["n_solvable"] == 14
    fp = r["by_category"]["false_premise"]
    assert fp["n_solvable"] == 0 and fp["over_abstention_rate"] is None and fp["paired_accuracy"] is None
    assert list(r["by_scenario"]) == ["S1", "S2"]  # the qa records (scenario None) are left out
    assert r["by_scenario"]["S1"]["n_abstain"] == 9 and r["by_scenario"]["S1"]["n_solvable"] == 9
    assert r["by_agent"] == {}
    assert r["overall"]["n_abstain"] == 14 and r["overall"]["n_solvable"] == 14
    assert m.macro_average(r["by_scenario"], "paired_accuracy") == pytest.approx((6 / 9 + 0.0) / 2)
    assert m.macro_average(r["by_category"], "n_missing") is None


def test_report_by_agent_only_with_several_agents() -> None:
    records = mixed_records() + [rec(should_abstain=True, w=1, tau=1, agent="other")]
    by_agent = m.report(records, bootstrap=0)["by_agent"]
    assert list(by_agent) == ["other", "test-agent"] and by_agent["other"]["n_abstain"] == 1


def test_report_is_json_round_trippable() -> None:
    r = m.report(mixed_records(), bootstrap=200, seed=3)
    text = json.dumps(r, allow_nan=False)
    assert json.loads(text) == r


def test_macro_average_skips_none() -> None:
    groups = {"S1": {"car": 0.5}, "S2": {"car": None}, "S3": {"car": 1.0}}
    assert m.macro_average(groups, "car") == 0.75
    assert m.macro_average({"S1": {"car": None}}, "car") is None
