"""Renders the knowledge base into the passage corpus an AbstainQA-v0 agent searches.

Each entity gets several fact passages (each names it and states two or three facts in varied sentences, one of
them a restatement), and the corpus adds distractors that name entities without stating what questions ask:
incidental mentions, province / trade / genre / class / occupation overviews, surname lists and namesake
(disambiguation) pages. The sentence templates are data (``passages.json``); :func:`fact_patterns` compiles the same
templates into regular expressions, so the solver and the tests read facts with exactly the renderer's patterns.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from types import MappingProxyType
from typing import Any

from agentabstain_gym.envs.qa.knowledge import (
    KINDS,
    Entity,
    KnowledgeBase,
    askable,
    attribute_spec,
    load_data,
    with_article,
)


@dataclass(frozen=True)
class Passage:
    """One searchable passage; ``entity_ids`` are the entities it is about or names."""

    doc_id: str
    title: str
    text: str
    entity_ids: tuple[str, ...]


@dataclass(frozen=True)
class Corpus:
    """Passages in doc-id order, and for each doc id the (entity id, attribute) facts it states."""

    passages: tuple[Passage, ...]
    facts: Mapping[str, tuple[tuple[str, str], ...]]


# ----- patterns shared with the solver and the tests -------------------------------------------------------------
_NAME = r"[A-Z][\w'\-]*(?:\s(?:and the\s|and\s|of\s|the\s)?[A-Z][\w'\-]*)*"
_REFERENCE = r"[Ss]he|[Hh]e|[Ii]t|[Tt]he [a-z]+(?: [a-z]+)?"
VALUE_PATTERNS: Mapping[str, str] = MappingProxyType({
    "year": r"\d{3,4}",
    "number": r"\d{1,3}(?:,\d{3})*",
    "count": "|".join(load_data("vocab")["number_words"]),
    "colour": r"[a-z]+(?:[ \-][a-z]+)?",
    **{kind: _NAME for kind in (*KINDS, "river")},
})
SUBJECT_PATTERN = f"{_NAME}|{_REFERENCE}"
_SENTENCE_END = re.compile(r"(?<=\.)\s+")
_SLOT = re.compile(r"\{(S|V)\}")


def compile_template(template: str, value_type: str) -> re.Pattern[str]:
    """A template such as ``"{S} was born in {V}."`` as a full-sentence regex with groups ``S`` and ``V``."""
    parts, pos = [], 0
    for m in _SLOT.finditer(template):
        parts.append(re.escape(template[pos:m.start()]))
        body = SUBJECT_PATTERN if m.group(1) == "S" else VALUE_PATTERNS[value_type]
        parts.append(f"(?P<{m.group(1)}>{body})")
        pos = m.end()
    parts.append(re.escape(template[pos:]))
    return re.compile("".join(parts))


@cache
def fact_patterns(kind: str, attribute: str) -> tuple[re.Pattern[str], ...]:
    """The compiled fact templates of one attribute of one kind."""
    value_type = attribute_spec(kind, attribute)["type"]
    return tuple(compile_template(t, value_type) for t in load_data("passages")["facts"][kind][attribute])


def sentences(text: str) -> list[str]:
    """The sentences of a passage."""
    return [s for s in _SENTENCE_END.split(text) if s]


def is_reference(subject: str) -> bool:
    """True when a sentence subject is a pronoun or 'the <kind word>' rather than a name."""
    return re.fullmatch(_REFERENCE, subject) is not None


def stated_values(passage_title: str, text: str, name: str, kind: str, attribute: str,
                  own_titles: Iterable[str] = ()) -> list[str]:
    """Values of ``attribute`` that ``text`` states about the entity called ``name``.

    A sentence counts when its subject is the name, or a reference ('she', 'the town') inside one of the entity's
    own passages (``passage_title`` in ``own_titles``, or equal to the name).
    """
    own = passage_title == name or passage_title in set(own_titles)
    found = []
    for sentence in sentences(text):
        for pattern in fact_patterns(kind, attribute):
            m = pattern.fullmatch(sentence)
            if m and (m.group("S") == name or (own and is_reference(m.group("S")))):
                found.append(m.group("V"))
    return found


# ----- rendering -------------------------------------------------------------------------------------------------
def entity_fields(kb: KnowledgeBase, e: Entity) -> dict[str, str]:
    """Descriptive words the templates may use for an entity (its kind noun, region, genre...)."""
    a, vocab = e.attributes, load_data("vocab")
    fields: dict[str, str] = {"name": e.name}
    if e.kind == "person":
        fields.update(occupation=str(a["occupation"]), desc=with_article(str(a["occupation"])),
                      a_occupation=with_article(str(a["occupation"])))
    elif e.kind == "place":
        fields.update(form=str(a["form"]), desc=with_article(str(a["form"])), region=str(a["region"]),
                      feature=str(a["feature"]))
    elif e.kind == "organisation":
        fields.update(form=str(a["form"]), industry=str(a["industry"]),
                      desc=with_article(f"{a['industry']} {a['form']}"))
    elif e.kind == "work":
        fields.update(form=str(a["form"]), forms=vocab["work_forms"][a["form"]], genre=str(a["genre"]),
                      desc=with_article(f"{a['genre']} {a['form']}"))
    else:
        fields.update(cls=str(a["cls"]), classes=vocab["compound_classes"][a["cls"]], desc=with_article(str(a["cls"])))
    return fields


def _cap(sentence: str) -> str:
    return sentence[:1].upper() + sentence[1:]


def name_list(names: list[str]) -> str:
    """Names joined as English: ``A``, ``A and B``, ``A, B and C``."""
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


class _Renderer:
    """Builds the passages of one corpus; every choice is drawn from one seeded ``random.Random``."""

    def __init__(self, kb: KnowledgeBase, rng: random.Random) -> None:
        self.kb, self.rng = kb, rng
        self.t = load_data("passages")
        self.vocab = load_data("vocab")
        self.drafts: list[tuple[str, str, tuple[str, ...], tuple[tuple[str, str], ...]]] = []

    def add(self, title: str, text: str, entity_ids: Iterable[str], facts: Iterable[tuple[str, str]] = ()) -> None:
        self.drafts.append((title, text, tuple(dict.fromkeys(entity_ids)), tuple(facts)))

    def reference(self, e: Entity, fields: Mapping[str, str], inner: bool) -> str:
        """'she', 'it', 'the town'...: mid-sentence references come from ``inner_references`` (never 'it')."""
        refs = self.t["inner_references" if inner else "references"][e.kind]
        options = refs[str(e.attributes["gender"])] if e.kind == "person" else refs
        return self.rng.choice(options).format(**fields)

    def fact_sentence(self, e: Entity, attribute: str, first: bool, fields: Mapping[str, str],
                      avoid: list[str] | tuple[str, ...] = ()) -> tuple[str, str, list[str]]:
        """A sentence stating one fact (and the template used, so a restatement can pick another one).

        Only the first sentence of a passage names the entity; later ones refer to it, so every own passage
        names it the same number of times and the fact's keyword decides which passage a search ranks first.
        """
        options = [t for t in self.t["facts"][e.kind][attribute] if t not in avoid] or self.t["facts"][e.kind][attribute]
        template = self.rng.choice(options)
        subject = e.name if first else self.reference(e, fields, inner=not template.startswith("{S}"))
        value = self.kb.value_text(e, attribute)
        named = [str(e.attributes[attribute])] if attribute_spec(e.kind, attribute)["type"] in KINDS else []
        return _cap(template.format(S=subject, V=value)), template, named

    def entity_passages(self, e: Entity) -> None:
        """Two facts per passage: the intro (what the entity is) + one fact, then two facts at a time; an odd fact
        out and, if that made fewer than three passages, a further passage are filled with facts restated in
        other words.

        Own passages all name the entity exactly twice (title and first sentence), are of similar length and only
        the first describes it, and no other passage names it more than once, so name + keyword ranks the stating
        passage in the top three."""
        rng, fields = self.rng, entity_fields(self.kb, e)
        facts = list(e.recorded())
        rng.shuffle(facts)
        chunks: list[list[str]] = [["intro", *facts[:1]]]
        chunks += [facts[i:i + 2] for i in range(1, len(facts), 2)]
        restated = [f for f in rng.sample(facts, len(facts)) if f not in chunks[-1]]
        if len(chunks[-1]) == 1:
            chunks[-1].append(restated.pop(0))
        if len(chunks) < 3:
            chunks.append(rng.sample(facts, 2))
        used: dict[str, list[str]] = {}
        for chunk in chunks:
            parts, named, stated = [], [e.entity_id], []
            for i, item in enumerate(chunk):
                if item == "intro":
                    parts.append(_cap(rng.choice(self.t["intro"][e.kind]).format(S=e.name, **fields)))
                    continue
                sentence, template, extra = self.fact_sentence(e, item, i == 0, fields, avoid=used.get(item, []))
                used.setdefault(item, []).append(template)
                parts.append(sentence)
                named += extra
                stated.append((e.entity_id, item))
            self.add(e.title, " ".join(parts), named, stated)

    def mentions(self, count: int) -> None:
        pools = {"P": "person", "O": "organisation", "L": "place", "W": "work", "C": "compound"}
        by_kind = {k: self.kb.of_kind(k) for k in KINDS}
        for _ in range(count):
            spec = self.rng.choice(self.t["mentions"])
            slots = sorted(set(re.findall(r"\{([POLWC]\d)\}", spec["title"] + spec["text"])))
            chosen: dict[str, Entity] = {}
            for slot in slots:
                pool = by_kind[pools[slot[0]]]
                pick = self.rng.choice(pool)
                while any(pick.name == c.name for c in chosen.values()):
                    pick = self.rng.choice(pool)
                chosen[slot] = pick
            values = {slot: e.name for slot, e in chosen.items()}
            values["event"] = self.rng.choice(self.vocab["events"])
            self.add(_cap(spec["title"].format(**values)), spec["text"].format(**values),
                     [chosen[s].entity_id for s in slots])

    def listing(self, groups: Mapping[str, list[Entity]], texts: list[str], titles: list[str],
                fields_of: Any, label: Any = None) -> None:
        """Overview passages naming the members of each group, three to six per passage."""
        for key, members in groups.items():
            members = list(members)
            self.rng.shuffle(members)
            names_seen: list[Entity] = []
            for e in members:  # a listing names each name once
                if all(e.name != m.name for m in names_seen):
                    names_seen.append(e)
            for n, start in enumerate(range(0, len(names_seen), 6)):
                chunk = names_seen[start:start + 6]
                if len(chunk) < 2 and n > 0:
                    continue
                fields = dict(fields_of(key, chunk))
                fields["list"] = name_list([(label or (lambda m: m.name))(m) for m in chunk])
                text = texts[min(n, len(texts) - 1)].format(**fields)
                self.add(_cap(titles[min(n, len(titles) - 1)].format(**fields)), text, [m.entity_id for m in chunk])

    def overviews(self) -> None:
        o, kb, vocab, rng = self.t["overviews"], self.kb, self.vocab, self.rng

        def group(kind: str, key: Any) -> dict[str, list[Entity]]:
            out: dict[str, list[Entity]] = {}
            for e in kb.of_kind(kind):
                out.setdefault(key(e), []).append(e)
            return dict(sorted(out.items()))

        features = vocab["place_features"]
        self.listing(group("place", lambda e: e.attributes["region"]), o["region"], o["region_title"],
                     lambda k, _c: {"region": k, "feature": rng.choice(features), "feature2": rng.choice(features)})
        self.listing(group("organisation", lambda e: e.attributes["industry"]), o["industry"], o["industry_title"],
                     lambda k, _c: {"industry": k})

        def work_fields(key: str, _c: Any) -> dict[str, str]:
            genre, form = key.split("|")
            return {"genre": genre, "Genre": genre.capitalize(), "forms": vocab["work_forms"][form]}
        self.listing(group("work", lambda e: f"{e.attributes['genre']}|{e.attributes['form']}"), o["works"],
                     o["works_title"], work_fields)
        self.listing(group("compound", lambda e: e.attributes["cls"]), o["compounds"], o["compounds_title"],
                     lambda k, _c: {"classes": vocab["compound_classes"][k],
                                    "Classes": vocab["compound_classes"][k].capitalize()})

        def occupation_fields(key: str, _c: Any) -> dict[str, str]:
            plural = vocab["occupation_plurals"].get(key, key + "s")
            return {"occupations": plural, "Occupations": plural.capitalize()}
        self.listing(group("person", lambda e: e.attributes["occupation"]), o["occupation"], o["occupation_title"],
                     occupation_fields)
        surnames = {k: v for k, v in group("person", lambda e: e.name.split()[-1]).items()
                    if len({e.name for e in v}) >= 2}
        self.listing(surnames, o["surname"], [o["surname_title"]], lambda k, _c: {"surname": k},
                     label=lambda m: m.name.split()[0])

    def disambiguation(self) -> None:
        d = self.t["disambiguation"]
        for a_id, b_id in self.kb.collisions:
            a, b = self.kb.entities[a_id], self.kb.entities[b_id]
            pair = [a, b] if self.rng.random() < 0.5 else [b, a]
            text = d[a.kind].format(name=a.name, d1=pair[0].disambiguator, d2=pair[1].disambiguator)
            self.add(d["title"].format(name=a.name), text, [pair[0].entity_id, pair[1].entity_id])


def render_corpus(kb: KnowledgeBase, seed: int = 0, mentions_per_entity: float = 1.0) -> Corpus:
    """All passages of the world for ``seed``, shuffled, with doc ids ``P000000``... in order."""
    rng = random.Random(f"abstainqa:corpus:{seed}")
    r = _Renderer(kb, rng)
    for e in kb.entities.values():
        r.entity_passages(e)
    r.mentions(int(round(mentions_per_entity * len(kb.entities))))
    r.overviews()
    r.disambiguation()
    rng.shuffle(r.drafts)
    passages, facts = [], {}
    for i, (title, text, ids, stated) in enumerate(r.drafts):
        doc_id = f"P{i:06d}"
        passages.append(Passage(doc_id, title, text, ids))
        if stated:
            facts[doc_id] = stated
    return Corpus(tuple(passages), MappingProxyType(facts))


def attribute_keywords() -> dict[str, dict[str, str]]:
    """kind -> attribute -> the search keyword every stating sentence contains."""
    return {k: {a: attribute_spec(k, a)["keyword"] for a in askable(k)} for k in KINDS}
