"""AbstainQA-v0's feature hook for the stopping-policy env: what a reader of this family's pages can tell.

The generic features (:mod:`agentabstain_gym.wrappers.rl.features`) know nothing of passages or questions. This hook
reads the current observation and the question with the family's own grammar (result lines ``[k] doc | Title``,
namesake titles ``Name (label)``, the corpus's fact sentences) and returns values in [0, 1]. It sees exactly what an
agent sees: the observation string and ``info["instruction"]``; it never touches a task, its payload or its label.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from typing import Any

from agentabstain_gym.envs.qa.corpus import fact_patterns, is_reference, sentences
from agentabstain_gym.envs.qa.knowledge import KINDS, askable
from agentabstain_gym.envs.qa.solver import HeuristicQASolver

FEATURE_NAMES: tuple[str, ...] = (
    "result_count", "no_results", "searches_left", "best_match", "name_in_titles", "namesakes",
    "label_in_question", "attribute_known", "kind_clash", "date_clash", "fact_stated",
)
_RESULT = re.compile(r"^\[(\d+)\] (P\d+) \| (.*)$", re.MULTILINE)
_TITLE = re.compile(r"^(.*?)(?: \(([^()]*)\))?$")
_LEFT = re.compile(r"\(searches left: (\d+)\)")
_YEAR = re.compile(r"\b(\d{3,4})\b")
_BORN = re.compile(r"\bborn in (\d{3,4})\b")
_SPAN = re.compile(r"\b(?:from|between) (\d{3,4}) (?:to|and|until) (\d{3,4})\b|born in (\d{3,4}) and died in (\d{3,4})")
_WORD = re.compile(r"[a-z0-9]+")
_MAX_SEARCHES = 10
_COMPOUND_ONLY = ("boiling_point", "formula")


@cache
def _reader() -> HeuristicQASolver:
    """The family solver, used only for its stateless question reading (attribute and named kind)."""
    return HeuristicQASolver(abstain=False)


@cache
def _kinds_of(attribute: str) -> tuple[str, ...]:
    """Kinds that can have ``attribute`` (boiling points and formulas belong to compounds only)."""
    return ("compound",) if attribute in _COMPOUND_ONLY else tuple(k for k in KINDS if attribute in askable(k))


def _results(observation: str) -> list[tuple[str, str, str]]:
    """(title base, label, text) of each result in a search observation."""
    out = []
    matches = list(_RESULT.finditer(observation))
    for i, m in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(observation)
        title = _TITLE.match(m.group(3))
        base, label = (title.group(1), title.group(2) or "") if title else (m.group(3), "")
        out.append((base, label, observation[m.end():end].strip()))
    return out


def _date_clash(question: str) -> bool:
    """Years in the question that cannot all hold: a life or span that ends before it starts, or an event dated
    before the birth of the person said to have done it."""
    for m in _SPAN.finditer(question):
        start, end = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
        if int(end) < int(start):
            return True
    born = _BORN.search(question)
    if born:
        earlier = [int(y) for y in _YEAR.findall(question[: born.start()])]
        return any(y <= int(born.group(1)) for y in earlier)
    return False


def features(observation: str, info: Mapping[str, Any]) -> dict[str, float]:
    """The QA family's stopping features of one observation (question kind vs attribute, what the results
    name).
    """
    question = str(info.get("instruction", ""))
    reader = _reader()
    attribute = reader.detect_attribute(question)
    kind = reader.named_kind(question)
    clash = bool(attribute and kind and kind not in _kinds_of(attribute))
    results = _results(observation)
    named = [r for r in results if r[0] and r[0] in question]
    q_words = {w for w in _WORD.findall(question.lower()) if len(w) > 2}
    best = max((len(q_words & set(_WORD.findall(f"{b} {t}".lower()))) / len(q_words)
                for b, _l, t in results), default=0.0) if q_words else 0.0
    labels = {label for _b, label, _t in named if label and label != "disambiguation"}
    stated = False
    if attribute and attribute not in _COMPOUND_ONLY:
        for base, _label, text in named:
            for k in _kinds_of(attribute):
                for sentence in sentences(text):
                    for pattern in fact_patterns(k, attribute):
                        m = pattern.fullmatch(sentence)
                        if m and (m.group("S") == base or is_reference(m.group("S"))):
                            stated = True
    left = _LEFT.search(observation)
    return {
        "result_count": len(results) / 3.0,
        "no_results": float(observation.startswith("No passages matched")),
        "searches_left": int(left.group(1)) / _MAX_SEARCHES if left else 1.0,
        "best_match": best,
        "name_in_titles": len(named) / len(results) if results else 0.0,
        "namesakes": float(len(labels) >= 2 or any(label == "disambiguation" for _b, label, _t in named)),
        "label_in_question": float(any(label.lower() in question.lower() for label in labels)),
        "attribute_known": float(attribute is not None),
        "kind_clash": float(clash),
        "date_clash": float(_date_clash(question)),
        "fact_stated": float(stated),
    }
