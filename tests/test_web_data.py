"""AbstainWebShop-v1's data: catalogue, goals, rewrites, Missing Target views, the WebShop-file loader."""

from __future__ import annotations

import collections
import copy
import json
import re
from pathlib import Path

import numpy as np
import pytest

from agentabstain_gym.envs.web import vocab
from agentabstain_gym.envs.web.catalogue import Catalogue, GeneratedCatalogue
from agentabstain_gym.envs.web.dataset import MISSING_TARGET, SOLVABLE, WebDataset, build_dataset, make_tasks
from agentabstain_gym.envs.web.goals import make_goals
from agentabstain_gym.envs.web.loader import load_webshop
from agentabstain_gym.envs.web.matching import Goal
from agentabstain_gym.envs.web.vocab import (
    CATEGORIES,
    ProductType,
    catalogue_data,
    catalogue_problems,
    load_category,
    product_types,
    vocabulary_problems,
)

REWRITES = ("subjective", "underspecified_intent", "false_premise")
GIVEAWAY = ("ambiguous", "impossible", "abstain", "contradict", "unclear", "vague", "subjective", "premise",
            "underspecified", "infeasible", "does not exist", "doesn't exist", "cannot", "can't", "trick")


@pytest.fixture(scope="module")
def data():
    return build_dataset()


def test_vocabulary_keeps_attributes_out_of_generic_text() -> None:
    assert vocabulary_problems() == []
    assert {t.category for t in product_types()} == {"beauty", "grocery", "fashion", "home", "electronics"}


def test_the_store_is_broad_and_read_from_one_file_per_category() -> None:
    """At least 400 types (80 a category), numbered in category order, then file order, names unique."""
    types = product_types()
    assert len(types) >= 400 and len({t.name for t in types}) == len(types)
    assert [t.type_id for t in types] == list(range(len(types)))
    expected = [(c, t["name"]) for c in CATEGORIES for t in load_category(c)["types"]]
    assert [(t.category, t.name) for t in types] == expected
    per_category = collections.Counter(t.category for t in types)
    assert min(per_category.values()) >= 80, per_category
    assert not (Path(vocab.__file__).parents[2] / "data" / "web" / "catalogue.json").exists()


def _bad(data: dict, category: str, k: int, **change: object) -> dict:
    data = copy.deepcopy(data)
    data[category]["types"][k].update(change)
    return data


@pytest.mark.parametrize("change, message", [
    (lambda d: _bad(d, "beauty", 0, name="Face Cream"), "name must be a lower-case phrase"),
    (lambda d: _bad(d, "home", 1, name=d["beauty"]["types"][0]["name"]), "name also in beauty"),
    (lambda d: _bad(d, "grocery", 0, nouns=["A", "A", "B"]), "exactly 3 distinct title nouns"),
    (lambda d: _bad(d, "fashion", 0, price=[30, 10]), "price [lo, hi]"),
    (lambda d: _bad(d, "electronics", 0, attributes=["oil free", "oil free formula", *"abcdefg"]),
     "also matches 'oil free formula'"),
    (lambda d: _bad(d, "electronics", 1, options={"a": ["x", "y"], "b": ["y", "z"]}), "option 'y' in 'a' and 'b'"),
    (lambda d: _bad(d, "home", 0, options={"a": ["x"]}), "needs 2-12 distinct values"),
    (lambda d: _bad(d, "home", 2, options={"a": ["x", "y"], "b": ["u", "v"], "c": ["p", "q"]}), "1 or 2 option groups"),
    (lambda d: _bad(d, "beauty", 1, attributes=[*d["beauty"]["types"][1]["attributes"][:8], "satisfaction promise"]),
     "occurs in generic text"),
    (lambda d: _bad(d, "beauty", 2, extra=1), "keys"),
])
def test_catalogue_problems_enforce_the_authoring_rules(change, message: str) -> None:
    """The checks authors run are the package's: each broken rule is reported, naming the type."""
    problems = catalogue_problems(change(catalogue_data()))
    assert any(message in p for p in problems), problems


def _wide_types(n: int) -> tuple[ProductType, ...]:
    """More types, attributes, groups and values than the shipped data has, to hold the masks to their limits."""
    rng = np.random.default_rng(1)
    types = []
    for i in range(n):
        n_attr = int(rng.integers(20, vocab.MAX_ATTRIBUTES + 1))
        groups = {f"group{g}": [f"v{i}x{g}x{j}" for j in range(int(rng.integers(2, 40)))]
                  for g in range(int(rng.integers(1, 5)))}
        spec = {"name": f"kind {i}", "path": ["Things", f"Kind {i}"], "nouns": [f"Kind {i} Thing"],
                "price": [5, 200], "attributes": [f"trait{i}q{a}" for a in range(n_attr)], "options": groups}
        types.append(vocab.make_type(i, CATEGORIES[i % 5], CATEGORIES[i % 5].title(), spec))
    return tuple(types)


def test_generated_catalogue_has_no_limit_at_hundreds_of_wide_types() -> None:
    """Type ids past 255, 64 attributes, 4 option groups of up to 39 values: every product's page shows what its
    masks say, and the fast Missing Target filter agrees with scoring pages one by one."""
    types = _wide_types(600)
    catalogue = GeneratedCatalogue(2, 6000, types=types)
    assert int(catalogue.type_id.max()) > 255
    rng = np.random.default_rng(3)
    for i in rng.integers(6000, size=300):
        product, ptype = catalogue.product(int(i)), catalogue.ptype(int(i))
        mask = int(catalogue.attr_mask[i])
        assert {a for k, a in enumerate(ptype.attributes) if mask >> k & 1} == set(product.attributes)
        assert 3 <= len(product.attributes) <= 5 and set(product.options) == set(ptype.groups)
        for g, group in enumerate(ptype.groups):
            assert product.options[group] and set(product.options[group]) <= set(ptype.values[g])
    for ptype in types[250:330]:
        offered = ptype.values
        goal = Goal(ptype.name, ptype.category, (ptype.attributes[-1],),
                    tuple((g, vals[-1]) for g, vals in zip(ptype.groups, offered, strict=True)), 150.0)
        assert catalogue.satisfying(goal).tolist() == Catalogue.satisfying(catalogue, goal).tolist()
    goals = make_goals(catalogue, 4, 300)  # and a task set over them, as the default set is drawn
    data = WebDataset(catalogue, make_tasks(catalogue, goals, 4))
    assert len(data.tasks) == 600 and len({g.goal.product_type for g in goals}) > 200
    for task in (t for t in data.tasks if t.category == MISSING_TARGET):
        source = catalogue.index_of(task.payload["source_asin"])
        assert source in data.hidden(task)
        assert all(catalogue.product(i).best_reward(data.goal(task))[0] < 1.0
                   for i in catalogue.candidates(data.goal(task)) if i not in data.hidden(task))


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


def test_default_store_stocks_every_type_and_every_missing_target_view_keeps_the_type(data) -> None:
    """With hundreds of types a small store leaves some empty, and a Missing Target view that shows no product of the
    goal's type at all is an easy tell; the default size stocks every type, and every view keeps some of its type."""
    catalogue = data.catalogue
    counts = np.bincount(catalogue.type_id.astype(np.int64), minlength=len(catalogue.types))
    assert counts.min() >= 1 and float(np.median(counts)) >= 10, (counts.min(), np.median(counts))
    by_name = {t.name: t for t in catalogue.types}
    for task in (t for t in data.tasks if t.category == MISSING_TARGET):
        positions = catalogue.type_positions(by_name[data.goal(task).product_type].type_id)
        assert set(positions.tolist()) - data.hidden(task), task.task_id


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
    # the generator (any set but the shipped one) says false premises in all three forms
    generated = build_dataset(1)
    forms = collections.Counter(t.payload["form"] for t in generated.tasks if t.category == "false_premise")
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


def test_paper_mode_hides_only_the_target(data) -> None:
    """``missing_target="paper"``: the same tasks, but a Missing Target view hides only the product the goal was
    drawn from (as the paper's release did); ``strict`` hides that one and every other that could earn 1.0."""
    paper = build_dataset(missing_target="paper")
    assert [t.task_id for t in paper.tasks] == [t.task_id for t in data.tasks]
    assert paper.fingerprint() != data.fingerprint() and paper.catalogue is data.catalogue
    wider = 0
    for task in (t for t in paper.tasks if t.category == MISSING_TARGET):
        source = paper.catalogue.index_of(task.payload["source_asin"])
        assert paper.hidden(task) == {source} and source in data.hidden(task)
        wider += len(data.hidden(task)) > 1
    assert wider > 0  # some goals have more than one match, which only strict hides
    with pytest.raises(ValueError, match="missing_target must be one of"):
        build_dataset(missing_target="loose")
