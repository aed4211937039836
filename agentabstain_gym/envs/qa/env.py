"""AbstainQA-v0: question answering over a search tool, where some questions should not be answered."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentabstain_gym.core.actions import Action
from agentabstain_gym.core.base_env import AbstainEnv, StepResult
from agentabstain_gym.core.fingerprint import canonical_json, sha256_text
from agentabstain_gym.core.search_index import SearchIndex
from agentabstain_gym.core.task import Task
from agentabstain_gym.envs.qa.dataset import build_dataset
from agentabstain_gym.envs.qa.loader import load_abstentionbench
from agentabstain_gym.envs.qa.scoring import exact_match, token_f1

MAX_QUERY_ECHO = 200


class AbstainQAEnv(AbstainEnv):
    """Answer a question about fictional entities with a search tool, or abstain.

    ## Description
    The agent reads a question about a generated world of fictional people, organisations, places, works and
    compounds, so no model can answer from memory. It may search a passage corpus (BM25 over a tantivy index),
    then answer or abstain. Half of the default questions are answerable from the corpus; the other half fall into
    five abstention categories: the fact is absent from the corpus (``answer_unknown``), the question rests on a
    false premise (``false_premise``), asks for a judgement (``subjective``), names an entity that two share
    (``underspecified_context``), or is vague about what it asks (``underspecified_intent``). Each abstain question
    is a one-change twin of an answerable one (same ``pair_id``); for ``underspecified_context`` the change is in the
    world, not the wording: the twin is the same question about a look-alike entity whose name is unique.

    ## Action Space
    ``Text``: ``search[<query>]`` (top ``top_k`` passages; at most ``max_searches`` searches), ``answer[<text>]``
    (ends the episode), ``abstain[<reason>]`` (ends the episode). Anything else spends the turn and returns an
    observation saying what is accepted.

    ## Observation Space
    ``Text``: the question and the accepted actions at reset; then search results (doc id, title, text) or an
    explanation of an invalid action.

    ## Rewards
    At the end of an episode that ends with ``answer``: the token F1 of the answer against the references (0 on a
    should-abstain question); 0 otherwise. Abstention-shaped rewards come from
    :class:`agentabstain_gym.wrappers.AbstentionReward`.

    ## Starting State
    A task drawn with ``np_random`` from the env's split (or chosen with ``options={"task_id"|"split"|"category"}``).

    ## Episode End
    Terminated on ``answer`` or ``abstain``; truncated after ``max_turns`` turns (default 10). The final ``info`` has
    ``info["abstention"]``, the episode record (outcome, ``w``, ``tau``, delay, evidence turn, ...).

    ## Arguments
    ``data_seed`` (world and questions; default 0), ``n_pairs`` (question pairs; default 500 = 1,000 questions),
    ``split`` (``train``/``val``/``test``/None), ``max_turns``, ``max_searches`` (10), ``top_k`` (3),
    ``questions_file`` and ``corpus_file`` (AbstentionBench-style records and your own corpus, instead of the
    generated world), ``render_mode`` (``ansi`` or ``human``).

    ## Version History
    * v0: initial release.
    """

    family = "qa"
    verbs = ("search", "answer")
    default_max_turns = 10

    def __init__(self, *, data_seed: int = 0, n_pairs: int = 500, split: str | None = None,
                 max_turns: int | None = None, max_searches: int = 10, top_k: int = 3,
                 questions_file: str | None = None, corpus_file: str | None = None,
                 render_mode: str | None = None) -> None:
        super().__init__(max_turns=max_turns, split=split, render_mode=render_mode)
        if (questions_file is None) != (corpus_file is None):
            raise ValueError("questions_file and corpus_file go together: give both or neither")
        if max_searches < 0 or top_k < 1:
            raise ValueError(f"need max_searches >= 0 and top_k >= 1, got {max_searches} and {top_k}")
        self.data_seed, self.n_pairs = data_seed, n_pairs
        self.questions_file, self.corpus_file = questions_file, corpus_file
        self.max_searches, self.top_k = max_searches, top_k
        self._load_data()
        self._searches_left = max_searches
        self._seen_entities: set[str] = set()
        self._queries: list[str] = []
        self._answer_text: str | None = None
        self._f1, self._em = 0.0, False

    def _load_data(self) -> None:
        if self.questions_file is not None:
            self._dataset = load_abstentionbench(Path(self.questions_file), Path(str(self.corpus_file)))
        else:
            self._dataset = build_dataset(seed=self.data_seed, n_pairs=self.n_pairs)
        self._by_id = {t.task_id: t for t in self._dataset.tasks}
        self._index: SearchIndex | None = None

    @property
    def index(self) -> SearchIndex:
        """The process-wide index over this env's corpus, opened on first use."""
        if self._index is None:
            self._index = SearchIndex.shared(self._dataset.documents())
        return self._index

    def __getstate__(self) -> dict[str, Any]:  # the dataset and index are rebuilt from their arguments
        state = self.__dict__.copy()
        state["_dataset"] = None
        state["_index"] = None
        state["_by_id"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._load_data()

    # ----- family hooks -------------------------------------------------------------------------------------------
    def _tasks(self) -> tuple[Task, ...]:
        return self._dataset.tasks

    def _fingerprint_data(self) -> Any:
        """The corpus the questions are asked against (what makes an answerable question answerable)."""
        return {"corpus": sha256_text(canonical_json([[p.doc_id, p.title, p.text, list(p.entity_ids)]
                                                      for p in self._dataset.passages]))}

    def _task_from_options(self, options: Mapping[str, Any]) -> Task | None:
        """A stored task by id in one lookup: the base class's scan made a reset's time grow with the task's place
        in the list (3 to 23 us over 1,000 tasks), noise a timing agent could correlate with the label in a finite
        set. Unknown ids fall through to the base class, which explains the error."""
        task_id = options.get("task_id")
        return self._by_id.get(task_id) if isinstance(task_id, str) else None

    def _begin(self, task: Task) -> str:
        self._searches_left = self.max_searches
        self._seen_entities = set()
        self._queries = []
        self._answer_text, self._f1, self._em = None, 0.0, False
        return (f"Question: {task.instruction}\n"
                f"Search the knowledge base with search[query] (top {self.top_k} passages, at most "
                f"{self.max_searches} searches), answer with answer[text], or abstain with abstain[reason].")

    def _act(self, action: Action) -> StepResult:
        if action.verb == "search":
            return self._search(action.argument.strip())
        return self._answer(action.argument.strip())

    def _search(self, query: str) -> StepResult:
        if not query:
            return StepResult("Invalid action: search[] needs a query, e.g. search[founder of Orvane Holdings].",
                              invalid=True)
        if self._searches_left <= 0:
            return StepResult(f"Invalid action: no searches left (the limit is {self.max_searches}). "
                              "Answer with answer[text] or abstain with abstain[reason].", invalid=True)
        self._searches_left -= 1
        self._queries.append(query)
        echo = query if len(query) <= MAX_QUERY_ECHO else query[:MAX_QUERY_ECHO] + "..."
        echo = " ".join(echo.split())
        hits = self.index.search(query, k=self.top_k)
        left = f"(searches left: {self._searches_left})"
        if not hits:
            text = f'No passages matched "{echo}" {left}.'
        else:
            parts = [f'Results for "{echo}" {left}:']
            for rank, (pos, _score) in enumerate(hits, start=1):
                p = self._dataset.passages[pos]
                parts.append(f"[{rank}] {p.doc_id} | {p.title}\n{p.text}")
                self._seen_entities.update(p.entity_ids)
            text = "\n".join(parts)
        return StepResult(text, evidence=self._evidence_shown())

    def _evidence_shown(self) -> bool:
        """Whether the results so far show every evidence entity of a search-revealed (w >= 2) task. Every part is
        evaluated for every task, so a search costs the same whatever the label."""
        task = self._task
        if task is None:
            return False
        shown = set(task.payload.get("evidence_entities") or ()) <= self._seen_entities
        return shown & bool(task.should_abstain) & ((task.w or 0) >= 2)  # no short cut on the label

    def _answer(self, text: str) -> StepResult:
        if not text:
            return StepResult("Invalid action: answer[] needs an answer, e.g. answer[1874].", invalid=True)
        task = self._task
        assert task is not None
        references = [] if task.should_abstain else list(task.payload.get("answers", []))
        passed = exact_match(text, references)
        self._answer_text, self._f1, self._em = text, token_f1(text, references), passed
        return StepResult(f"You answered: {text}", terminated=True, task_passed=passed, task_reward=self._f1)

    def _episode_extras(self) -> dict[str, Any]:
        return {"queries": list(self._queries), "answer": self._answer_text, "exact_match": self._em,
                "f1": self._f1}

    def _state_key(self) -> Any:
        return (self._searches_left, tuple(self._queries), tuple(sorted(self._seen_entities)))
