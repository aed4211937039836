"""AbstainWebShop-v1 end to end: pages, actions, bad input, reward, the oracle over all 1,000 tasks, the heuristic."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import gymnasium as gym
import pytest

import agentabstain_gym  # noqa: F401
from agentabstain_gym.core import metrics
from agentabstain_gym.envs.web.dataset import MISSING_TARGET, build_dataset
from agentabstain_gym.envs.web.oracle import oracle_actions, plan
from agentabstain_gym.envs.web.pages import extract_text
from agentabstain_gym.runner import run_episode


@pytest.fixture(scope="module")
def env() -> gym.Env:
    return gym.make("AbstainWebShop-v1")


def play(env: gym.Env, task_id: str, actions: list[str]) -> dict:
    env.reset(seed=0, options={"task_id": task_id})
    for action in actions:
        _, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            return info["abstention"]
    raise AssertionError(f"episode did not end after {actions}")


def solvable_task(env: gym.Env, k: int = 0):
    return [t for t in env.unwrapped.tasks() if not t.should_abstain][k]


def test_oracle_over_all_1000_tasks(env: gym.Env) -> None:
    """Every solvable goal has a product earning 1.0 that a search reaches within the turn budget; every abstain
    task is abstained on at its w; Missing Target evidence comes with the first search."""
    data, index = env.unwrapped.dataset, env.unwrapped.index
    tasks = env.unwrapped.tasks()
    records, by_instruction = [], 0
    for task in tasks:
        p = plan(task, data, index, max_turns=env.unwrapped.max_turns)
        by_instruction += (not task.should_abstain) and p.query == task.instruction
        records.append(play(env, task.task_id, p.actions))
    summary = metrics.summarize(records, bootstrap=0)
    assert summary["success_rate"] == 1.0 and summary["absrec@1"] == 1.0
    assert summary["over_abstention_rate"] == 0.0 and summary["paired_accuracy"] == 1.0
    assert all(r["task_reward"] == 1.0 for r in records if not r["should_abstain"])
    missing = [r for r in records if r["category"] == MISSING_TARGET]
    assert len(missing) == 251 and all(r["evidence_turn"] == 1 and r["tau"] == 2 for r in missing)
    print(f"\noracle: {by_instruction}/500 goals solved by searching the instruction itself")
    assert by_instruction >= 450


def test_missing_target_searches_never_show_a_product_that_earns_one(env: gym.Env) -> None:
    data = env.unwrapped.dataset
    searches = with_results = 0
    for task in [t for t in env.unwrapped.tasks() if t.category == MISSING_TARGET][:60]:
        goal = data.goal(task)
        source = data.catalogue.product(data.catalogue.index_of(task.payload["source_asin"]))
        for query in (task.instruction, source.title, goal.product_type):
            env.reset(seed=0, options={"task_id": task.task_id})
            env.step(f"search[{query}]")
            shown = env.unwrapped._hits
            searches, with_results = searches + 1, with_results + bool(shown)
            assert not set(shown) & data.hidden(task)
            assert all(data.catalogue.product(i).best_reward(goal)[0] < 1.0 for i in shown)
    assert with_results >= 0.8 * searches  # the searches were not vacuous


def test_pages_paging_and_available_actions() -> None:
    env = gym.make("AbstainWebShop-v1", max_turns=30)
    obs, info = env.reset(seed=0, options={"task_id": solvable_task(env).task_id})
    assert info["available_actions"] == {"has_search_bar": True, "clickables": ["search"]}
    assert obs.startswith("WebShop [SEP] Instruction: [SEP] ")
    obs, _, _, _, info = env.step("search[cotton vegan waterproof stainless steel free]")  # any of the words
    clickables = info["available_actions"]["clickables"]
    assert not info["available_actions"]["has_search_bar"]
    assert "Page 1 (Total results: 50)" in obs and clickables[:2] == ["back to search", "next >"]
    assert len([c for c in clickables if c.startswith("b0")]) == 10
    for _ in range(4):
        obs, _, _, _, info = env.step("click[next >]")
    assert "Page 5 (Total results: 50)" in obs and "next >" not in info["available_actions"]["clickables"]
    obs, _, _, _, info = env.step("click[< prev]")
    asin = [c for c in info["available_actions"]["clickables"] if c.startswith("b0")][0]
    obs, _, _, _, info = env.step(f"click[{asin.upper()}]")
    item = info["available_actions"]["clickables"]
    assert {"< prev", "description", "features", "reviews", "buy now"} <= set(item)
    for sub in ("description", "features", "reviews"):
        env.step(f"click[{sub}]")
        obs, _, _, _, info = env.step("click[< prev]")
        assert info["available_actions"]["clickables"] == item
    obs, _, _, _, info = env.step("click[< prev]")
    assert "Page 4 (Total results: 50)" in obs
    obs, _, _, _, info = env.step("click[back to search]")
    assert info["available_actions"]["has_search_bar"]


def _bad_inputs() -> list[tuple[str, str]]:
    return [("click[add to cart]", "there is no button"), ("search[", "not of the form"),
            ("search[   ]", "needs a query"), ("search[" + "a" * 1_000_000 + "]", "longer than the limit"),
            ("click[]", "needs the name"), ("click[b0zzzzzzzz]", "there is no button"), ("buy[it]", "unknown verb")]


@pytest.mark.parametrize("action, expected", _bad_inputs())
def test_bad_input_explains_spends_the_turn_and_changes_nothing(env: gym.Env, action: str, expected: str) -> None:
    env.reset(seed=0, options={"task_id": solvable_task(env).task_id})
    for warmup in ("search[cotton t-shirt]", None):
        before = env.unwrapped.state_key()
        turn = env.unwrapped._turn
        obs, reward, terminated, truncated, info = env.step(action)
        assert obs.startswith("Invalid action") and (expected in obs or not warmup), obs[:200]
        assert "Accepted" in obs
        assert info["turn"] == turn + 1 and reward == 0.0 and not terminated
        assert env.unwrapped.state_key() == before
        if warmup:
            env.step(warmup)


def test_search_only_where_there_is_a_search_bar(env: gym.Env) -> None:
    env.reset(seed=0)
    env.step("search[socks]")
    before = env.unwrapped.state_key()
    obs, *_ = env.step("search[towels]")
    assert obs.startswith("Invalid action: there is no search bar") and env.unwrapped.state_key() == before
    assert "click[back to search]" in obs


def test_reward_counts_attributes_options_price_and_type(env: gym.Env) -> None:
    data = env.unwrapped.dataset
    task = solvable_task(env, 3)
    goal = data.goal(task)
    source = data.catalogue.product(data.catalogue.index_of(task.payload["source_asin"]))
    full = oracle_actions(task, data, env.unwrapped.index)
    record = play(env, task.task_id, full)
    assert record["task_reward"] == 1.0 and record["outcome"] == "success"
    no_options = [a for a in full if not a.startswith("click[") or a in ("click[buy now]", "click[next >]")
                  or a[6:-1].startswith("b0")]
    record = play(env, task.task_id, no_options)
    total = len(goal.attributes) + len(goal.options) + 1
    assert record["task_reward"] == pytest.approx((total - len(goal.options)) / total)
    assert record["outcome"] == "failure"
    other = next(t for t in env.unwrapped.tasks() if not t.should_abstain and data.goal(t).category != goal.category)
    assert source.score(data.goal(other), {}) <= 0.1 + 1e-9


def test_html_mode_is_valid_html_and_text_modes_are_its_extraction() -> None:
    modes = {m: gym.make("AbstainWebShop-v1", observation_mode=m, max_turns=30) for m in ("text", "text_rich", "html")}
    task = next(t for t in modes["text"].unwrapped.tasks() if not t.should_abstain and t.payload["goal"]["options"])
    data = modes["text"].unwrapped.dataset
    actions = oracle_actions(task, data, modes["text"].unwrapped.index)
    option = actions[-2]
    script = [actions[0], "click[next >]", "click[< prev]", actions[-len(data.goal(task).options) - 2], option,
              "click[description]", "click[< prev]", "click[features]", "click[< prev]", "click[reviews]"]
    seen = {m: [e.reset(seed=0, options={"task_id": task.task_id})[0]] for m, e in modes.items()}
    for action in script:
        for m, e in modes.items():
            seen[m].append(e.step(action)[0])
    empty = {m: e.reset(seed=0)[0] for m, e in modes.items()}
    for m, e in modes.items():
        empty[m] = e.step("search[qqqqzzzz]")[0]
    pages = list(zip(seen["text"], seen["text_rich"], seen["html"], strict=True))
    pages.append((empty["text"], empty["text_rich"], empty["html"]))
    assert "[clicked button]" in seen["text_rich"][5] and "No products match" in empty["text"]
    for text, rich, html in pages:
        _assert_well_formed(html)
        assert extract_text(html) == text
        assert extract_text(html, "text_rich") == rich


class _Checker(HTMLParser):
    VOID = {"meta", "input", "br", "img", "link"}

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.seen: list[str] = []
        self.doctype = False

    def handle_decl(self, decl: str) -> None:
        self.doctype = decl.lower() == "doctype html"

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.seen.append(tag)
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        assert self.stack and self.stack.pop() == tag, f"unbalanced </{tag}>"


def _assert_well_formed(html: str) -> None:
    checker = _Checker()
    checker.feed(html)
    checker.close()
    assert checker.doctype and checker.stack == []
    assert checker.seen[:3] == ["html", "head", "meta"] and "body" in checker.seen


def test_custom_task_from_options_and_from_a_file(env: gym.Env, tmp_path: Path) -> None:
    goal = env.unwrapped.dataset.goal(solvable_task(env))
    goal_dict = {"product_type": goal.product_type, "attributes": list(goal.attributes),
                 "options": [list(o) for o in goal.options], "price_upper": goal.price_upper}
    obs, info = env.reset(options={"instruction": "Find me a nice gift", "should_abstain": True,
                                   "category": "subjective"})
    assert info["instruction"] == "Find me a nice gift" and "Find me a nice gift" in obs
    _, _, terminated, _, info = env.step("abstain[taste]")
    assert info["abstention"]["outcome"] == "timely" and info["abstention"]["category"] == "subjective"
    env.reset(options={"instruction": "my own goal", "should_abstain": True, "category": MISSING_TARGET,
                       "goal": goal_dict})
    env.step(f"search[{goal.product_type} {' '.join(goal.attributes)}]")
    assert not set(env.unwrapped._hits) & env.unwrapped.dataset.hidden(env.unwrapped.task)
    _, _, _, _, info = env.step("abstain[]")
    assert info["abstention"]["outcome"] == "timely" and info["abstention"]["evidence_turn"] == 1
    with pytest.raises(ValueError, match="field 'should_abstain'"):
        env.reset(options={"instruction": "x", "should_abstain": "yes"})
    with pytest.raises(ValueError, match="need 'instruction'"):
        env.reset(options={"should_abstain": True})
    path = tmp_path / "mine.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in [
        {"instruction": "i need something", "should_abstain": True, "category": "underspecified_intent"},
        {"instruction": "buy the goal", "should_abstain": False, "goal": goal_dict, "split": "train"},
    ]))
    mine = gym.make("AbstainWebShop-v1", tasks_file=str(path))
    tasks = mine.unwrapped.tasks()
    assert [t.w for t in tasks] == [1, None] and tasks[1].split == "train"
    actions = oracle_actions(tasks[1], mine.unwrapped.dataset, mine.unwrapped.index)
    assert play(mine, tasks[1].task_id, actions)["task_reward"] == 1.0
    path.write_text(json.dumps({"instruction": "x", "should_abstain": True, "w": 0}))
    with pytest.raises(ValueError, match=r"mine.jsonl: line 1: field 'w'"):
        gym.make("AbstainWebShop-v1", tasks_file=str(path))


def test_envs_of_a_process_share_one_catalogue_and_index() -> None:
    a, b = gym.make("AbstainWebShop-v1"), gym.make("AbstainWebShop-v1", observation_mode="html")
    assert a.unwrapped.dataset is b.unwrapped.dataset and a.unwrapped.index is b.unwrapped.index
    assert a.unwrapped.dataset is build_dataset()


def test_heuristic_agent_figures(env: gym.Env, capsys: pytest.CaptureFixture[str]) -> None:
    from agentabstain_gym.agents import make_agent

    agent = make_agent("heuristic", "AbstainWebShop-v1")
    records = [run_episode(env, agent, t.task_id, seed=0) for t in env.unwrapped.tasks(split="test")]
    solvable = [r for r in records if not r["should_abstain"]]
    success = sum(r["success"] for r in solvable) / len(solvable)
    reward = sum(r["task_reward"] for r in solvable) / len(solvable)
    rep = metrics.report(records, bootstrap=0)
    with capsys.disabled():
        print(f"\nheuristic web agent, test split: solvable success {success:.3f}, mean reward {reward:.3f};",
              json.dumps({k: rep["overall"][k] for k in ("absrec@1", "absrec@10", "spl", "over_abstention_rate",
                                                         "paired_accuracy")}))
        print("  AbsRec@10 by category:", {c: m["absrec@10"] for c, m in rep["by_category"].items()
                                           if m["absrec@10"] is not None})
    assert success >= 0.6 and reward >= 0.8
    never = make_agent("never-abstain", "AbstainWebShop-v1")
    assert all(run_episode(env, never, t.task_id, seed=0)["tau"] is None for t in env.unwrapped.tasks()[:40])


def test_heuristic_reads_every_observation_mode_alike() -> None:
    from agentabstain_gym.agents import make_agent

    outcomes = {}
    for mode in ("text", "text_rich", "html"):
        env = gym.make("AbstainWebShop-v1", observation_mode=mode)
        agent = make_agent("heuristic", "AbstainWebShop-v1")
        outcomes[mode] = [(r["outcome"], r["task_reward"], r["turns"]) for r in
                          (run_episode(env, agent, t.task_id, seed=0) for t in env.unwrapped.tasks(split="val")[:60])]
    assert outcomes["text"] == outcomes["text_rich"] == outcomes["html"]
    assert sum(o == "success" for o, _, _ in outcomes["text"]) >= 20


def test_task_files_that_reuse_an_id_keep_their_own_goals(env: gym.Env, tmp_path: Path) -> None:
    """Goals and hidden sets belong to a task's content, not its id: two envs of one process whose task files give
    the same id to different goals each score and hide by their own goal (they once shared the first one's)."""
    data = env.unwrapped.dataset
    first = solvable_task(env)
    goal = data.goal(first)
    other = next(t for t in env.unwrapped.tasks(category=MISSING_TARGET)
                 if data.goal(t).category != goal.category and data.hidden(t))

    def line(g, category: str) -> str:
        return json.dumps({"task_id": "shared-id", "instruction": "buy what I need",
                           "should_abstain": category != "solvable", "category": category,
                           "goal": {"product_type": g.product_type, "attributes": list(g.attributes),
                                    "options": [list(o) for o in g.options], "price_upper": g.price_upper}})

    (tmp_path / "a.jsonl").write_text(line(goal, "solvable"))
    (tmp_path / "b.jsonl").write_text(line(data.goal(other), MISSING_TARGET))
    a, b = (gym.make("AbstainWebShop-v1", tasks_file=str(tmp_path / f"{n}.jsonl")) for n in "ab")
    actions = oracle_actions(first, data, env.unwrapped.index)
    assert play(a, "shared-id", actions)["task_reward"] == 1.0
    b.reset(options={"task_id": "shared-id"})
    assert b.unwrapped._hidden == data.hidden(other)  # b hides what could meet b's goal, not a's
    assert play(b, "shared-id", actions)["task_reward"] <= 0.1 + 1e-9  # and scores against b's goal
    assert play(a, "shared-id", actions)["task_reward"] == 1.0  # b did not change a


def test_identical_rows_get_distinct_default_ids(tmp_path: Path) -> None:
    """Real request sets repeat rows (same text, same label); each is its own task with its own opaque id."""
    row = {"instruction": "i need a blue throw pillow cover under 20 dollars", "should_abstain": False}
    other = {"instruction": "something nice for my mom", "should_abstain": True, "category": "subjective"}
    path = tmp_path / "repeats.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in (row, other, row, row, other)))
    env = gym.make("AbstainWebShop-v1", tasks_file=str(path))
    tasks = env.unwrapped.tasks()
    ids = [t.task_id for t in tasks]
    assert len(tasks) == 5 and len(set(ids)) == 5
    assert all(re.fullmatch(r"ws-custom-[0-9a-f]{10}", i) for i in ids)
    again = gym.make("AbstainWebShop-v1", tasks_file=str(path)).unwrapped.tasks()
    assert [t.task_id for t in again] == ids  # stable from one load to the next
    for task in tasks:
        env.reset(options={"task_id": task.task_id})
        assert env.unwrapped.task is task


def test_two_files_of_1000_rows_with_the_same_ids_keep_their_own_goals(env: gym.Env, tmp_path: Path) -> None:
    """Caches belong to a dataset's content, never to task ids: two files give the same 1,000 ids to different
    goals, and each env scores and hides by its own rows (a cache keyed by id once gave the second env 0 of
    1,000 right goals)."""
    data = env.unwrapped.dataset
    goals = [t.payload["goal"] for t in data.tasks]

    def write(name: str, shift: int) -> Path:
        rows = [{"task_id": f"row-{k}", "instruction": f"request {k}", "should_abstain": k % 4 == 0,
                 "category": MISSING_TARGET if k % 4 == 0 else None, "goal": goals[(k + shift) % len(goals)]}
                for k in range(1000)]
        path = tmp_path / name
        path.write_text("\n".join(json.dumps({k: v for k, v in r.items() if v is not None}) for r in rows))
        return path

    envs = [gym.make("AbstainWebShop-v1", tasks_file=str(write(n, s))) for n, s in (("a.jsonl", 0), ("b.jsonl", 7))]
    for shift, e in zip((0, 7), envs, strict=True):
        right = 0
        for k in range(1000):
            e.reset(options={"task_id": f"row-{k}"})
            goal = e.unwrapped._goal
            want = goals[(k + shift) % len(goals)]
            right += goal is not None and [goal.product_type, list(goal.attributes), goal.price_upper] == [
                want["product_type"], want["attributes"], want["price_upper"]]
            if k % 4 == 0:
                satisfying = set(e.unwrapped.dataset.catalogue.satisfying(goal).tolist())
                assert e.unwrapped._hidden == satisfying and satisfying, k
        assert right == 1000
