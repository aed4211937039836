"""Question pairs for AbstainQA-v0: each abstain question is one change away from an answerable twin.

For every pair an entity is drawn, an answerable question about one of its recorded facts is written, and the twin
changes ONE thing: the attribute asked becomes one the world leaves unrecorded (``answer_unknown``), a date in the
question is made to clash with another or the asked property becomes one the named kind cannot have
(``false_premise``), a judgement is asked instead of a fact (``subjective``), or the attribute noun becomes a vague one
(``underspecified_intent``). ``underspecified_context`` is context-based, so its change lies in the world, not in the
wording: both twins ask the same question with the same template, naming the entity the same way (bare name, no
qualifier); the abstain twin names an entity that shares its name with another one of its kind, the answerable twin
a look-alike entity of the same kind whose name is unique (so the two questions differ only in the name, and only a
search tells them apart). Templates are data (``questions.json``); only seeded ``random.Random`` instances are used.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agentabstain_gym.core.task import Task
from agentabstain_gym.envs.qa.corpus import Corpus, entity_fields
from agentabstain_gym.envs.qa.knowledge import Entity, KnowledgeBase, attribute_spec, load_data, with_article

CATEGORIES = ("answer_unknown", "false_premise", "subjective", "underspecified_context", "underspecified_intent")
#: w per category. underspecified_context is 2 although the question reads as well-posed: nothing in the question shows that two entities share
#: the name; the first search (which lists both namesakes) is what reveals it.
CATEGORY_W = {"answer_unknown": 2, "false_premise": 1, "subjective": 1, "underspecified_context": 2,
              "underspecified_intent": 1}
#: Kinds tried in turn for each category (collisions exist only for the first four kinds; compounds are unique).
_KIND_CYCLE = ("person", "place", "organisation", "work", "compound", "person", "organisation", "work")
_CONTEXT_CYCLE = ("person", "place", "person", "organisation", "work", "person")
GIVEAWAY_WORDS = ("ambiguous", "ambiguity", "unknown", "impossible", "abstain", "unanswerable", "contradict",
                  "contradiction", "contradictory", "unclear", "vague", "subjective", "opinion", "false", "premise",
                  "trick", "uncertain", "cannot", "can't", "unsure", "disambiguation", "nonsense", "not recorded",
                  "no record", "undefined", "answerable")


@dataclass
class Side:
    """One side of a pair before ids, splits and order are assigned."""

    question: str
    category: str
    evidence: str
    payload: dict[str, Any] = field(default_factory=dict)

    @property
    def should_abstain(self) -> bool:
        """Whether this side is an abstain question (any category but ``answerable``)."""
        return self.category != "answerable"


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def possessive(name: str) -> str:
    """``name``'s, or ``name``' after a final s."""
    return name + ("'" if name.endswith("s") else "'s")


class _Writer:
    """Writes question pairs over one knowledge base; every choice comes from one seeded ``random.Random``."""

    def __init__(self, kb: KnowledgeBase, corpus: Corpus, rng: random.Random) -> None:
        self.kb, self.rng = kb, rng
        self.q = load_data("questions")
        self.used: set[str] = set()
        self.stating: dict[tuple[str, str], list[str]] = {}
        for doc_id, facts in corpus.facts.items():
            for fact in facts:
                self.stating.setdefault(fact, []).append(doc_id)

    # ----- phrasing ------------------------------------------------------------------------------------------------
    def fields(self, e: Entity) -> dict[str, str]:
        f = entity_fields(self.kb, e)
        _subject, pos = self.pronouns(e)
        f.update(N=e.name, Np=possessive(e.name), pos=pos)
        if e.kind == "person":
            f["a_occupation"] = with_article(f["occupation"])
        return f

    def pronouns(self, e: Entity) -> tuple[str, str]:
        p = self.q["pronouns"][e.kind]
        subject, pos = p[str(e.attributes["gender"])] if e.kind == "person" else p
        return subject, pos

    def kind_phrase(self, e: Entity) -> str:
        return self.q["kind_phrase"][e.kind].format(**entity_fields(self.kb, e))

    def noun(self, e: Entity, attribute: str) -> str:
        return str(attribute_spec(e.kind, attribute)["noun"])

    def ask(self, e: Entity, attribute: str, n: str, np: str | None = None, template: str | None = None) -> str:
        """A question about one attribute, naming the entity as ``n``."""
        template = template or self.rng.choice(self.q["attribute"][e.kind][attribute])
        return _cap(template.format(N=n, Np=np if np is not None else possessive(n)))

    def answerable(self, e: Entity, attribute: str, question: str) -> Side:
        docs = self.stating.get((e.entity_id, attribute), [])
        value = self.kb.value_text(e, attribute)
        evidence = f"{', '.join(docs)} state{'s' if len(docs) == 1 else ''} that the {self.noun(e, attribute)} " \
                   f"of {e.name} is {value}."
        return Side(question, "answerable", evidence, {
            "answers": self.kb.answers(e, attribute), "entity_ids": [e.entity_id], "attribute": attribute,
            "evidence_entities": [], "name": e.name})

    def abstain(self, category: str, question: str, evidence: str, entity_ids: list[str], attribute: str,
                name: str, evidence_entities: list[str] | None = None) -> Side:
        return Side(question, category, evidence, {
            "answers": [], "entity_ids": entity_ids, "attribute": attribute,
            "evidence_entities": evidence_entities or [], "name": name})

    def pick_recorded(self, e: Entity, among: tuple[str, ...] | list[str] | None = None) -> str | None:
        options = [a for a in e.recorded() if among is None or a in among]
        return self.rng.choice(options) if options else None

    # ----- one builder per category ----------------------------------------------------------------------------------
    def answer_unknown(self, e: Entity) -> tuple[Side, Side] | None:
        if not e.unrecorded or not e.recorded():
            return None
        known, missing = self.pick_recorded(e), self.rng.choice(e.unrecorded)
        assert known is not None
        index = self.rng.randrange(100)
        t_known = self.q["attribute"][e.kind][known]
        t_missing = self.q["attribute"][e.kind][missing]
        a = self.answerable(e, known, self.ask(e, known, e.name, template=t_known[index % len(t_known)]))
        b = self.abstain("answer_unknown", self.ask(e, missing, e.name, template=t_missing[index % len(t_missing)]),
                         f"Passages about {e.name} exist, but none gives the {self.noun(e, missing)} of {e.name}.",
                         [e.entity_id], missing, e.name, [e.entity_id])
        return a, b

    def false_premise(self, e: Entity) -> tuple[Side, Side] | None:
        if e.kind in self.q["contradiction"] and self.rng.random() < 0.5:
            pair = self.contradiction(e)
            if pair is not None:
                return pair
        attribute = self.pick_recorded(e)
        if attribute is None:
            return None
        frame, k = self.rng.choice(self.q["noun_frames"]), self.kind_phrase(e)
        wrong = self.rng.choice(self.q["category_error_nouns"][e.kind])
        a = self.answerable(e, attribute, frame.format(noun=self.noun(e, attribute), K=k))
        b = self.abstain("false_premise", frame.format(noun=wrong, K=k),
                         f"The question asks the {wrong} of {k}, a property that kind of thing does not have.",
                         [e.entity_id], attribute, e.name)
        return a, b

    def _clause_years(self, e: Entity) -> tuple[int, int] | None:
        """(birth year, event year) a context sentence states truly, or None if the world lacks them."""
        a = e.attributes
        if e.kind == "person":
            return (int(a["birth_year"]), int(a["death_year"])) if "birth_year" in a and "death_year" in a else None
        relation, event = {"organisation": ("founder", "founded_year"), "work": ("author", "year"),
                           "compound": ("discoverer", "discovery_year")}[e.kind]
        if relation not in a or event not in a:
            return None
        person = self.kb.entities[str(a[relation])]
        born = person.attributes.get("birth_year")
        return (int(born), int(a[event])) if born is not None and int(born) < int(a[event]) else None

    def contradiction(self, e: Entity) -> tuple[Side, Side] | None:
        spec = self.q["contradiction"][e.kind]
        years, attribute = self._clause_years(e), self.pick_recorded(e, spec["asks"])
        if years is None or attribute is None:
            return None
        born, event = years
        clause = self.rng.choice(spec["clauses"])
        subject, pos = self.pronouns(e)
        question = self.ask(e, attribute, subject, pos,
                            template=self.rng.choice(self.q["pronoun_attribute"][e.kind][attribute]))
        if e.kind == "person":  # the death year moves before the birth year
            fake_born, fake_event = born, born - self.rng.randint(8, 60)
            clash = f"{e.name} is said to die in {fake_event}, before being born in {fake_born}"
        else:  # the person behind the event is born after it
            fake_born, fake_event = event + self.rng.randint(5, 40), event
            clash = f"what happened in {fake_event} is credited to someone born later, in {fake_born}"
        a = self.answerable(e, attribute, f"{clause.format(N=e.name, a=born, b=event)} {question}")
        b = self.abstain("false_premise", f"{clause.format(N=e.name, a=fake_born, b=fake_event)} {question}",
                         f"The question's own dates cannot both hold: {clash}.",
                         [e.entity_id], attribute, e.name)
        return a, b

    def subjective(self, e: Entity) -> tuple[Side, Side] | None:
        attribute = self.pick_recorded(e)
        if attribute is None:
            return None
        a = self.answerable(e, attribute, self.ask(e, attribute, e.name))
        template = self.rng.choice(self.q["subjective"][e.kind])
        b = self.abstain("subjective", _cap(template.format(**self.fields(e))),
                         f"The question asks for a judgement about {e.name}, which no passage can settle.",
                         [e.entity_id], attribute, e.name)
        return a, b

    def underspecified_context(self, e: Entity) -> tuple[Side, Side] | None:
        """``e`` shares its name with ``other``; the answerable twin asks the same question, with the same template,
        about a look-alike: an unused entity of the same kind whose name is unique and which records the attribute.
        No qualifier on either side, so the wording cannot tell the twins apart (a qualifier the abstain side lacks
        made them separable by a word-count classifier)."""
        if e.namesake is None:
            return None
        other = self.kb.entities[e.namesake]
        options = [x for x in e.recorded() if x in other.attributes
                   and self.kb.value_text(e, x) != self.kb.value_text(other, x)]
        if not options:
            return None
        attribute = self.rng.choice(options)
        look_alikes = [x for x in self.kb.of_kind(e.kind) if x.namesake is None and x.entity_id not in self.used
                       and attribute in x.attributes]
        if not look_alikes:
            return None
        twin = self.rng.choice(look_alikes)
        template = self.rng.choice(self.q["attribute"][e.kind][attribute])
        a = self.answerable(twin, attribute, self.ask(twin, attribute, twin.name, template=template))
        b = self.abstain("underspecified_context", self.ask(e, attribute, e.name, template=template),
                         f"Two {self.q['kind_plurals'][e.kind]} are called {e.name} ({e.disambiguator}; "
                         f"{other.disambiguator}) and the question does not say which.",
                         [e.entity_id, other.entity_id], attribute, e.name, [e.entity_id, other.entity_id])
        return a, b

    def underspecified_intent(self, e: Entity) -> tuple[Side, Side] | None:
        attribute = self.pick_recorded(e)
        if attribute is None:
            return None
        frame = self.rng.choice(self.q["intent_frames"])
        vague = self.rng.choice(self.q["vague_nouns"]["any"] + self.q["vague_nouns"].get(e.kind, []))
        n, np = e.name, possessive(e.name)
        a = self.answerable(e, attribute, _cap(frame.format(X=self.noun(e, attribute), N=n, Np=np)))
        b = self.abstain("underspecified_intent", _cap(frame.format(X=vague, N=n, Np=np)),
                         f"The question asks for '{vague}' about {e.name} without saying which fact it means.",
                         [e.entity_id], attribute, e.name)
        return a, b

    # ----- drawing entities --------------------------------------------------------------------------------------
    def pair(self, category: str, index: int) -> tuple[Side, Side]:
        builder: Callable[[Entity], tuple[Side, Side] | None] = getattr(self, category)
        cycle = _CONTEXT_CYCLE if category == "underspecified_context" else _KIND_CYCLE
        for attempt in range(len(cycle) * 4):
            kind = cycle[(index + attempt) % len(cycle)]
            pool = [e for e in self.kb.of_kind(kind) if e.entity_id not in self.used
                    and (e.namesake is not None) == (category == "underspecified_context")
                    and (e.namesake is None or e.namesake not in self.used)]
            for e in self.rng.sample(pool, min(len(pool), 40)):
                made = builder(e)
                if made is not None:
                    self.used.update(x for x in (e.entity_id, e.namesake) if x)
                    self.used.update(made[0].payload["entity_ids"])  # a look-alike twin is used up too
                    return made
        raise RuntimeError(f"no entity left for a {category} pair; raise n_entities or n_collisions")


def _digest(*parts: object) -> str:
    return hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()[:10]


def make_tasks(kb: KnowledgeBase, corpus: Corpus, seed: int = 0, n_pairs: int = 500,
               split_shares: Mapping[str, float] | None = None) -> tuple[Task, ...]:
    """``2 * n_pairs`` tasks in a seeded shuffled order; categories rotate across pairs, splits are per pair."""
    rng = random.Random(f"abstainqa:questions:{seed}")
    writer = _Writer(kb, corpus, rng)
    shares = dict(split_shares or {"train": 0.6, "val": 0.2, "test": 0.2})
    pairs = [writer.pair(CATEGORIES[i % len(CATEGORIES)], i) for i in range(n_pairs)]
    split_of: list[str] = [""] * n_pairs
    for category in CATEGORIES:
        members = [i for i in range(n_pairs) if pairs[i][1].category == category]
        rng.shuffle(members)
        n_train, n_val = round(shares["train"] * len(members)), round(shares["val"] * len(members))
        for rank, i in enumerate(members):
            split_of[i] = "train" if rank < n_train else "val" if rank < n_train + n_val else "test"
    pair_order = list(range(n_pairs))
    rng.shuffle(pair_order)
    pair_ids = {i: f"qp-{_digest('abstainqa', seed, 'pair', k)}" for k, i in enumerate(pair_order)}
    sides = [(i, side) for i in range(n_pairs) for side in pairs[i]]
    rng.shuffle(sides)
    tasks = []
    for position, (i, side) in enumerate(sides):
        w = CATEGORY_W.get(side.category) if side.should_abstain else None
        tasks.append(Task(task_id=f"qa-{_digest('abstainqa', seed, 'task', position)}", family="qa",
                          instruction=side.question, should_abstain=side.should_abstain, category=side.category,
                          split=split_of[i], pair_id=pair_ids[i], w=w, evidence=side.evidence,
                          payload=side.payload))
    if len({t.task_id for t in tasks}) != len(tasks):
        raise RuntimeError("task id collision; change the digest length")
    return tuple(tasks)
