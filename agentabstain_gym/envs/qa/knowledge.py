"""A deterministic knowledge base of fictional entities, the world AbstainQA-v0 asks about.

Everything is invented (names are built from syllables), so no model can answer from memory: the only way to a fact
is the search tool. Some askable attributes are deliberately left unrecorded (the ``answer_unknown`` questions ask
those), and some pairs of entities of one kind deliberately share a full name (the ``underspecified_context``
questions). Vocabulary lives in ``agentabstain_gym/data/qa/*.json``; this module holds only the logic, and uses
only seeded ``random.Random`` instances, so the same seed gives the same world in any process.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path
from types import MappingProxyType
from typing import Any

DATA_DIR = Path(__file__).resolve().parents[2] / "data" / "qa"
KINDS = ("person", "place", "organisation", "work", "compound")
YEAR_MIN, YEAR_MAX = 1640, 1995
Value = str | int
_TRIPLE = re.compile(r"(\w)\1\1")  # 'Marrridge' is not pronounceable


@cache
def load_data(name: str) -> Mapping[str, Any]:
    """One of the family's JSON data files (``names``, ``vocab``, ``schema``, ``passages``, ``questions``)."""
    with open(DATA_DIR / f"{name}.json", encoding="utf-8") as fh:
        return json.load(fh)


def attribute_spec(kind: str, attribute: str) -> Mapping[str, Any]:
    """The schema entry of an askable attribute: its value type, search keyword and question noun."""
    return load_data("schema")["kinds"][kind]["attributes"][attribute]


def askable(kind: str) -> tuple[str, ...]:
    """The attributes a question may ask about an entity of ``kind``."""
    return tuple(load_data("schema")["kinds"][kind]["attributes"])


def with_article(phrase: str) -> str:
    """``phrase`` with ``a`` or ``an`` before it."""
    return ("an " if phrase[:1].lower() in "aeiou" else "a ") + phrase


@dataclass(frozen=True)
class Entity:
    """One fictional entity. ``attributes`` holds descriptive fields and the recorded askable facts (relations as
    entity ids); ``unrecorded`` lists askable attributes the world leaves blank, so no passage can state them."""

    entity_id: str
    kind: str
    name: str
    title: str
    attributes: Mapping[str, Value]
    unrecorded: tuple[str, ...] = ()
    namesake: str | None = None

    @property
    def disambiguator(self) -> str:
        """What tells this entity from a namesake: occupation, region, 'industry form' or form ('' if none)."""
        kind = load_data("schema")["kinds"][self.kind]["disambiguator"]
        if self.kind == "organisation":
            return f"{self.attributes['industry']} {self.attributes['form']}"
        return str(self.attributes.get(kind, "")) if kind else ""

    def recorded(self) -> tuple[str, ...]:
        """The askable attributes this entity has a value for."""
        return tuple(a for a in askable(self.kind) if a in self.attributes)


@dataclass(frozen=True)
class KnowledgeBase:
    """The generated world: entities by id, and the pairs of entities that share a name."""
    entities: Mapping[str, Entity]
    collisions: tuple[tuple[str, str], ...]

    @cached_property
    def _by_kind(self) -> dict[str, tuple[Entity, ...]]:
        return {k: tuple(e for e in self.entities.values() if e.kind == k) for k in KINDS}

    def of_kind(self, kind: str) -> tuple[Entity, ...]:
        """Every entity of one kind, in id order."""
        return self._by_kind[kind]

    def value_text(self, entity: Entity, attribute: str) -> str:
        """The attribute's value as passages and answers write it (names for relations, 1,234 for numbers)."""
        value = entity.attributes[attribute]
        kind = attribute_spec(entity.kind, attribute)["type"]
        if kind in KINDS:
            return self.entities[str(value)].name
        if kind == "number":
            return f"{int(value):,}"
        if kind == "count":
            return load_data("vocab")["number_words"][int(value)]
        return str(value)

    def answers(self, entity: Entity, attribute: str) -> list[str]:
        """Reference answers: the value as written, plus digit and unit forms an agent may reasonably give."""
        spec = attribute_spec(entity.kind, attribute)
        text = self.value_text(entity, attribute)
        out = [text]
        if spec["type"] in ("number", "count"):
            out.append(str(entity.attributes[attribute]))
        out += [form.format(v=text) for form in spec.get("answer_forms", [])]
        return list(dict.fromkeys(out))


class _Names:
    """Unique, pronounceable names per kind, built from the syllables in names.json.

    Search works on tokens, so uniqueness is kept at the token level too: a token that names a place is never also
    a surname, an organisation's stem is never reused, and no two work titles share two words.
    """

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.data = load_data("names")
        self.used: set[str] = set()
        self.owner: dict[str, str] = {}  # lower-case token -> the kind of name it belongs to
        self.title_keys: set[tuple[str, ...]] = set()

    def _claim(self, make: Any, kind: str, exclusive: bool = True) -> str:
        for _ in range(10_000):
            name = make()
            tokens = self._tokens(name, kind)
            if name in self.used or _TRIPLE.search(name.lower()) or any(self.owner.get(t, c) != c or (exclusive and t in self.owner)
                                        for t, c in tokens):
                continue
            if kind == "work":  # no two titles share two words, so a title search finds its own work
                words = sorted({t for t, _ in tokens})
                keys = {(x, y) for i, x in enumerate(words) for y in words[i + 1:]} or {(words[0], "")}
                if keys & self.title_keys:
                    continue
                self.title_keys |= keys
            self.used.add(name)
            for t, c in tokens:
                self.owner[t] = c
            return name
        raise RuntimeError(f"{kind} name space exhausted; add syllables to names.json")

    def _tokens(self, name: str, kind: str) -> list[tuple[str, str]]:
        words = name.lower().split()
        if kind == "person":
            return [(words[0], "first"), (words[-1], "surname")]
        if kind == "organisation":
            return [(words[0], "organisation")]
        if kind == "work":
            return [(w, "work") for w in words if w not in ("the", "and", "of", "a")]
        return [(w, kind) for w in words]

    def person(self, gender: str) -> str:
        d, r = self.data, self.rng
        return self._claim(lambda: r.choice(d["person_first_stems"]) + r.choice(d["person_first_endings"][gender])
                           + " " + r.choice(d["surname_stems"]) + r.choice(d["surname_endings"]), "person",
                           exclusive=False)

    def place(self) -> str:
        d, r = self.data, self.rng
        return self._claim(lambda: r.choice(d["place_stems"]) + r.choice(d["place_middles"])
                           + r.choice(d["place_suffixes"]), "place")

    def region(self) -> str:
        d, r = self.data, self.rng
        return self._claim(lambda: r.choice(d["region_stems"]) + r.choice(d["region_suffixes"]), "region")

    def river(self) -> str:
        d, r = self.data, self.rng
        return self._claim(lambda: r.choice(d["river_stems"]) + r.choice(d["river_endings"]), "river")

    def organisation(self) -> str:
        d, r = self.data, self.rng

        def make() -> str:
            stem = r.choice(d["org_stems"]) + r.choice(d["org_endings"])
            return stem if r.random() < 0.2 else f"{stem} {r.choice(d['org_suffixes'])}"
        return self._claim(make, "organisation")

    def compound(self) -> str:
        d, r = self.data, self.rng
        return self._claim(lambda: (r.choice(d["compound_prefixes"]) + r.choice(d["compound_stems"])
                                    + r.choice(d["compound_middles"]) + r.choice(d["compound_suffixes"])).capitalize(),
                           "compound")

    def work(self) -> str:
        d, r = self.data, self.rng

        def make() -> str:
            noun, noun2 = r.sample(d["work_nouns"], 2)
            return r.choice(d["work_title_patterns"]).format(adj=r.choice(d["work_adjectives"]), noun=noun, noun2=noun2)
        return self._claim(make, "work", exclusive=False)


def _plan(n_entities: int, n_collisions: int) -> dict[str, tuple[int, int]]:
    """(entity count, namesake-pair count) per kind, from the shares in schema.json."""
    kinds = load_data("schema")["kinds"]
    counts = {k: int(round(n_entities * kinds[k]["share"])) for k in KINDS}
    counts["person"] += n_entities - sum(counts.values())
    pairs = {k: int(n_collisions * kinds[k]["collision_share"]) for k in KINDS}
    pairs["person"] += n_collisions - sum(pairs.values())
    return {k: (counts[k], pairs[k]) for k in KINDS}


def generate_kb(seed: int = 0, n_entities: int = 2400, n_collisions: int = 110) -> KnowledgeBase:
    """The world for ``seed``: ``n_entities`` entities over five kinds, ``n_collisions`` namesake pairs."""
    rng = random.Random(f"abstainqa:kb:{seed}")
    names = _Names(rng)
    vocab, schema = load_data("vocab"), load_data("schema")
    plan = _plan(n_entities, n_collisions)
    regions = [names.region() for _ in range(int(vocab["n_regions"]))]
    rivers = [names.river() for _ in range(int(vocab["n_rivers"]))]
    occupations = {g: list(v) for g, v in vocab["occupations"].items()}
    all_occupations = [o for g in occupations.values() for o in g]
    raw: dict[str, dict[str, Any]] = {}  # id -> mutable record, before freezing
    by_kind: dict[str, list[str]] = {k: [] for k in KINDS}

    def new(kind: str, name: str, **attrs: Any) -> str:
        eid = f"E{len(raw) + 1:05d}"
        raw[eid] = {"kind": kind, "name": name, "attrs": attrs}
        by_kind[kind].append(eid)
        return eid

    def names_for(kind: str, count: int, pairs: int, make: Any) -> list[str]:
        """``count`` names where the last ``pairs`` repeat earlier ones (deliberate namesakes)."""
        base = [make() for _ in range(count - pairs)]
        return base + [base[i] for i in rng.sample(range(len(base)), pairs)]

    # places
    forms = vocab["place_forms"]
    form_names, form_weights = list(forms), [forms[f]["share"] for f in forms]
    for name in names_for("place", *plan["place"], names.place):
        form = rng.choices(form_names, form_weights)[0]
        lo, hi = forms[form]["population"]
        pop = int(round(rng.uniform(lo, hi), -1 if hi < 10_000 else -2))
        elev_lo, elev_hi = schema["kinds"]["place"]["attributes"]["elevation"]["range"]
        elev = rng.randint(2, 60) if form == "port" else rng.randint(elev_lo, elev_hi)
        new("place", name, form=form, region=rng.choice(regions), founded_year=rng.randint(900, 1820),
            population=pop, elevation=elev, river=rng.choice(rivers), feature=rng.choice(vocab["place_features"]))
    # people
    person_names: list[tuple[str, str]] = []
    count, pairs = plan["person"]
    for _ in range(count - pairs):
        gender = rng.choice(("female", "male"))
        person_names.append((names.person(gender), gender))
    person_names += [person_names[i] for i in rng.sample(range(len(person_names)), pairs)]
    places = by_kind["place"]
    for name, gender in person_names:
        group = rng.choices(list(occupations), (2, 3, 3, 4))[0]
        born = rng.randint(YEAR_MIN, 1905)
        birthplace = rng.choice([p for p in rng.sample(places, 12) if raw[p]["attrs"]["founded_year"] < born]
                                or places[:1])
        new("person", name, gender=gender, occupation=rng.choice(occupations[group]), group=group,
            birth_year=born, death_year=min(born + rng.randint(28, 94), 1999), birthplace=birthplace,
            children=rng.randint(*schema["kinds"]["person"]["attributes"]["children"]["range"]))
    people = by_kind["person"]

    def alive_adult(year: int, groups: tuple[str, ...] = ()) -> str:
        """A person aged 20 to 70 in ``year`` (of the given occupation groups when possible)."""
        for _ in range(400):
            pid = rng.choice(people)
            a = raw[pid]["attrs"]
            if a["birth_year"] + 20 <= year <= min(a["death_year"], a["birth_year"] + 70) and (
                    not groups or a["group"] in groups):
                return pid
        return min(people, key=lambda p: abs(raw[p]["attrs"]["birth_year"] + 35 - year))

    # organisations
    for name in names_for("organisation", *plan["organisation"], names.organisation):
        industry = rng.choice(vocab["industries"])
        form = vocab["publishing_form"] if industry == "publishing" else rng.choice(vocab["org_forms"])
        founded = rng.randint(1680, 1960)
        lo, hi = schema["kinds"]["organisation"]["attributes"]["employees"]["range"]
        new("organisation", name, industry=industry, form=form, founded_year=founded, founder=alive_adult(founded),
            headquarters=rng.choice(places), employees=int(rng.triangular(lo, hi, lo)))
    orgs = by_kind["organisation"]
    publishers = [o for o in orgs if raw[o]["attrs"]["industry"] in vocab["publishing_industries"]]
    for pid in people:
        a = raw[pid]["attrs"]
        fits = [o for o in rng.sample(orgs, 25) if raw[o]["attrs"]["founded_year"] < a["death_year"] - 5]
        a["employer"] = fits[0] if fits else rng.choice(orgs)
    # works
    work_forms = list(vocab["work_forms"])
    for name in names_for("work", *plan["work"], names.work):
        year = rng.randint(1700, 1990)
        lo, hi = schema["kinds"]["work"]["attributes"]["pages"]["range"]
        form = rng.choice(work_forms)
        pubs = [o for o in publishers if raw[o]["attrs"]["founded_year"] <= year] or publishers
        new("work", name, form=form, genre=rng.choice(vocab["work_genres"]), year=year,
            author=alive_adult(year, ("letters",) if rng.random() < 0.8 else ()), pages=rng.randint(lo, hi),
            publisher=rng.choice(pubs))
    # compounds
    classes = list(vocab["compound_classes"])
    for name in names_for("compound", *plan["compound"], names.compound):
        year = rng.randint(1740, 1990)
        lo, hi = schema["kinds"]["compound"]["attributes"]["melting_point"]["range"]
        new("compound", name, cls=rng.choice(classes), discovery_year=year, discoverer=alive_adult(year, ("science",)),
            melting_point=rng.randint(lo, hi), colour=rng.choice(vocab["colours"]))
    return _freeze(raw, by_kind, rng, all_occupations, regions, vocab)


def _freeze(raw: dict[str, dict[str, Any]], by_kind: dict[str, list[str]], rng: random.Random,
            occupations: list[str], regions: list[str], vocab: Mapping[str, Any]) -> KnowledgeBase:
    """Make namesakes distinguishable, leave some facts unrecorded, and build the immutable entities."""
    schema = load_data("schema")
    first_of: dict[tuple[str, str], str] = {}
    collisions: list[tuple[str, str]] = []
    for kind in KINDS:
        for eid in by_kind[kind]:
            key = (kind, raw[eid]["name"])
            if key in first_of:
                collisions.append((first_of[key], eid))
            else:
                first_of[key] = eid
    publishing = list(vocab["publishing_industries"])
    group_of = {o: g for g, members in vocab["occupations"].items() for o in members}
    fields = {"person": "occupation", "place": "region", "organisation": "industry", "work": "form"}
    namesake_of: dict[str, str] = {}
    for a, b in collisions:
        field = fields[raw[a]["kind"]]
        attrs, taken = raw[b]["attrs"], raw[a]["attrs"][field]
        if attrs[field] == taken:
            if field == "occupation":
                options = occupations
            elif field == "region":
                options = regions
            elif field == "form":
                options = list(vocab["work_forms"])
            else:  # a publisher stays a publisher, since works may already name it
                options = publishing if taken in publishing else [i for i in vocab["industries"] if i not in publishing]
            attrs[field] = rng.choice([o for o in options if o != taken])
            if field == "industry":
                attrs["form"] = (vocab["publishing_form"] if attrs[field] == "publishing"
                                 else rng.choice(vocab["org_forms"]))
            if field == "occupation":
                attrs["group"] = group_of[attrs[field]]
        namesake_of[a], namesake_of[b] = b, a
    entities: dict[str, Entity] = {}
    rate, minimum = float(schema["unrecorded_rate"]), int(schema["min_recorded"])
    for eid, rec in raw.items():
        kind, attrs = rec["kind"], dict(rec["attrs"])
        unrecorded = [a for a in askable(kind) if rng.random() < rate]
        if len(askable(kind)) - len(unrecorded) < minimum:
            unrecorded = unrecorded[: len(askable(kind)) - minimum]
        for a in unrecorded:
            del attrs[a]
        entity = Entity(eid, kind, rec["name"], rec["name"], MappingProxyType(attrs), tuple(unrecorded),
                        namesake_of.get(eid))
        if entity.namesake:
            entity = Entity(eid, kind, rec["name"], f"{rec['name']} ({entity.disambiguator})", entity.attributes,
                            entity.unrecorded, entity.namesake)
        entities[eid] = entity
    return KnowledgeBase(MappingProxyType(entities), tuple(collisions))
