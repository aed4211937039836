"""The CONVOLVE playbook: format, JSON, the deterministic updater (each operation, counts, budget) and the stops."""

from __future__ import annotations

import re

import gymnasium as gym
import pytest

import agentabstain_gym  # noqa: F401 - registers the ids
from agentabstain_gym.agents import make_agent
from agentabstain_gym.agents.playbook import (
    Bullet,
    Operation,
    Playbook,
    PlaybookAgent,
    PlaybookError,
    PlaybookStopWrapper,
    Reflection,
    Trigger,
    fired_bullet,
    update,
)
from agentabstain_gym.agents.playbook.book import parse_bullet_line
from agentabstain_gym.agents.playbook.stops import stop_action
from agentabstain_gym.runner import run_episode

BULLET_LINE = re.compile(r"^\[[a-z]+-\d{4}\] helpful=\d+ harmful=\d+ :: \S.*$")


def book_with(*specs: tuple[str, str, Trigger | None]) -> Playbook:
    book = Playbook()
    ops = [Operation("add", section=s, lesson=lesson, trigger=t) for s, lesson, t in specs]
    return update(book, None, Reflection("t", operations=ops)).playbook


def abstain_record(action: str, *, should_abstain: bool = True, w: int | None = 1, tau: int | None = 1) -> dict:
    return {"task_id": "x", "should_abstain": should_abstain, "w": w if should_abstain else None, "tau": tau,
            "steps": [{"turn": tau or 1, "action": action, "observation": "", "reward": 0.0}]}


# ----- format ------------------------------------------------------------------------------------------------------
def test_bullets_render_in_the_spec_format_and_parse_back() -> None:
    book = book_with(("early_abstain", "Stop on judgement words.", Trigger(r"\bbest\b", "instruction")),
                     ("over_abstention", "Do not stop on a long page.", None))
    text = book.render()
    lines = [line for line in text.splitlines() if line.startswith("[")]
    assert len(lines) == 2 and all(BULLET_LINE.match(line) for line in lines)
    assert text.index("Early-abstain") < text.index("Over-abstention")
    assert parse_bullet_line(lines[0]) == ("early-0001", 0, 0, "Stop on judgement words.")
    assert "fires when the instruction matches" in book.render(triggers=True)


def test_json_round_trip_is_byte_identical_and_versioned(tmp_path) -> None:
    book = book_with(("late_abstain", "Stop when no result shows.", Trigger("no results", "observation", "qa", 2)))
    assert book.version == 1
    path = tmp_path / "pb.json"
    book.save(path)
    loaded = Playbook.load(path)
    assert loaded.to_json() == book.to_json() == path.read_text()
    assert loaded.bullets[0].trigger == Trigger("no results", "observation", "qa", 2)
    with pytest.raises(PlaybookError, match="format"):
        Playbook.from_json('{"format": "other/9", "bullets": []}')
    with pytest.raises(PlaybookError, match="JSON"):
        Playbook.from_json("{nope")


@pytest.mark.parametrize("kwargs", [{"pattern": "(unclosed"}, {"pattern": ""}, {"pattern": "x", "on": "elsewhere"},
                                    {"pattern": "x", "min_turn": 0}, {"pattern": "x" * 400}])
def test_invalid_triggers_are_refused(kwargs: dict) -> None:
    with pytest.raises(PlaybookError):
        Trigger(**kwargs)


def test_render_skips_bullets_of_other_families() -> None:
    book = book_with(("late_abstain", "web lesson", Trigger("x", family="web")),
                     ("late_abstain", "qa lesson", Trigger("y", family="qa")))
    assert "web lesson" not in book.render("qa") and "qa lesson" in book.render("qa")


# ----- the updater --------------------------------------------------------------------------------------------------
def test_add_skips_duplicates_and_never_mutates_its_input() -> None:
    book = book_with(("early_abstain", "Stop on judgement words.", Trigger(r"\bbest\b", "instruction")))
    before = book.to_json()
    again = update(book, None, Reflection("t", operations=[
        Operation("add", section="early_abstain", lesson="Other words, same trigger.",
                  trigger=Trigger(r"\bbest\b", "instruction"), sources=("t2",))]))
    assert book.to_json() == before
    assert len(again.playbook) == 1 and "duplicate of early-0001" in again.applied[0]
    assert again.playbook.bullets[0].sources == ["t2"]
    assert again.playbook.version == book.version + 1


def test_update_merge_and_delete() -> None:
    book = book_with(("late_abstain", "A", Trigger("alpha", "observation", None, 3)),
                     ("late_abstain", "B", Trigger("beta", "observation", None, 2)),
                     ("general", "C", None))
    book.bullets[0].helpful, book.bullets[1].helpful, book.bullets[1].harmful = 2, 1, 1
    result = update(book, None, Reflection("t", operations=[
        Operation("update", bullet_id="gen-0003", lesson="C, reworded"),
        Operation("merge", bullet_id="late-0001", other_id="late-0002", lesson="A or B"),
        Operation("delete", bullet_id="gen-0003")]))
    pb = result.playbook
    assert [b.id for b in pb.bullets] == ["late-0001"]
    merged = pb.bullets[0]
    assert merged.lesson == "A or B" and (merged.helpful, merged.harmful) == (3, 1)
    assert merged.trigger == Trigger("(?:alpha)|(?:beta)", "observation", None, 2)
    assert result.applied == ["update gen-0003", "merge late-0002 into late-0001", "delete gen-0003"]


def test_invalid_operations_are_skipped_not_raised() -> None:
    book = book_with(("general", "C", None))
    result = update(book, None, Reflection("t", operations=[
        Operation("delete", bullet_id="nope"), Operation("merge", bullet_id="gen-0001", other_id="gen-0001"),
        Operation("add", section="nowhere", lesson="x"), Operation("update", bullet_id="gen-0001", section="bad")]))
    assert len(result.skipped) == 4 and len(result.playbook) == 1
    with pytest.raises(PlaybookError):
        Operation.from_dict({"op": "explode"})


def test_counts_come_from_the_trajectory_and_harm_prunes() -> None:
    book = book_with(("early_abstain", "Stop on best.", Trigger("best", "instruction")),
                     ("general", "Prompt-only lesson.", None))
    bullet = book.bullets[0]
    good = update(book, abstain_record(stop_action(bullet)), None).playbook
    assert (good.bullets[0].helpful, good.bullets[0].harmful) == (1, 0)
    late_but_justified = update(good, abstain_record(stop_action(bullet), w=2, tau=3), None).playbook
    assert late_but_justified.bullets[0].helpful == 2
    # premature (tau < w) is harm; harm as often as help (2 >= 2, on a solvable task) prunes the bullet
    book2 = update(late_but_justified, abstain_record(stop_action(bullet), w=2, tau=1), None).playbook
    assert (book2.bullets[0].helpful, book2.bullets[0].harmful) == (2, 1) and len(book2) == 2
    result = update(book2, abstain_record(stop_action(bullet), should_abstain=False), None)
    assert [b.id for b in result.playbook.bullets] == ["gen-0002"]
    assert "prune early-0001 (harmful 2 >= helpful 2)" in result.applied
    assert len(update(book, None, None).playbook) == 2  # a new bullet (0 / 0) is not pruned
    tagged = update(book, None, Reflection("t", tags={"gen-0002": "helpful", "nope": "helpful"})).playbook
    assert tagged.get("gen-0002").helpful == 1  # type: ignore[union-attr]


def test_budget_evicts_lowest_scoring_then_newest() -> None:
    book = book_with(*[("general", f"lesson number {i}", None) for i in range(5)])
    book.bullets[0].helpful = 3
    book.bullets[3].harmful = 1  # no trigger, so never pruned, but first to go
    result = update(book, None, None, max_bullets=3)
    assert [b.id for b in result.playbook.bullets] == ["gen-0001", "gen-0002", "gen-0003"]
    assert result.applied == ["evict gen-0004 (budget)", "evict gen-0005 (budget)"]
    small = update(book, None, None, max_chars=len(book.bullets[0].render()) + 40)
    assert [b.id for b in small.playbook.bullets] == ["gen-0001"]
    assert len(update(book, None, None, max_bullets=0).playbook) == 0


# ----- executable stops ---------------------------------------------------------------------------------------------
def qa_tasks(category: str, n: int = 2) -> list:
    env = gym.make("AbstainQA-v0")
    return [t for t in env.unwrapped.tasks(split="train") if t.category == category][:n]


def test_playbook_agent_stops_on_the_instruction_at_turn_one() -> None:
    task = qa_tasks("subjective", 1)[0]
    word = next(w for w in task.instruction.split() if len(w) > 5).strip("?.,'")
    book = book_with(("early_abstain", "Stop on this wording.", Trigger(re.escape(word), "instruction", "qa")))
    env = gym.make("AbstainQA-v0")
    agent = PlaybookAgent(make_agent("never-abstain", "AbstainQA-v0"), book, family="qa")
    record = run_episode(env, agent, task.task_id, seed=0)
    assert record["tau"] == 1 and record["outcome"] == "timely"
    assert fired_bullet(record) == "early-0001"
    assert record["extras"]["playbook_stop"] == {"playbook_version": 1, "fired": "early-0001"}
    web_only = book_with(("early_abstain", "Web only.", Trigger(re.escape(word), "instruction", "web")))
    record = run_episode(env, PlaybookAgent(make_agent("never-abstain", "AbstainQA-v0"), web_only, family="qa"),
                         task.task_id, seed=0)
    assert record["tau"] is None


class _AlwaysSearch:
    name = "always-search"

    def reset(self) -> None:
        pass

    def act(self, observation: str, info: dict) -> str:
        return f"search[query number {info['turn']}]"


def test_observation_trigger_respects_min_turn_and_wrapper_enforces_it() -> None:
    task = qa_tasks("underspecified_context", 1)[0]
    book = book_with(("late_abstain", "Stop when searching.", Trigger("searches left", "observation", None, 3)))
    env = gym.make("AbstainQA-v0")
    record = run_episode(env, PlaybookAgent(_AlwaysSearch(), book), task.task_id, 0)
    assert record["tau"] == 3  # the trigger matched turn 1's observation already, but may fire only from turn 3
    wrapped = PlaybookStopWrapper(gym.make("AbstainQA-v0"),
                                  book_with(("late_abstain", "x", Trigger("searches left", "observation"))))
    obs, info = wrapped.reset(seed=0, options={"task_id": task.task_id})
    obs, _, term, trunc, info = wrapped.step("search[anything at all]")
    assert not term and "playbook_stop" not in info
    obs, _, term, _, info = wrapped.step("answer[42]")
    assert term and info["playbook_stop"]["bullet"] == "late-0001" and info["abstention"]["tau"] == 2


def test_stop_reason_keeps_the_action_well_formed() -> None:
    bullet = Bullet("late-0001", "late_abstain", "a [bracketed] lesson " + "x" * 300)
    action = stop_action(bullet)
    assert action.startswith("abstain[playbook late-0001: a (bracketed)") and action.count("[") == 1
    assert fired_bullet({"steps": [{"action": action}]}) == "late-0001"
    assert fired_bullet({"steps": [{"action": "abstain[my own idea]"}]}) is None
