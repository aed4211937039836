"""AbstainWebShop-v1's wording: the shipped rewrites are written, varied and fair, and the originals vary as much.

A 4-word phrase is counted once per request, after the goal's own words (product type, attribute phrases, option
values) are cut out: those are the catalogue's, not the writer's. No phrase may occur in more than 3% of a
category's requests. Lengths are compared per category, rewrite against the originals it was written from.
"""

from __future__ import annotations

import collections
import re

import numpy as np
import pytest

from agentabstain_gym.envs.web import rewrites as rewrites_module
from agentabstain_gym.envs.web.dataset import SOLVABLE, build_dataset, make_tasks
from agentabstain_gym.envs.web.goals import make_goals
from agentabstain_gym.envs.web.rewrites import REWRITE_KINDS, authored_rewrites, slot_key
from agentabstain_gym.envs.web.vocab import load_data

GIVEAWAY = ("ambiguous", "impossible", "abstain", "contradict", "unclear", "vague", "subjective", "premise",
            "underspecified", "infeasible", "does not exist", "doesn't exist", "cannot", "can't", "trick",
            "not sure what", "unspecified", "conflicting", "paradox")
_TOKEN = re.compile(r"[a-z0-9$']+(?:\.[0-9]+)?")
MAX_PHRASE_SHARE = 0.03


@pytest.fixture(scope="module")
def data():
    return build_dataset()


def four_grams(text: str, goal: dict) -> set[tuple[str, ...]]:
    """The request's 4-word phrases that do not run through the goal's own words."""
    text = text.lower()
    own = [goal["product_type"], *goal["attributes"], *(v for _, v in goal["options"])]
    for phrase in sorted(own, key=len, reverse=True):
        text = text.replace(phrase.lower(), " | ")
    grams: set[tuple[str, ...]] = set()
    for chunk in text.split("|"):
        tokens = _TOKEN.findall(chunk)
        grams |= {tuple(tokens[i:i + 4]) for i in range(len(tokens) - 3)}
    return grams


def most_shared_phrase(tasks: list) -> tuple[tuple[str, ...], int]:
    counts = collections.Counter(g for t in tasks for g in four_grams(t.instruction, t.payload["goal"]))
    return counts.most_common(1)[0] if counts else ((), 0)


def test_four_gram_counting_sees_a_shared_phrase_and_skips_the_goals_words() -> None:
    goal = {"product_type": "face cream", "attributes": ["fragrance free"], "options": [["size", "1.7 oz"]]}
    assert ("i", "am", "looking", "for") in four_grams("I am looking for a face cream", goal)
    assert not four_grams("a face cream, fragrance free, 1.7 oz", goal)  # only the goal's words: nothing counted


def test_default_rewrites_are_the_authored_ones(data) -> None:
    """The shipped set's 249 request-based rewrites are the written texts of data/web/rewrites_authored.json."""
    written = authored_rewrites(0, len(data.catalogue), 500)
    rewrites = [t for t in data.tasks if t.category in REWRITE_KINDS]
    assert len(rewrites) == 249
    missing = [t.task_id for t in rewrites if t.payload["form"] != "authored"]
    assert not missing, f"{len(missing)} of 249 default rewrites have no authored text"
    for t in rewrites:
        assert written[slot_key(data.goal(t), t.category)]["instruction"] == t.instruction


def test_the_authored_file_holds_only_default_slots(data) -> None:
    """A key that names no slot of the default set (a stale text, a typo) or the wrong category is an error."""
    slots = {slot_key(data.goal(t), t.category): t.category for t in data.tasks if t.category in REWRITE_KINDS}
    file = load_data("rewrites_authored")
    assert file["dataset"] == {"seed": 0, "n_products": len(data.catalogue), "n_goals": 500}
    for key, entry in file["rewrites"].items():
        assert slots.get(key) == entry["category"], key
        assert isinstance(entry["instruction"], str) and entry["instruction"].strip() == entry["instruction"] != ""


@pytest.mark.parametrize("category", [SOLVABLE, *REWRITE_KINDS])
def test_no_four_word_phrase_is_common_in_a_category(data, category: str) -> None:
    tasks = [t for t in data.tasks if t.category == category]
    phrase, count = most_shared_phrase(tasks)
    limit = int(MAX_PHRASE_SHARE * len(tasks))
    print(f"\n{category}: most shared 4-word phrase {' '.join(phrase)!r} in {count} of {len(tasks)} (limit {limit})")
    assert count <= limit, (category, phrase, count)


@pytest.mark.parametrize("category", REWRITE_KINDS)
def test_rewrite_lengths_match_their_originals(data, category: str) -> None:
    """Mean and quartiles of the length in words and in characters within 15% of the originals'."""
    originals = {t.pair_id: t.instruction for t in data.tasks if t.category == SOLVABLE}
    mine = [t.instruction for t in data.tasks if t.category == category]
    theirs = [originals[t.pair_id] for t in data.tasks if t.category == category]
    for name, size in (("words", lambda s: len(s.split())), ("chars", len)):
        a, b = np.array([size(s) for s in mine], float), np.array([size(s) for s in theirs], float)
        stats_a = [a.mean(), *np.percentile(a, [25, 50, 75])]
        stats_b = [b.mean(), *np.percentile(b, [25, 50, 75])]
        for label, x, y in zip(("mean", "q1", "median", "q3"), stats_a, stats_b, strict=True):
            assert abs(x - y) <= 0.15 * y, (category, name, label, round(x, 1), round(y, 1))


def test_rewrites_give_nothing_away(data) -> None:
    originals = {t.pair_id: t.instruction for t in data.tasks if t.category == SOLVABLE}
    for t in (t for t in data.tasks if t.category in REWRITE_KINDS):
        assert t.instruction != originals[t.pair_id]
        lowered = t.instruction.lower()
        assert not [w for w in GIVEAWAY if re.search(rf"\b{re.escape(w)}\b", lowered)], t.instruction


def test_originals_state_the_goal_word_for_word(data) -> None:
    """However a request is phrased, its attributes, option values, type and cap are in it as the goal has them
    (the oracle and the matching rely on it)."""
    for t in (t for t in data.tasks if t.category == SOLVABLE):
        goal, text = t.payload["goal"], t.instruction
        cap = goal["price_upper"]
        assert goal["product_type"] in text and all(a in text for a in goal["attributes"]), text
        assert all(v in text for _, v in goal["options"]), text
        assert (f"{cap:.0f}" if cap == int(cap) else f"{cap:.2f}") in text, text
    openings = collections.Counter(" ".join(t.instruction.split()[:2]) for t in data.tasks if t.category == SOLVABLE)
    assert len(openings) >= 60 and sum(t.instruction.endswith("?") or "?" in t.instruction
                                       for t in data.tasks if t.category == SOLVABLE) >= 50


def test_an_authored_text_changes_its_slot_only() -> None:
    """Slots are keyed by goal and kind, and each generated slot draws from its own stream: giving one slot a
    written text leaves every other task (id, split, text) as it was; other seeds use the generator."""
    catalogue = build_dataset(3, 400, 60).catalogue
    goals = make_goals(catalogue, 3, 60)
    plain = make_tasks(catalogue, goals, 3)
    target = next(t for t in plain if t.category == "false_premise")
    key = slot_key(next(g.goal for g in goals if g.goal.product_type == target.payload["goal"]["product_type"]
                        and list(g.goal.attributes) == target.payload["goal"]["attributes"]), "false_premise")
    written = {key: {"category": "false_premise", "instruction": "a written request"}}
    mixed = make_tasks(catalogue, goals, 3, written=written)
    changed = [(a, b) for a, b in zip(plain, mixed, strict=True) if a != b]
    assert len(changed) == 1 and changed[0][1].instruction == "a written request"
    assert changed[0][1].payload["form"] == "authored" and changed[0][0].task_id == changed[0][1].task_id
    with pytest.raises(ValueError, match="a subjective slot holds a 'false_premise' text"):
        rewrites_module.authored(written[key], "subjective")
    assert authored_rewrites(3, 400, 60) == {}
