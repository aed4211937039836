"""AbstainQA-v0 data: the guarantees the env relies on, checked over the WHOLE default set (not a sample).

Searches go through the real :class:`SearchIndex`, built once per module; :func:`simulate` formats observations as
the env does, so the oracle and the heuristic solver are checked end to end without the env class.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from agentabstain_gym.core.search_index import SearchIndex
from agentabstain_gym.core.task import Task
from agentabstain_gym.envs.qa.corpus import attribute_keywords, stated_values
from agentabstain_gym.envs.qa.dataset import QADataset, build_dataset
from agentabstain_gym.envs.qa.knowledge import KINDS, load_data
from agentabstain_gym.envs.qa.oracle import oracle_actions
from agentabstain_gym.envs.qa.questions import CATEGORIES, CATEGORY_W, GIVEAWAY_WORDS, possessive
from agentabstain_gym.envs.qa.solver import HeuristicQASolver

ROOT = Path(__file__).resolve().parents[1]
ACTION = re.compile(r"\A\s*([a-z]+)\[(.*)\]\s*\Z", re.DOTALL)


@pytest.fixture(scope="module")
def dataset() -> QADataset:
    return build_dataset()


@pytest.fixture(scope="module")
def index(dataset: QADataset) -> SearchIndex:
    return SearchIndex.shared(dataset.documents())


def normalize(text: str) -> str:
    """The env's answer normalisation: lower-case, no punctuation or articles, single spaces."""
    text = re.sub(r"[^\w\s]", "", text.lower())
    return " ".join(re.sub(r"\b(a|an|the)\b", " ", text).split())


def top(index: SearchIndex, query: str, k: int = 3) -> list[int]:
    return [pos for pos, _ in index.search(query, k)]


def stating_positions(dataset: QADataset) -> dict[tuple[str, str], set[int]]:
    out: dict[tuple[str, str], set[int]] = defaultdict(set)
    position = {p.doc_id: i for i, p in enumerate(dataset.passages)}
    for doc_id, facts in dataset.facts.items():
        for fact in facts:
            out[fact].add(position[doc_id])
    return out


# ----- a minimal stand-in for the env ----------------------------------------------------------------------------
@dataclass
class Episode:
    actions: list[str] = field(default_factory=list)
    answer: str | None = None
    tau: int | None = None  # turn of the abstention
    evidence_turn: int | None = None  # turn whose results first showed every evidence entity


def simulate(task: Task, dataset: QADataset, index: SearchIndex, policy: Callable[[str, dict[str, Any]], str],
             max_turns: int = 10, max_searches: int = 10, top_k: int = 3) -> Episode:
    """Play one episode with the env's observation format (see the env's docs) and return what happened."""
    obs = (f"Question: {task.instruction}\nSearch the knowledge base with search[query] (top {top_k} passages, at "
           f"most {max_searches} searches), answer with answer[text], or abstain with abstain[reason].")
    searches_left, seen, ep = max_searches, set(), Episode()
    needed = set(task.payload["evidence_entities"])
    for turn in range(1, max_turns + 1):
        action = policy(obs, {"instruction": task.instruction, "turn": turn - 1, "max_turns": max_turns,
                              "task_id": task.task_id})
        ep.actions.append(action)
        m = ACTION.match(action)
        verb, arg = (m.group(1), m.group(2).strip()) if m else ("", "")
        if verb == "abstain":
            ep.tau = turn
            return ep
        if verb == "answer" and arg:
            ep.answer = arg
            return ep
        if verb == "search" and arg and searches_left > 0:
            searches_left -= 1
            hits = index.search(arg, top_k)
            left = f"(searches left: {searches_left})"
            if not hits:
                obs = f'No passages matched "{arg}" {left}.'
                continue
            parts = [f'Results for "{arg}" {left}:']
            for rank, (pos, _) in enumerate(hits, start=1):
                p = dataset.passages[pos]
                parts.append(f"[{rank}] {p.doc_id} | {p.title}\n{p.text}")
                seen.update(p.entity_ids)
            obs = "\n".join(parts)
            if needed and ep.evidence_turn is None and needed <= seen:
                ep.evidence_turn = turn
            continue
        obs = f"Invalid action: {action[:80]!r}. Accepted: search[...], answer[...], abstain[...]."
    return ep


def scripted(actions: list[str]) -> Callable[[str, dict[str, Any]], str]:
    queue = iter(actions)
    return lambda _obs, _info: next(queue, "abstain[out of script]")


# ----- counts and shape ------------------------------------------------------------------------------------------
def test_counts_per_category_and_split(dataset: QADataset) -> None:
    counts = Counter((t.category, t.split) for t in dataset.tasks)
    assert len(dataset.tasks) == 1000
    for split, share in (("train", 300), ("val", 100), ("test", 100)):
        assert counts[("answerable", split)] == share
        for category in CATEGORIES:
            assert counts[(category, split)] == share // 5
    assert {t.category for t in dataset.tasks} == {"answerable", *CATEGORIES}


def test_world_size(dataset: QADataset) -> None:
    kinds = Counter(e.kind for e in dataset.entities.values())
    assert len(dataset.entities) >= 2000 and len(kinds) >= 5 and set(kinds) == set(KINDS)
    assert len(dataset.passages) >= 10_000
    assert len({p.doc_id for p in dataset.passages}) == len(dataset.passages)
    own = Counter(p.title for p in dataset.passages if p.doc_id in dataset.facts)
    assert all(own[e.title] >= 2 for e in dataset.entities.values())  # several fact passages each
    names = Counter(e.name for e in dataset.entities.values())
    shared = {n for n, c in names.items() if c > 1}
    assert all(names[n] == 2 for n in shared) and len(shared) >= 100
    for name in shared:  # deliberate namesakes: same kind, told apart by their titles
        pair = [e for e in dataset.entities.values() if e.name == name]
        assert pair[0].kind == pair[1].kind and pair[0].title != pair[1].title


def test_build_is_deterministic(dataset: QADataset) -> None:  # its speed is measured in benchmarks/bench_qa.py
    again = build_dataset.__wrapped__(0, 500)
    assert again.fingerprint() == dataset.fingerprint()
    assert build_dataset(1).fingerprint() != dataset.fingerprint()
    small = build_dataset(0, 50)  # other sizes keep the shape
    assert len(small.tasks) == 100 and Counter(t.category for t in small.tasks)["subjective"] == 10


def test_fingerprint_is_the_same_in_another_process(dataset: QADataset) -> None:
    code = "from agentabstain_gym.envs.qa.dataset import build_dataset; print(build_dataset().fingerprint())"
    env = {**os.environ, "PYTHONHASHSEED": "12345", "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True, cwd=ROOT)
    assert out.stdout.strip() == dataset.fingerprint()


def test_pairs_are_one_to_one_and_one_change_apart(dataset: QADataset) -> None:
    """Request-based and answer_unknown twins are about one entity; underspecified_context twins are the same
    question about two look-alike entities of one kind (the change lies in the world: a namesake)."""
    pairs: dict[str, list[Task]] = defaultdict(list)
    for t in dataset.tasks:
        pairs[str(t.pair_id)].append(t)
    assert len(pairs) == 500
    for members in pairs.values():
        assert len(members) == 2
        act, abstain = sorted(members, key=lambda t: t.should_abstain)
        assert not act.should_abstain and abstain.should_abstain
        assert act.split == abstain.split and act.instruction != abstain.instruction
        assert act.payload["name"] in act.instruction and abstain.payload["name"] in abstain.instruction
        if abstain.category != "underspecified_context":
            assert act.payload["entity_ids"][0] == abstain.payload["entity_ids"][0]
            assert act.payload["name"] == abstain.payload["name"]
            continue
        mine, theirs = (dataset.entities[x.payload["entity_ids"][0]] for x in (act, abstain))
        assert mine.kind == theirs.kind and mine.entity_id not in abstain.payload["entity_ids"]
        assert act.payload["attribute"] == abstain.payload["attribute"]


def test_labels_and_payloads(dataset: QADataset) -> None:
    for t in dataset.tasks:
        p = t.payload
        assert t.family == "qa" and t.evidence
        assert set(p) >= {"answers", "entity_ids", "attribute", "evidence_entities", "name"}
        if not t.should_abstain:
            assert t.w is None and p["answers"] and p["evidence_entities"] == []
            continue
        assert t.w == CATEGORY_W[t.category] and p["answers"] == []
        assert bool(p["evidence_entities"]) == (t.w == 2)


def test_ids_reveal_nothing(dataset: QADataset) -> None:
    ids = [t.task_id for t in dataset.tasks]
    assert len(set(ids)) == len(ids)
    assert all(re.fullmatch(r"qa-[0-9a-f]{10}", i) for i in ids)
    assert all(re.fullmatch(r"qp-[0-9a-f]{10}", str(t.pair_id)) for t in dataset.tasks)
    for t in dataset.tasks:
        for label in ("answerable", "abstain", "unknown", "premise", "subjective", "context", "intent"):
            assert label not in t.task_id and label not in str(t.pair_id)
    flags = [t.should_abstain for t in dataset.tasks]
    longest, run = 1, 1
    for a, b in zip(flags, flags[1:], strict=False):
        run = run + 1 if a == b else 1
        longest = max(longest, run)
    assert longest < 15  # shuffled, not blocks
    assert 0.4 < sum(flags[:500]) / 500 < 0.6


# ----- wording -----------------------------------------------------------------------------------------------------
def test_no_giveaway_words(dataset: QADataset) -> None:
    for t in dataset.tasks:
        text = t.instruction.lower()
        for word in GIVEAWAY_WORDS:
            assert not re.search(rf"\b{re.escape(word)}\b", text), (word, t.instruction)


def test_no_length_or_punctuation_tell(dataset: QADataset) -> None:
    def stats(tasks: list[Task]) -> tuple[float, float, float]:
        lengths = [len(t.instruction) for t in tasks]
        return (sum(lengths) / len(lengths), sum(t.instruction.endswith("?") for t in tasks) / len(tasks),
                sum(t.instruction.count(",") for t in tasks) / len(tasks))
    act = stats([t for t in dataset.tasks if not t.should_abstain])
    abstain = stats([t for t in dataset.tasks if t.should_abstain])
    assert abs(act[0] - abstain[0]) / act[0] < 0.15
    assert abs(act[1] - abstain[1]) < 0.1 and abs(act[2] - abstain[2]) < 0.1


def test_corpus_wording(dataset: QADataset) -> None:
    """Fact templates carry their keyword and no other template of the kind does; passages never use label words."""
    templates, keywords = load_data("passages"), attribute_keywords()
    every_keyword = {k for kind in keywords.values() for k in kind.values()}
    for kind in KINDS:
        facts = templates["facts"][kind]
        for attribute, keyword in keywords[kind].items():
            word = re.compile(rf"\b{keyword}\b", re.IGNORECASE)
            assert all(word.search(t) for t in facts[attribute]), (kind, attribute)
            others = [*templates["intro"][kind], *(t for a, ts in facts.items() if a != attribute for t in ts)]
            assert not any(word.search(t) for t in others), (kind, keyword)
    distractors = json.dumps([templates["mentions"], templates["overviews"], templates["disambiguation"]])
    for keyword in every_keyword:
        assert not re.search(rf"\b{keyword}\b", distractors, re.IGNORECASE), keyword
    banned = re.compile(r"\b(evidence|category|abstention|abstain|should_abstain|answerable|subjective|"
                        r"underspecified|false_premise|answer_unknown)\b", re.IGNORECASE)
    assert not any(banned.search(p.title + " " + p.text) for p in dataset.passages)


# ----- search guarantees (all tasks) -----------------------------------------------------------------------------
def test_answerable_within_two_searches(dataset: QADataset, index: SearchIndex) -> None:
    stating, keywords = stating_positions(dataset), attribute_keywords()
    for t in (t for t in dataset.tasks if not t.should_abstain):
        entity = dataset.entities[t.payload["entity_ids"][0]]
        gold = stating[(entity.entity_id, t.payload["attribute"])]
        assert gold, t.instruction
        for pos in gold:  # the bookkeeping agrees with the renderer's own patterns
            p = dataset.passages[pos]
            assert t.payload["answers"][0] in stated_values(p.title, p.text, entity.name, entity.kind,
                                                            t.payload["attribute"], [entity.title])
        query = f"{t.payload['name']} {keywords[entity.kind][t.payload['attribute']]}"
        assert gold & set(top(index, t.instruction)) or gold & set(top(index, query)), t.instruction


def test_answer_unknown_fact_is_absent_and_the_entity_is_findable(dataset: QADataset, index: SearchIndex) -> None:
    naming: dict[str, list[int]] = defaultdict(list)
    for i, p in enumerate(dataset.passages):
        for eid in p.entity_ids:
            naming[eid].append(i)
    tasks = [t for t in dataset.tasks if t.category == "answer_unknown"]
    assert len(tasks) == 100
    for t in tasks:
        entity, attribute = dataset.entities[t.payload["entity_ids"][0]], t.payload["attribute"]
        assert attribute not in entity.attributes and attribute in entity.unrecorded
        for pos in naming[entity.entity_id]:
            p = dataset.passages[pos]
            assert not stated_values(p.title, p.text, entity.name, entity.kind, attribute, [entity.title])
            assert (entity.entity_id, attribute) not in dataset.facts.get(p.doc_id, ())
        shown = {eid for pos in top(index, t.payload["name"]) for eid in dataset.passages[pos].entity_ids}
        assert entity.entity_id in shown, t.instruction


def test_shared_names_show_both(dataset: QADataset, index: SearchIndex) -> None:
    tasks = [t for t in dataset.tasks if t.category == "underspecified_context"]
    assert len(tasks) == 100
    for t in tasks:
        a, b = (dataset.entities[i] for i in t.payload["evidence_entities"])
        assert a.name == b.name == t.payload["name"] and a.kind == b.kind and a.entity_id != b.entity_id
        shown = {eid for pos in top(index, t.payload["name"]) for eid in dataset.passages[pos].entity_ids}
        assert {a.entity_id, b.entity_id} <= shown, t.instruction
        assert a.disambiguator not in t.instruction and b.disambiguator not in t.instruction


def test_context_twins_differ_only_in_the_name(dataset: QADataset, index: SearchIndex) -> None:
    """underspecified_context is context-based: its twin is the same sentence with another name, a name only one
    entity bears (so the first search shows one entity, where the abstain side's shows two)."""
    names = Counter(e.name for e in dataset.entities.values())
    twins = {t.pair_id: t for t in dataset.tasks if not t.should_abstain}
    for t in (t for t in dataset.tasks if t.category == "underspecified_context"):
        twin = twins[t.pair_id]
        mine, theirs = twin.payload["name"], t.payload["name"]
        assert twin.instruction == t.instruction.replace(possessive(theirs), possessive(mine)).replace(theirs, mine)
        assert names[t.payload["name"]] == 2 and names[twin.payload["name"]] == 1
        own = dataset.entities[twin.payload["entity_ids"][0]]
        assert own.namesake is None and own.title == own.name
        titles = [dataset.passages[pos].title for pos in top(index, twin.payload["name"], 10)]
        assert not any(title.startswith(f"{own.name} (") for title in titles), titles


# ----- agents ------------------------------------------------------------------------------------------------------
def test_oracle_actions_do_what_the_labels_say(dataset: QADataset, index: SearchIndex) -> None:
    for t in dataset.tasks:
        ep = simulate(t, dataset, index, scripted(oracle_actions(t, dataset)))
        if not t.should_abstain:
            assert len(ep.actions) == 2 and ep.answer is not None, t.instruction
            assert normalize(ep.answer) in {normalize(a) for a in t.payload["answers"]}
            continue
        assert ep.tau == t.w, (t.category, t.instruction)
        if t.w == 2:
            assert ep.evidence_turn == 1, (t.category, t.instruction)


def test_heuristic_solver_figures(dataset: QADataset, index: SearchIndex, capsys: pytest.CaptureFixture[str]) -> None:
    solver = HeuristicQASolver()
    stats: dict[str, Counter[str]] = defaultdict(Counter)
    for t in dataset.tasks:
        solver.reset()
        ep = simulate(t, dataset, index, solver.act)
        s = stats[t.category]
        s["n"] += 1
        if not t.should_abstain:
            s["success"] += ep.answer is not None and normalize(ep.answer) in {normalize(a) for a in t.payload["answers"]}
            s["abstained"] += ep.tau is not None
        else:
            s["abstained"] += ep.tau is not None
            s["timely"] += ep.tau == t.w
            s["premature"] += ep.tau is not None and t.w is not None and ep.tau < t.w
    table = {c: {k: round(v / s["n"], 3) for k, v in s.items() if k != "n"} | {"n": s["n"]} for c, s in stats.items()}
    with capsys.disabled():
        print("\nheuristic QA solver on the default set:", json.dumps(table, sort_keys=True))
    assert table["answerable"]["success"] >= 0.8
    assert table["answerable"]["abstained"] <= 0.15
    for category in CATEGORIES:
        assert table[category]["abstained"] >= 0.6, category


def test_solver_with_abstention_off_never_abstains(dataset: QADataset, index: SearchIndex) -> None:
    solver = HeuristicQASolver(abstain=False)
    for t in dataset.tasks[:200]:
        solver.reset()
        ep = simulate(t, dataset, index, solver.act)
        assert ep.tau is None and ep.answer, t.instruction


def test_solver_survives_odd_observations() -> None:
    solver = HeuristicQASolver()
    info = {"instruction": "When was Nowhere Holdings founded?", "turn": 0, "max_turns": 10, "task_id": "qa-x"}
    for obs in ("Question: When was Nowhere Holdings founded?", "Invalid action: nope", 'No passages matched "x".',
                "[1] P000001 | \n", "[9] Pxyz | broken\n" + "x" * 10_000):
        action = solver.act(obs, info)
        assert ACTION.match(action), action
