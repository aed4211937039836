"""AbstainWebShop-v0's data: catalogue, goals, rewrites, Missing Target views, the WebShop-file loader."""

from __future__ import annotations

import collections
import json
import re
from pathlib import Path

import numpy as np
import pytest

from agentabstain_gym.envs.web.catalogue import Catalogue, GeneratedCatalogue
from agentabstain_gym.envs.web.dataset import MISSING_TARGET, SOLVABLE, build_dataset
from agentabstain_gym.envs.web.loader import load_webshop
from agentabstain_gym.envs.web.matching import Goal
from agentabstain_gym.envs.web.vocab import product_types, vocabulary_problems

REWRITES = ("subjective", "underspecified_intent", "false_premise")
GIVEAWAY = ("ambiguous", "impossible", "abstain", "contradict", "unclear", "vague", "subjective", "premise",
            "underspecified", "infeasible", "does not exist", "doesn't exist", "cannot", "can't", "trick")


@pytest.fixture(scope="module")
def data():
    return build_dataset()


def test_vocabulary_keeps_attributes_out_of_generic_text() -> None:
    assert vocabulary_problems() == []
    assert {t.category for t in product_types()} == {"beauty", "grocery", "fashion", "home", "electronics"}


def test_default_set_mirrors_the_paper(data) -> None:
    counts = collections.Counter(t.category for t in data.tasks)
    assert len(data.tasks) == 1000
    assert counts == {SOLVABLE: 500, "subjective": 83, "underspecified_intent": 83, "false_premise": 83,
                      MISSING_TARGET: 251}
    assert all(t.w == 1 for t in data.tasks if t.category in REWRITES)
    assert all(t.w == 2 for t in data.tasks if t.category == MISSING_TARGET)
    pairs = collections.defaultdict(list)
    for t in data.tasks:
        pairs[t.pair_id].append(t)
    assert len(pairs) == 500
    for sides in pairs.values():
        assert sorted(t.should_abstain for t in sides) == [False, True]
        assert len({t.split for t in sides}) == 1
        assert len({t.payload["source_asin"] for t in sides}) == 1


def test_splits_are_disjoint_by_source_goal(data) -> None:
    by_split = collections.defaultdict(set)
    for t in data.tasks:
        by_split[t.split].add(json.dumps(t.payload["goal"], sort_keys=True))
    assert set(by_split) == {"train", "val", "test"}
    assert not (by_split["train"] & by_split["val"]) and not (by_split["train"] & by_split["test"])
    assert not (by_split["val"] & by_split["test"])
    assert collections.Counter(t.split for t in data.tasks) == {"train": 600, "val": 200, "test": 200}


def test_task_ids_are_opaque(data) -> None:
    assert all(re.fullmatch(r"ws-[0-9a-f]{10}", t.task_id) for t in data.tasks)


def test_same_seed_same_data_other_seed_other_data() -> None:
    first = build_dataset(3, 400, 60)
    build_dataset.cache_clear()
    again = build_dataset(3, 400, 60)
    assert first is not again and first.fingerprint() == again.fingerprint()
    assert build_dataset(4, 400, 60).fingerprint() != first.fingerprint()
    a, b = GeneratedCatalogue(9, 300), GeneratedCatalogue(9, 300)
    assert [a.product(i) for i in range(300)] == [b.product(i) for i in range(300)]


def test_asins_are_unique_and_invert() -> None:
    catalogue = GeneratedCatalogue(0, 100_000)
    picks = np.random.default_rng(0).integers(100_000, size=2000)
    asins = {catalogue.asin(int(i)) for i in picks}
    assert len(asins) == len(set(int(i) for i in picks))
    assert all(catalogue.index_of(catalogue.asin(int(i))) == int(i) for i in picks)
    assert catalogue.index_of("B0ZZZZZZZZ") is None and catalogue.index_of("not an asin") is None


def test_mask_reasoning_equals_page_by_page_reward(data) -> None:
    """The fast Missing Target filter finds exactly the products whose pages earn 1.0."""
    catalogue = data.catalogue
    rng = np.random.default_rng(5)
    goals = [data.goal(t) for t in data.tasks if not t.should_abstain][:150]
    for ptype in product_types():  # looser and stricter goals than the task set has
        for _ in range(4):
            attrs = tuple(ptype.attributes[int(j)] for j in rng.choice(len(ptype.attributes), 2, replace=False))
            options = tuple((g, vals[int(rng.integers(len(vals)))]) for g, vals in zip(ptype.groups, ptype.values, strict=True))
            goals.append(Goal(ptype.name, ptype.category, attrs, options, float(rng.uniform(10, 150))))
    for goal in goals:
        fast = catalogue.satisfying(goal).tolist()
        slow = Catalogue.satisfying(catalogue, goal).tolist()
        assert fast == slow, goal


def test_every_missing_target_view_hides_every_product_that_earns_one(data) -> None:
    catalogue = data.catalogue
    products = [catalogue.product(i) for i in range(len(catalogue))]
    tasks = [t for t in data.tasks if t.category == MISSING_TARGET]
    assert len(tasks) == 251
    for task in tasks:
        goal, hidden = data.goal(task), data.hidden(task)
        assert catalogue.index_of(task.payload["source_asin"]) in hidden
        visible_best = max(p.best_reward(goal)[0] for p in products if p.index not in hidden)
        assert visible_best < 1.0, task.task_id


def test_request_based_rewrites_read_differently_and_give_nothing_away(data) -> None:
    solvable = {t.pair_id: t for t in data.tasks if not t.should_abstain}
    rewrites = [t for t in data.tasks if t.category in REWRITES]
    assert len(rewrites) == 249
    for t in rewrites:
        assert t.instruction != solvable[t.pair_id].instruction
        assert not any(word in t.instruction.lower() for word in GIVEAWAY), t.instruction
    for kind in REWRITES:  # several sentence shapes per kind, and no one shape dominates
        openings = collections.Counter(" ".join(t.instruction.split()[:2]) for t in rewrites if t.category == kind)
        assert len(openings) >= 5 and max(openings.values()) <= 30, (kind, openings)
        assert len({t.instruction for t in rewrites if t.category == kind}) == 83
    forms = collections.Counter(t.payload["form"] for t in rewrites if t.category == "false_premise")
    assert set(forms) == {"clash", "foreign", "price"} and min(forms.values()) >= 10
    assert all(t.instruction == solvable[t.pair_id].instruction for t in data.tasks if t.category == MISSING_TARGET)


def _surface(text: str) -> list[float]:
    return [len(text), len(text.split()), text.count(","), text.count("?"), text.count(";"),
            len(re.findall(r"\d", text)), text.count("."), text.count("'"), text.count("("), text.count("-")]


def test_rewrites_cannot_be_told_from_goals_by_length_or_punctuation(data) -> None:
    """A logistic regression and the best single-feature threshold, trained on the train split's pairs (goal vs
    its rewrite), stay near chance on the other splits."""
    solvable = {t.pair_id: t for t in data.tasks if not t.should_abstain}
    rows = [(_surface(solvable[t.pair_id].instruction), 0, t.split) for t in data.tasks if t.category in REWRITES]
    rows += [(_surface(t.instruction), 1, t.split) for t in data.tasks if t.category in REWRITES]
    x = np.array([r[0] for r in rows], dtype=float)
    y = np.array([r[1] for r in rows])
    train = np.array([r[2] == "train" for r in rows])
    z = (x - x[train].mean(0)) / (x[train].std(0) + 1e-9)
    w, b = np.zeros(z.shape[1]), 0.0
    for _ in range(2000):
        p = 1 / (1 + np.exp(-(z[train] @ w + b)))
        w -= 0.1 * z[train].T @ (p - y[train]) / train.sum()
        b -= 0.1 * float(np.mean(p - y[train]))
    logreg = float(np.mean((z[~train] @ w + b > 0) == y[~train]))
    best_stump = 0.0
    for j in range(x.shape[1]):
        for cut in np.unique(x[train, j]):
            for sign in (1, -1):
                acc_train = np.mean((sign * (x[train, j] - cut) > 0) == y[train])
                if acc_train > best_stump:
                    best_stump, rule = acc_train, (j, cut, sign)
    j, cut, sign = rule
    stump = float(np.mean((sign * (x[~train, j] - cut) > 0) == y[~train]))
    print(f"\nlength/punctuation classifiers, held-out accuracy: logistic {logreg:.3f}, threshold {stump:.3f}")
    assert logreg <= 0.62 and stump <= 0.62


# ----- the WebShop-file loader ---------------------------------------------------------------------------------------

def _webshop_files(tmp_path: Path) -> tuple[Path, Path, Path]:
    products = [
        {"asin": "B000000001", "name": "Citrus Bloom Deodorant for Women, Aluminum Free", "full_description":
         "A gentle deodorant.", "small_description": ["ALUMINUM FREE formula", "Long lasting freshness"],
         "pricing": "$10.99", "images": [], "category": "beauty", "query": "deodorant",
         "product_category": "Beauty & Personal Care › Personal Care › Deodorants", "average_rating": 4.5,
         "customization_options": {"scent": [{"value": "citrus", "image": None}, {"value": "lavender",
                                                                                  "image": None}],
                                   "size": [{"value": "2.6 ounce (pack of 1)", "image": None},
                                            {"value": "2.6 ounce (pack of 3)", "image": None}]}},
        {"asin": "B000000002", "name": "Lavender Deodorant Stick", "full_description": "Classic.",
         "small_description": "Everyday protection", "pricing": "$6.49$9.99", "images": [], "category": "beauty",
         "query": "deodorant", "product_category": "Beauty & Personal Care › Personal Care › Deodorants",
         "average_rating": "N.A.", "customization_options": ""},
        {"asin": "B000000003", "name": "Dark Roast Ground Coffee, Fair Trade", "full_description": "Bold.",
         "small_description": ["FAIR TRADE beans"], "pricing": "$12.00", "images": [], "category": "grocery",
         "query": "coffee", "product_category": "Grocery › Coffee", "average_rating": 4.0,
         "customization_options": {"size": [{"value": "12 ounce", "image": None}]}},
    ]
    attributes = {"B000000001": {"attributes": ["aluminum free", "long lasting"]},
                  "B000000002": {"attributes": ["long lasting"]}, "B000000003": {"attributes": ["fair trade"]}}
    goals = {"B000000001": [{"instruction": "i want an aluminum free deodorant in citrus scent, 2.6 ounce (pack of "
                             "3)", "instruction_attributes": ["aluminum free"],
                             "instruction_options": ["citrus", "2.6 ounce (pack of 3)"]}],
             "B000000002": [{"instruction": "i need a long lasting deodorant", "instruction_attributes":
                             ["long lasting"], "instruction_options": []}],
             "B000000003": [{"instruction": "fair trade dark roast coffee, 12 ounce", "instruction_attributes":
                             ["fair trade"], "instruction_options": {"size": "12 ounce"}}]}
    paths = tmp_path / "items_shuffle_small.json", tmp_path / "items_ins_v2_small.json", tmp_path / "human.json"
    for path, content in zip(paths, (products, attributes, goals), strict=True):
        path.write_text(json.dumps(content))
    return paths


def test_loader_reads_webshop_files(tmp_path: Path) -> None:
    products, attributes, goals = _webshop_files(tmp_path)
    data = load_webshop(products, attributes, goals)
    catalogue = data.catalogue
    assert len(catalogue) == 3 and len(data.tasks) == 6
    first = catalogue.product(catalogue.index_of("b000000001"))
    assert first.options["scent"] == ("citrus", "lavender") and first.attributes == ("aluminum free", "long lasting")
    assert catalogue.product(1).price == 6.49 and catalogue.product(1).rating is None
    solvable = [t for t in data.tasks if not t.should_abstain]
    assert all("price lower than" in t.instruction for t in solvable)
    for task in solvable:
        goal = data.goal(task)
        source = catalogue.product(catalogue.index_of(task.payload["source_asin"]))
        assert source.best_reward(goal)[0] == 1.0
    assert load_webshop(products, attributes, goals).fingerprint() == data.fingerprint()


@pytest.mark.parametrize("field, value, message", [
    ("pricing", "free", r"items_shuffle_small.json: record 1: field 'pricing'"),
    ("name", 7, r"items_shuffle_small.json: record 1: field 'name'"),
    ("customization_options", [1], r"record 1: field 'customization_options'"),
    ("small_description", {"a": 1}, r"record 1: field 'small_description'"),
])
def test_loader_errors_name_file_record_and_field(tmp_path: Path, field: str, value: object, message: str) -> None:
    products, attributes, goals = _webshop_files(tmp_path)
    records = json.loads(products.read_text())
    records[1][field] = value
    products.write_text(json.dumps(records))
    with pytest.raises(ValueError, match=message):
        load_webshop(products, attributes, goals)


def test_loader_errors_on_attribute_and_goal_files(tmp_path: Path) -> None:
    products, attributes, goals = _webshop_files(tmp_path)
    attributes.write_text(json.dumps({"B000000001": {"attributes": "aluminum free"}}))
    with pytest.raises(ValueError, match=r"items_ins_v2_small.json: record 'B000000001': field 'attributes'"):
        load_webshop(products, attributes, goals)
    attributes.write_text(json.dumps({}))
    goals.write_text(json.dumps({"B000000009": [{"instruction": "x"}]}))
    with pytest.raises(ValueError, match=r"human.json: record 'B000000009' goal 0: asin"):
        load_webshop(products, attributes, goals)
    goals.write_text("[not json")
    with pytest.raises(ValueError, match=r"human.json: not valid JSON"):
        load_webshop(products, attributes, goals)
