"""The scripted agent of AbstainQA-v0: searches, reads passages with the family's own sentence patterns, answers.

It sees only what any agent sees (the observation string and ``info``), never the task's label or payload. It
abstains at once on cues it can read in the question (judgement words, a question with no specific fact in it, a
property the named kind of thing cannot have, dates that clash), and after searching when the entity's passages do
not state the fact or two entities share the name and the question does not say which. It is a good baseline, not
an oracle: its cue lists are its own and miss some wordings, and it gives up after a few searches.
"""

from __future__ import annotations

import re
from typing import Any

from agentabstain_gym.envs.qa.corpus import fact_patterns, is_reference, sentences
from agentabstain_gym.envs.qa.knowledge import KINDS, askable, attribute_spec, load_data

#: Question cue -> attribute, first match wins (read on the question's last sentence).
_CUES: tuple[tuple[str, str], ...] = (
    (r"birthplace|native|place of birth|where was .* born|in which (?:place|town) was .* born", "birthplace"),
    (r"\bborn\b|\bbirth\b", "birth_year"),
    (r"\bdie\b|\bdied\b|\bdeath\b", "death_year"),
    (r"\bemployer\b|\bemployed\b|\bwork for\b|\bdid .* work\b", "employer"),
    (r"number of employees|\bemployees\b|\bemploy\b|\bstaff\b|\bworkforce\b", "employees"),
    (r"\bchildren\b|\bkids\b", "children"),
    (r"\bfounder\b|\bwho founded\b|\bperson founded\b|\bfounded by\b", "founder"),
    (r"\bfounded\b|\bfounding\b|\bestablished\b|\bsettled\b", "founded_year"),
    (r"headquarter", "headquarters"),
    (r"population|how many people live|inhabitants", "population"),
    (r"elevation|above sea level|altitude", "elevation"),
    (r"\briver\b", "river"),
    (r"\bpublisher\b|\bwho published\b|\bbrought .*out\b|\bbrought out\b", "publisher"),
    (r"\bpublished\b|\bpublication\b|\bcome out\b|\bcame out\b", "year"),
    (r"\bauthor\b|\bwho wrote\b|\bwriter\b|\bwritten by\b", "author"),
    (r"\bpages?\b|page count", "pages"),
    (r"\bdiscoverer\b|\bwho discovered\b|\bresearcher discovered\b", "discoverer"),
    (r"discover", "discovery_year"),
    (r"\bmelt", "melting_point"),
    (r"boiling point", "boiling_point"),
    (r"chemical formula", "formula"),
    (r"\bcolou?r\b", "colour"),
)
#: Properties no entity of this world records but that only a compound could have.
_COMPOUND_ONLY = ("boiling_point", "formula")
#: Generic judgement words (superlatives of taste, praise, blame), not a copy of the generator's templates.
_SUBJECTIVE = re.compile(
    r"\b(best|finest|greatest|worst|most \w+|overrated|underrated|enjoyable|enjoy|lovel(?:y|ier|iest)|beautiful"
    r"|prettiest|charming|pleasant|admirable|deserve[sd]?|worth|favourite|impressive|fascinating|interesting"
    r"|should i|would you recommend)\b", re.IGNORECASE)
_CLASH = (
    (re.compile(r"from (\d{3,4}) to (\d{3,4})"), "order"),
    (re.compile(r"born in (\d{3,4}) and died in (\d{3,4})"), "order"),
    (re.compile(r"in (\d{3,4})(?:,| by)[^.?]*?born in (\d{3,4})"), "event_then_birth"),
)
_RESULT = re.compile(r"^\[\d+\] (P\d+) \| (.*)$")
_TITLE = re.compile(r"^(.*?)(?: \(([^()]*)\))?$")
_CAPITALISED = re.compile(r"[A-Z][\w'\-]*(?:\s(?:and the\s|and\s|of\s|the\s)?[A-Z][\w'\-]*)*")


def _attribute_kinds() -> dict[str, tuple[str, ...]]:
    out: dict[str, list[str]] = {}
    for kind in KINDS:
        for attribute in askable(kind):
            out.setdefault(attribute, []).append(kind)
    out.update({a: ["compound"] for a in _COMPOUND_ONLY})
    return {a: tuple(k) for a, k in out.items()}


def _kind_phrases() -> list[tuple[str, re.Pattern[str]]]:
    """Regexes that find 'the sculptor X', 'the town of X', 'the shipping company X'... in a question."""
    vocab = load_data("vocab")
    occupations = "|".join(o for group in vocab["occupations"].values() for o in group)
    orgs = "|".join([*vocab["org_forms"], vocab["publishing_form"]])
    works = "|".join(vocab["work_forms"])
    places = "|".join(vocab["place_forms"])
    return [("person", re.compile(rf"\bthe (?:{occupations}) [A-Z]")),
            ("place", re.compile(rf"\bthe (?:{places}) of [A-Z]")),
            ("organisation", re.compile(rf"\bthe (?:[a-z]+ )?(?:{orgs}) [A-Z]")),
            ("work", re.compile(rf"\bthe (?:{works}) [A-Z]")),
            ("compound", re.compile(r"\bthe compound [A-Z]"))]


class HeuristicQASolver:
    """Search, read, answer; abstain on request cues and on what the search shows (``abstain=False``: never)."""

    name = "heuristic"

    def __init__(self, abstain: bool = True, max_searches: int = 3) -> None:
        self.abstain_enabled = abstain
        self.max_searches = max_searches
        self._attribute_kinds = _attribute_kinds()
        self._kinds = _kind_phrases()
        vocab = load_data("vocab")
        forms = [*vocab["org_forms"], vocab["publishing_form"]]
        self._labels = {*(o for g in vocab["occupations"].values() for o in g), *vocab["work_forms"],
                        *(f"{i} {f}" for i in vocab["industries"] for f in forms)}
        self.reset()

    def reset(self) -> None:
        """Forget the question, the queries and the passages seen."""
        self.question = ""
        self.attribute: str | None = None
        self.queries: list[str] = []
        self.seen: dict[str, tuple[str, str]] = {}  # doc id -> (title, text), in the order first seen
        self.pending_abstain: str | None = None

    # ----- reading the question ----------------------------------------------------------------------------------
    @staticmethod
    def _last_sentence(question: str) -> str:
        parts = [p for p in re.split(r"(?<=[.?!])\s+", question.strip()) if p]
        return parts[-1] if parts else question

    def detect_attribute(self, question: str) -> str | None:
        """The attribute the question asks for (birthplace, employer, children...), from cue patterns, or None."""
        text = self._last_sentence(question).lower()
        for pattern, attribute in _CUES:
            if re.search(pattern, text):
                return attribute
        return None

    def named_kind(self, question: str) -> str | None:
        """The kind of entity the question names (person, place, ...), or None."""
        for kind, pattern in self._kinds:
            if pattern.search(question):
                return kind
        return None

    def request_cue(self, question: str) -> str | None:
        """Why the question alone should not be answered, or None."""
        if _SUBJECTIVE.search(question):
            return "the question asks for a judgement, not a fact"
        for pattern, rule in _CLASH:
            m = pattern.search(question)
            if m:
                first, second = int(m.group(1)), int(m.group(2))
                if (rule == "order" and second < first) or (rule == "event_then_birth" and second >= first):
                    return f"the dates in the question cannot both hold ({first}, {second})"
        attribute = self.detect_attribute(question)
        if attribute is None:
            return "the question does not say which fact it wants"
        kind = self.named_kind(question)
        if kind is not None and kind not in self._attribute_kinds.get(attribute, ()):
            return f"a {kind} does not have that property"
        return None

    # ----- reading results ---------------------------------------------------------------------------------------
    def _read_results(self, observation: str) -> None:
        current: list[str] | None = None
        for line in observation.splitlines():
            m = _RESULT.match(line)
            if m:
                current = [m.group(1), m.group(2), ""]
                self.seen[m.group(1)] = (m.group(2), "")
                continue
            if current is not None:
                current[2] = (current[2] + " " + line).strip()
                self.seen[current[0]] = (current[1], current[2])

    @staticmethod
    def _split_title(title: str) -> tuple[str, str]:
        m = _TITLE.match(title)
        return (m.group(1), m.group(2) or "") if m else (title, "")

    def entity_name(self) -> str | None:
        """The passage-title name the question mentions first (else its longest capitalised phrase)."""
        names = dict.fromkeys(self._split_title(t)[0] for t, _ in self.seen.values())  # ordered: no set of strings
        inside = [n for n in names if n and n in self.question]
        if inside:  # the first one the question mentions ('Moraford in Lornreach' is about Moraford)
            return min(inside, key=lambda n: (self.question.index(n), -len(n)))
        phrases = [p for p in _CAPITALISED.findall(self.question) if p.split()[0] not in ("What", "Who", "When",
                   "Where", "Which", "How", "In", "Tell", "Give", "Can", "Do", "Is", "Was", "Does", "Look", "I",
                   "At", "On", "For", "Did", "Would")]
        return max(phrases, key=len) if phrases else None

    def namesakes(self, name: str) -> tuple[bool, list[str]]:
        """Whether results show that several entities are called ``name`` (a disambiguation page, or a title with a
        label), and the labels seen."""
        labels: list[str] = []
        shared = False
        for title, _ in self.seen.values():
            base, label = self._split_title(title)
            if base != name or not label:
                continue
            shared = True  # a labelled title ('X (sculptor)') only exists where a name is shared
            if label != "disambiguation" and label not in labels:
                labels.append(label)
        return shared, labels

    def extract(self, name: str, attribute: str, own_title: str | None) -> str | None:
        """The attribute's value as one of the entity's sentences states it (reading only matching titles)."""
        for title, text in self.seen.values():
            base, _ = self._split_title(title)
            own = base == name and (own_title is None or title == own_title)
            for kind in self._attribute_kinds.get(attribute, ()):
                if attribute in _COMPOUND_ONLY:
                    continue
                for sentence in sentences(text):
                    for pattern in fact_patterns(kind, attribute):
                        m = pattern.fullmatch(sentence)
                        if not m:
                            continue
                        subject = m.group("S")
                        if (own and (subject == name or is_reference(subject))) or (
                                not own and subject == name and own_title is None):
                            return m.group("V")
        return None

    # ----- acting ------------------------------------------------------------------------------------------------
    def _keyword(self, attribute: str | None) -> str:
        if attribute is None or attribute in _COMPOUND_ONLY:
            return ""
        return str(attribute_spec(self._attribute_kinds[attribute][0], attribute)["keyword"])

    def _search(self, query: str) -> str:
        query = " ".join(query.split())
        if query in self.queries:  # the same search cannot show anything new
            return self._give_up("searching again shows nothing new")
        self.queries.append(query)
        return f"search[{query}]"

    def _give_up(self, reason: str) -> str:
        if self.abstain_enabled:
            return f"abstain[{reason}]"
        return f"answer[{self._guess()}]"

    def _guess(self) -> str:
        """With abstention off, the most plausible value in sight (any subject), else a year-like number."""
        if self.attribute:
            for title, text in self.seen.values():
                for kind in self._attribute_kinds.get(self.attribute, ()):
                    if self.attribute in _COMPOUND_ONLY:
                        continue
                    for sentence in sentences(title + ". " + text):
                        for pattern in fact_patterns(kind, self.attribute):
                            m = pattern.fullmatch(sentence)
                            if m:
                                return m.group("V")
        numbers = re.findall(r"\b\d{4}\b", " ".join(t for _, t in self.seen.values()))
        return numbers[0] if numbers else "unknown"

    def act(self, observation: str, info: dict[str, Any]) -> str:
        """Abstain on a request cue, else search, read the passages, and answer or abstain on what they show.
        """
        if not self.question:
            self.question = str(info.get("instruction") or observation.split("\n", 1)[0].removeprefix("Question: "))
            self.attribute = self.detect_attribute(self.question)
            cue = self.request_cue(self.question)
            if cue is not None and self.abstain_enabled:
                return f"abstain[{cue}]"
            keyword = self._keyword(self.attribute)
            extra = keyword if keyword and keyword not in self.question.lower() else ""
            return self._search(f"{self.question} {extra}")
        self._read_results(observation)
        return self._decide()

    def _decide(self) -> str:
        name = self.entity_name()
        if name is None or self.attribute is None:
            if len(self.queries) < self.max_searches and name is not None:
                return self._search(name)
            return self._give_up("the question does not say which fact it wants")
        shared, labels = self.namesakes(name)
        own_title: str | None = None
        if shared:
            chosen = [label for label in labels if label.lower() in self.question.lower()]
            hint = self._question_disambiguator(name)
            if chosen:
                own_title = f"{name} ({chosen[0]})"
            elif hint is None:
                return self._give_up(f"more than one entity is called {name} and the question does not say which")
            elif len(self.queries) < self.max_searches:
                return self._search(f"{name} {hint} {self._keyword(self.attribute)}")
            else:
                return self._give_up(f"no passage about the {hint} {name} was found")
        value = self.extract(name, self.attribute, own_title)
        if value is not None:
            return f"answer[{value}]"
        own = [t for t, _ in self.seen.values() if (own_title and t == own_title)
               or (not own_title and self._split_title(t)[0] == name)]
        keyword = self._keyword(self.attribute)
        if len(own) >= 3 or (len(own) >= 2 and len(self.queries) >= 2):
            return self._give_up(f"the passages about {name} do not give this fact")
        if len(self.queries) < self.max_searches:
            label = self._split_title(own_title)[1] if own_title else ""
            return self._search(f"{name} {label} {keyword}")
        return self._give_up(f"no passage gives this fact about {name}")

    def _question_disambiguator(self, name: str) -> str | None:
        """A known kind word the question puts before the name ('the sculptor X', 'the shipping company X') or a
        province after it ('X in Keshmark'), or None."""
        before = re.search(rf"\bthe ([a-z]+(?: [a-z]+)?) {re.escape(name)}", self.question)
        if before and before.group(1) in self._labels:
            return before.group(1)
        after = re.search(rf"{re.escape(name)} in ([A-Z][\w'\-]*)", self.question)
        return after.group(1) if after else None
