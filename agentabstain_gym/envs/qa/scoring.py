"""Answer scoring as in extractive QA: normalised exact match and token F1 against reference answers."""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Sequence

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans("", "", string.punctuation)


def normalize_answer(text: str) -> str:
    """Lower-case, drop punctuation and articles, collapse white space."""
    text = text.lower().translate(_PUNCT)
    return " ".join(_ARTICLES.sub(" ", text).split())


def exact_match(prediction: str, references: Sequence[str]) -> bool:
    """Whether the normalised prediction equals a normalised reference."""
    norm = normalize_answer(prediction)
    return any(norm == normalize_answer(ref) for ref in references)


def token_f1(prediction: str, references: Sequence[str]) -> float:
    """Best token-overlap F1 of ``prediction`` over ``references`` (0.0 without references)."""
    pred = normalize_answer(prediction).split()
    best = 0.0
    for ref in references:
        gold = normalize_answer(ref).split()
        common = sum((Counter(pred) & Counter(gold)).values())
        if not pred or not gold or common == 0:
            continue
        precision, recall = common / len(pred), common / len(gold)
        best = max(best, 2 * precision * recall / (precision + recall))
    return best
