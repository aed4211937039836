"""The deterministic trajectory miner: what it learns, what it refuses to learn, and from which text."""

from __future__ import annotations

from agentabstain_gym.agents.playbook import Playbook, TrajectoryMiner, update
from agentabstain_gym.agents.playbook.miner import evidence_of, ngrams, pattern_for, tokens


def rec(task_id: str, instruction: str, *, should_abstain: bool = True, w: int | None = 1,
        evidence_turn: int | None = 0, steps: list[tuple[str, str]] = (), tau: int | None = None,
        category: str = "subjective") -> dict:
    return {"task_id": task_id, "should_abstain": should_abstain, "w": w if should_abstain else None,
            "evidence_turn": evidence_turn if should_abstain else None, "tau": tau, "category": category,
            "outcome": "missed" if should_abstain else "success", "extras": {"instruction": instruction},
            "steps": [{"turn": i + 1, "action": a, "observation": o, "reward": 0.0} for i, (a, o) in enumerate(steps)]}


def learn(miner: TrajectoryMiner, book: Playbook, record: dict) -> Playbook:
    return update(book, record, miner.reflect(record, book)).playbook


def test_tokens_mask_numbers_and_patterns_match_raw_text() -> None:
    assert tokens("Born in 1754, it's RED.") == ["born", "in", "#", "it", "s", "red"]
    assert ("the",) not in ngrams("the red house") and ("red", "house") in ngrams("the red house")
    import re
    assert re.search(pattern_for(("lived", "#", "years")), "He LIVED 83  years.", re.IGNORECASE)


def test_an_instruction_lesson_needs_two_episodes_and_no_twin_using_the_words() -> None:
    miner, book = TrajectoryMiner(family="qa"), Playbook()
    book = learn(miner, book, rec("twin1", "How tall is the tower of Ardmore?", should_abstain=False))
    book = learn(miner, book, rec("a1", "How lovely is the tower of Ardmore?"))
    assert len(book) == 0  # one episode is an anecdote, not a lesson
    book = learn(miner, book, rec("twin2", "How old is the bridge of Belcast?", should_abstain=False))
    book = learn(miner, book, rec("a2", "How lovely is the bridge of Belcast?"))
    assert len(book) == 1
    bullet = book.bullets[0]
    assert bullet.section == "early_abstain" and bullet.trigger is not None
    assert bullet.trigger.on == "instruction" and bullet.trigger.min_turn == 1 and bullet.trigger.family == "qa"
    assert bullet.trigger.pattern == pattern_for(("how", "lovely", "is"))  # longest of the best-supported
    assert bullet.sources == ["a1", "a2"] and "lovely" in bullet.lesson
    assert not bullet.trigger.matches("How tall is the tower?", family="qa", turn=1)


def test_observation_lessons_skip_echoed_action_words_and_pre_evidence_text() -> None:
    miner, book = TrajectoryMiner(), Playbook()
    for i, name in enumerate(["Wergate", "Lorira"]):
        steps = [(f"search[{name} zebra]", f'Results for "{name} zebra": {name} may refer to either of two places.'),
                 ("answer[x]", "You answered: x")]
        book = learn(miner, book, rec(f"a{i}", f"Where is {name}?", w=2, evidence_turn=1, steps=steps,
                                      category="underspecified_context"))
    assert len(book) == 1
    trigger = book.bullets[0].trigger
    assert trigger is not None and trigger.on == "observation" and trigger.min_turn == 2
    assert "zebra" not in trigger.pattern  # the agent's own query words are no evidence
    assert book.bullets[0].section == "late_abstain"


def test_no_lesson_when_the_trajectory_never_showed_the_evidence() -> None:
    record = rec("a1", "Where is Wergate?", w=2, evidence_turn=None, steps=[("answer[x]", "You answered: x")])
    assert evidence_of(record) is None
    reflection = TrajectoryMiner().reflect(record, Playbook())
    assert reflection.operations == [] and "never showed" in reflection.diagnosis


def test_a_wrong_stop_on_a_twin_becomes_an_over_abstention_warning() -> None:
    miner, book = TrajectoryMiner(), Playbook()
    book = learn(miner, book, rec("a1", "How lovely is the tower?"))
    book = learn(miner, book, rec("a2", "How lovely is the bridge?"))
    bullet = book.bullets[0]
    twin = rec("t1", "How lovely, in metres, is the tower's height?", should_abstain=False,
               steps=[(f"abstain[playbook {bullet.id}: x]", "You stopped and abstained.")])
    book = learn(miner, book, twin)
    assert book.get(bullet.id) is None  # harmful 1 > helpful 0: pruned
    assert book.section("over_abstention") and bullet.id in book.section("over_abstention")[0].lesson


def test_the_miner_is_deterministic() -> None:
    def run() -> str:
        miner, book = TrajectoryMiner(), Playbook()
        for i, word in enumerate(["tower", "bridge", "castle", "mill"]):
            book = learn(miner, book, rec(f"t{i}", f"How tall is the {word}?", should_abstain=False))
            book = learn(miner, book, rec(f"a{i}", f"How charming and lovely is the {word}?"))
        return book.to_json()

    assert run() == run()


def test_doable_requests_of_the_training_split_veto_a_trigger() -> None:
    from agentabstain_gym.agents.playbook.miner import TrajectoryMiner

    def abstain_record(task_id: str, instruction: str) -> dict:
        return {"task_id": task_id, "should_abstain": True, "evidence_turn": 0, "w": 1, "tau": None,
                "category": "false_premise", "extras": {"instruction": instruction}, "steps": []}

    first = abstain_record("a", "a lamp in size 12 ounce for the bedroom")
    second = abstain_record("b", "a brush set in size 8 ounce, pack of 2")
    plain = TrajectoryMiner()
    for r in (first, second):
        plain.observe(r)
    assert ("size", "#", "ounce") in {g for g, _ in plain.candidates("instruction", "a")}
    vetoed = TrajectoryMiner()
    vetoed.observe_solvable_requests(["ground coffee in size 12 ounce (pack of 1)"])
    for r in (first, second):
        vetoed.observe(r)
    assert ("size", "#", "ounce") not in {g for g, _ in vetoed.candidates("instruction", "a")}
