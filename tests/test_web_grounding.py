"""Goal-grounded task files: the paper's rows and WebShop's goals load as they are, every solvable row can be bought
at reward 1.0, no Missing Target row can (in either mode where it applies), and the store never tells the labels.

The fixtures in ``tests/data/web`` are written for these tests in the exact formats of the paper's instruction set
(JSONL rows), WebShop's ``items_human_ins.json`` and the goal dicts WebShop's env builds; no real data.
"""

from __future__ import annotations

import collections
import json
from pathlib import Path

import gymnasium as gym
import pytest

import agentabstain_gym  # noqa: F401
from agentabstain_gym.core.task import Task
from agentabstain_gym.envs.web.dataset import MISSING_TARGET, WebDataset
from agentabstain_gym.envs.web.grounding import ExtendedCatalogue
from agentabstain_gym.envs.web.oracle import plan, search
from agentabstain_gym.envs.web.vocab import type_by_name

DATA = Path(__file__).parent / "data" / "web"
FIXTURES = ("paper_rows.jsonl", "items_human_ins.json", "webshop_goals.json")


def make(name: str | Path, **kwargs: object) -> gym.Env:
    return gym.make("AbstainWebShop-v1", tasks_file=str(DATA / name if isinstance(name, str) else name), **kwargs)


def play(env: gym.Env, task: Task, actions: list[str]) -> dict:
    env.reset(seed=0, options={"task_id": task.task_id})
    for action in actions:
        *_, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            return info["abstention"]
    raise AssertionError(f"episode did not end after {actions}")


def best_visible(data: WebDataset, task: Task) -> float:
    """The best reward any product the episode can show earns for the task's goal (every product, not a search)."""
    goal, hidden = data.goal(task), data.hidden(task)
    return max(data.catalogue.product(i).best_reward(goal)[0] for i in range(len(data.catalogue)) if i not in hidden)


def test_paper_rows_load_as_they_are() -> None:
    tasks = make("paper_rows.jsonl").unwrapped.tasks()
    rows = [json.loads(line) for line in (DATA / "paper_rows.jsonl").read_text().splitlines()]
    assert len(tasks) == len(rows) == 24
    for task, row in zip(tasks, rows, strict=True):
        assert task.instruction == row["instruction"] and task.pair_id == row["source_id"]
        assert task.should_abstain == row["should_abstain_expected"]
        assert task.payload["variant"] == row["variant_type"] and task.payload["env_variant"] == row["env_variant"]
        expected = {"original": "solvable", "missing_target": MISSING_TARGET}.get(row["variant_type"])
        assert task.category == (expected or {"false_premises": "false_premise"}.get(row["category"], row["category"]))
        assert task.w == ({"original": None, "rewrite": 1, "missing_target": 2}[row["variant_type"]])
        assert task.payload["goal"]["attributes"] == row["instruction_attributes"]
        assert [v for _, v in task.payload["goal"]["options"]] == row["instruction_options"]
    assert len({t.task_id for t in tasks}) == 24  # p10 and p11 repeat a row's text and category: ids still differ
    by_pair = collections.defaultdict(list)
    for task in tasks:
        by_pair[task.pair_id].append(task)
    assert all(len({json.dumps(t.payload["goal"], sort_keys=True) for t in side}) == 1 for side in by_pair.values())


def test_webshop_goal_records_load_as_they_are() -> None:
    human = make("items_human_ins.json").unwrapped
    assert len(human.tasks()) == 4 and not any(t.should_abstain for t in human.tasks())
    coffee = human.dataset.goal(human.tasks()[0])
    assert coffee.product_type == "ground coffee" and coffee.options == (("size", "12 ounce"),)
    pillow = human.dataset.goal(human.tasks()[2])  # "options": ["size: queen", ...] names the groups
    assert dict(pillow.options) == {"size": "queen", "color": "champagne"}
    built = make("webshop_goals.json").unwrapped
    goals = [built.dataset.goal(t) for t in built.tasks()]
    assert [g.price_upper for g in goals] == [20.0, 50.0, 1_000_000.0]
    assert goals[0].attributes == ("tinted", "spf 15") and dict(goals[1].options) == {"color": "forest green",
                                                                                       "size": "double"}
    assert built.tasks()[0].instruction.endswith("price lower than 20.00 dollars")


@pytest.mark.parametrize("mode", ["strict", "paper"])
@pytest.mark.parametrize("name", FIXTURES)
def test_oracle_buys_every_solvable_row_at_one_and_no_missing_target_row(name: str, mode: str) -> None:
    env = make(name, missing_target=mode)
    data, index = env.unwrapped.dataset, env.unwrapped.index
    solved = missed = 0
    for task in env.unwrapped.tasks():
        goal = data.goal(task)
        if not task.should_abstain:
            record = play(env, task, plan(task, data, index).actions)
            assert record["task_reward"] == 1.0 and record["outcome"] == "success", task.instruction
            solved += 1
        elif task.category == MISSING_TARGET:
            hidden = data.hidden(task)
            if mode == "paper":  # the paper's release hid the target alone
                assert hidden == {data.catalogue.index_of(task.payload["source_asin"])}
            if mode == "strict" or set(data.catalogue.satisfying(goal).tolist()) <= hidden:
                assert best_visible(data, task) < 1.0, task.instruction
                for query in (task.instruction, goal.product_type):  # nor does any search reach one
                    hits = search(data, index, query, hidden)
                    assert all(data.catalogue.product(i).best_reward(goal)[0] < 1.0 for i in hits)
                missed += 1
    assert solved >= 3 and (missed >= 5 or name != "paper_rows.jsonl")
    print(f"\n{name} ({mode}): oracle 1.0 on {solved} solvable rows; no 1.0 reachable on {missed} Missing Target rows")


def test_every_goal_gets_near_misses_of_its_type_and_a_target_when_the_store_had_none() -> None:
    data = make("paper_rows.jsonl").unwrapped.dataset
    catalogue = data.catalogue
    assert isinstance(catalogue, ExtendedCatalogue)
    for task in data.tasks:
        goal = data.goal(task)
        made = [p for p in catalogue.extras if p.product_type == goal.product_type]
        rewards = sorted(p.best_reward(goal)[0] for p in made)
        near = [r for r in rewards if 0.5 <= r < 1.0]
        assert len(near) >= 2, (task.instruction, rewards)
        had = catalogue.base.satisfying(goal).tolist()
        assert (rewards[-1] == 1.0) == (not had)  # a target is made exactly when the store had no match
    new = {data.goal(t).product_type for t in data.tasks} - set(type_by_name())
    assert {"beeswax food wrap set", "ukulele tuner"} <= new  # no shipped type: made from the product phrase
    titles = [p.title.lower() for p in catalogue.extras if p.product_type == "ukulele tuner"]
    assert titles and all("ukulele tuner" in t for t in titles)


def test_the_store_is_stocked_alike_whatever_the_labels(tmp_path: Path) -> None:
    """A file of originals and a file of their Missing Target twins give the same store: what is stocked depends
    on the goals, never on which rows should be abstained on."""
    rows = [json.loads(line) for line in (DATA / "paper_rows.jsonl").read_text().splitlines()]
    originals = [r for r in rows if r["variant_type"] == "original"]
    twins = [{**r, "variant_type": "missing_target", "should_abstain_expected": True} for r in originals]
    stores = []
    for name, part in (("o.jsonl", originals), ("t.jsonl", twins)):
        (tmp_path / name).write_text("\n".join(json.dumps(r) for r in part))
        catalogue = make(tmp_path / name).unwrapped.dataset.catalogue
        stores.append([catalogue.document(i) for i in range(len(catalogue))])
    assert stores[0] == stores[1]


def test_grounded_datasets_are_cached_by_content_not_by_id(tmp_path: Path) -> None:
    a, b = make("paper_rows.jsonl"), make("paper_rows.jsonl")
    assert a.unwrapped.dataset is b.unwrapped.dataset and a.unwrapped.index is b.unwrapped.index
    rows = [json.loads(line) for line in (DATA / "paper_rows.jsonl").read_text().splitlines()]
    ids = [t.task_id for t in a.unwrapped.tasks()]
    swapped = [{**r, "id": i} for r, i in zip(rows, ids, strict=True)]
    swapped[0], swapped[2] = {**swapped[2], "id": ids[0]}, {**swapped[0], "id": ids[2]}  # same ids, other rows
    (tmp_path / "swapped.jsonl").write_text("\n".join(json.dumps(r) for r in swapped))
    c = make(tmp_path / "swapped.jsonl").unwrapped
    assert c.dataset is not a.unwrapped.dataset
    assert c.dataset.goal(c.tasks()[0]) == a.unwrapped.dataset.goal(a.unwrapped.tasks()[2])


def test_rows_from_a_webshop_store_use_their_product(tmp_path: Path) -> None:
    """With WebShop's own product file, a row's ``asin`` gives the goal its product type; ``paper`` mode hides
    exactly that ASIN (the other hats that match stay visible, as in the paper's release), ``strict`` all four."""
    products = [{"asin": f"B00000000{k}", "name": f"Trail Hat {k}, Wide Brim", "full_description": "A hat.",
                 "small_description": ["WIDE BRIM for sun"], "pricing": f"${12 + k}.99", "images": [],
                 "category": "fashion", "query": "sun hat", "product_category": "Clothing › Hats › Sun Hats",
                 "average_rating": 4.2, "customization_options": {"color": [{"value": "khaki", "image": None},
                                                                            {"value": "olive", "image": None}]}}
                for k in range(1, 5)]
    (tmp_path / "items.json").write_text(json.dumps(products))
    (tmp_path / "attrs.json").write_text(json.dumps({p["asin"]: {"attributes": ["wide brim"],
                                                                 "instruction": "a wide brim hat"}
                                                     for p in products}))
    row = {"asin": "B000000003", "instruction": "i want a wide brim sun hat in olive", "source_id": "h1",
           "instruction_attributes": ["wide brim"], "instruction_options": ["olive"], "variant_type": "original"}
    (tmp_path / "rows.jsonl").write_text("\n".join(json.dumps(r) for r in (
        row, {**row, "variant_type": "missing_target", "should_abstain_expected": True})))
    for mode, hidden_size in (("strict", 4), ("paper", 1)):
        env = gym.make("AbstainWebShop-v1", products_file=str(tmp_path / "items.json"),
                       attributes_file=str(tmp_path / "attrs.json"), tasks_file=str(tmp_path / "rows.jsonl"),
                       missing_target=mode)
        data = env.unwrapped.dataset
        solvable, twin = env.unwrapped.tasks()
        assert data.goal(solvable).product_type == "Clothing › Hats › Sun Hats"
        assert len(data.hidden(twin)) == hidden_size and data.catalogue.index_of("B000000003") in data.hidden(twin)
        assert (best_visible(data, twin) == 1.0) == (mode == "paper")  # the other matching hats stay on sale
        assert play(env, solvable, plan(solvable, data, env.unwrapped.index).actions)["task_reward"] == 1.0


@pytest.mark.parametrize("row, message", [
    ({"instruction": "x", "variant_type": "remix"}, "field 'variant_type' must be one of"),
    ({"instruction": "x", "variant_type": "original", "should_abstain_expected": True},
     "field 'should_abstain_expected' is true but variant_type is 'original'"),
    ({"instruction": "x", "variant_type": "rewrite", "category": None}, "field 'category' of a rewrite"),
    ({"instruction": "x", "variant_type": "original", "instruction_attributes": "soft"},
     "field 'instruction_attributes' must be a list of strings"),
    ({"asin": "B0X", "instruction_text": "x", "goal_options": {"size": 3}}, "field 'goal_options' must map"),
    ({"instruction": "x", "should_abstain": False, "price_upper": -4}, "field 'price_upper' must be a positive"),
    ({"instruction": "x", "should_abstain": False, "goal": {"product_type": "hat"}, "instruction_attributes": []},
     "give either 'goal' or WebShop-style fields"),
])
def test_bad_rows_are_named_by_file_line_and_field(tmp_path: Path, row: dict, message: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"instruction": "fine", "should_abstain": False}) + "\n" + json.dumps(row))
    with pytest.raises(ValueError, match=r"bad.jsonl: line 2: " + message.replace("(", r"\(")):
        make(path)
