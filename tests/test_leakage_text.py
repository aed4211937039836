"""The wording of an environment- or context-based task must not tell it from its solvable twin.

For these categories the reason to abstain lies in the world (a product the store lacks, a fact the corpus leaves
out, a namesake, a missing file, a changed tool or runtime), so the instruction an agent reads at reset has to look
like its solvable twin's. Two simple text classifiers (logistic regression and multinomial naive Bayes over word
unigrams plus the character length), trained on the train split, must stay near chance on the test split.
Request-based categories are exempt: their wording is the signal.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass

import gymnasium as gym
import numpy as np
import pytest

import agentabstain_gym  # noqa: F401  (registers the ids)
from agentabstain_gym.core.task import Task

#: Highest held-out accuracy a text classifier may reach (chance is 0.5 on balanced twins).
MAX_ACCURACY = 0.60
#: Below this many held-out examples the train -> test estimate is too coarse; grouped k-fold is used instead.
MIN_HELD_OUT = 60
TOOL_LOCATIONS = ("environment", "inventory", "runtime")
_WORD = re.compile(r"[a-z0-9']+")

#: (env id, category) of every environment- or context-based category; tool categories are found by location.
CASES: tuple[tuple[str, str], ...] = (
    ("AbstainWebShop-v1", "missing_target"),
    ("AbstainQA-v0", "answer_unknown"),
    ("AbstainQA-v0", "underspecified_context"),
    ("AbstainTerminal-v1", "missing_prerequisite"),
)


def tool_categories() -> list[str]:
    """Tool scenarios whose delta acts on the environment, the tool inventory or the runtime (not the query)."""
    tasks = gym.make("AbstainTools-v0").unwrapped.tasks()
    return sorted({t.category for t in tasks if t.should_abstain
                   and (t.payload.get("delta") or {}).get("location") in TOOL_LOCATIONS})


# ----- the classifiers --------------------------------------------------------------------------------------------
def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


@dataclass
class Featurizer:
    """Word-unigram counts over the training vocabulary, plus the standardised character length."""

    vocabulary: dict[str, int]
    length_mean: float
    length_std: float

    @classmethod
    def fit(cls, texts: Sequence[str]) -> Featurizer:
        vocab: dict[str, int] = {}
        for text in texts:
            for w in words(text):
                vocab.setdefault(w, len(vocab))
        lengths = np.array([len(t) for t in texts], dtype=float)
        return cls(vocab, float(lengths.mean()), float(lengths.std()) or 1.0)

    def counts(self, texts: Sequence[str]) -> np.ndarray:
        x = np.zeros((len(texts), len(self.vocabulary)))
        for i, text in enumerate(texts):
            for w in words(text):
                j = self.vocabulary.get(w)
                if j is not None:
                    x[i, j] += 1.0
        return x

    def length(self, texts: Sequence[str]) -> np.ndarray:
        return (np.array([len(t) for t in texts], dtype=float) - self.length_mean) / self.length_std

    def matrix(self, texts: Sequence[str]) -> np.ndarray:
        return np.hstack([self.counts(texts), self.length(texts)[:, None], np.ones((len(texts), 1))])


def logistic_regression(train: Sequence[str], y: np.ndarray, test: Sequence[str], l2: float = 1e-2,
                        steps: int = 1500) -> np.ndarray:
    """Predicted labels of an L2-regularised logistic regression fitted by full-batch gradient descent."""
    feats = Featurizer.fit(train)
    x, xt = feats.matrix(train), feats.matrix(test)
    w = np.zeros(x.shape[1])
    lr = 1.0 / (0.25 * float(np.max(np.sum(x * x, axis=1))) + l2)  # below 1 / Lipschitz constant of the loss
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-(x @ w)))
        grad = x.T @ (p - y) / len(y) + l2 * np.r_[w[:-1], 0.0]
        w -= lr * grad
    return (xt @ w > 0).astype(int)


def naive_bayes(train: Sequence[str], y: np.ndarray, test: Sequence[str]) -> np.ndarray:
    """Predicted labels of multinomial naive Bayes over words (Laplace smoothing) plus a Gaussian on the length."""
    feats = Featurizer.fit(train)
    x, xt = feats.counts(train), feats.counts(test)
    length, length_t = feats.length(train), feats.length(test)
    scores = np.zeros((len(test), 2))
    for c in (0, 1):
        rows = y == c
        word_p = (x[rows].sum(axis=0) + 1.0) / (x[rows].sum() + x.shape[1])
        mu, sd = float(length[rows].mean()), float(length[rows].std()) + 1e-3
        scores[:, c] = (np.log(rows.mean()) + xt @ np.log(word_p)
                        - np.log(sd) - 0.5 * ((length_t - mu) / sd) ** 2)
    return scores.argmax(axis=1)


CLASSIFIERS = {"logistic regression": logistic_regression, "naive Bayes": naive_bayes}


# ----- the data -----------------------------------------------------------------------------------------------------
def category_and_twins(env_id: str, category: str) -> list[Task]:
    """The category's tasks and the solvable tasks of the same pairs."""
    tasks = gym.make(env_id).unwrapped.tasks()
    pairs = {t.pair_id for t in tasks if t.category == category}
    return [t for t in tasks if t.pair_id in pairs and (t.category == category or not t.should_abstain)]


def _fold(pair_id: str | None, k: int) -> int:
    return int(hashlib.sha256(str(pair_id).encode()).hexdigest()[:8], 16) % k


def held_out_accuracy(tasks: Sequence[Task], classifier: str, k: int = 5) -> tuple[float, int, str]:
    """Accuracy on held-out tasks, (accuracy, held-out count, how): train -> test where both splits are big enough,
    else grouped k-fold over pairs (so no pair is on both sides of a fold)."""
    fit = CLASSIFIERS[classifier]
    train = [t for t in tasks if t.split == "train"]
    test = [t for t in tasks if t.split == "test"]
    if len(test) >= MIN_HELD_OUT and len({t.should_abstain for t in train}) == 2:
        y = np.array([t.should_abstain for t in train], dtype=float)
        predicted = fit([t.instruction for t in train], y, [t.instruction for t in test])
        truth = np.array([t.should_abstain for t in test], dtype=int)
        return float((predicted == truth).mean()), len(test), "train -> test"
    correct = 0
    for fold in range(k):
        train = [t for t in tasks if _fold(t.pair_id, k) != fold]
        test = [t for t in tasks if _fold(t.pair_id, k) == fold]
        if not test:
            continue
        y = np.array([t.should_abstain for t in train], dtype=float)
        predicted = fit([t.instruction for t in train], y, [t.instruction for t in test])
        correct += int((predicted == np.array([t.should_abstain for t in test], dtype=int)).sum())
    return correct / len(tasks), len(tasks), f"grouped {k}-fold"


# ----- the tests ----------------------------------------------------------------------------------------------------
def test_the_classifiers_can_read_a_real_tell() -> None:
    """The bound means something: the same classifiers find a planted word and a planted length difference."""
    rng = np.random.default_rng(0)
    vocab = [f"w{i}" for i in range(60)]
    base = [" ".join(rng.choice(vocab, size=8)) for _ in range(300)]
    for plant in (lambda s: s + " kindly", lambda s: s + " " + s[:40]):
        tasks = [Task(task_id=f"t{i}{side}", family="qa", instruction=plant(text) if side else text,
                      should_abstain=bool(side), category="x" if side else "answerable",
                      split="train" if i < 200 else "test", pair_id=f"p{i}", w=2 if side else None)
                 for i, text in enumerate(base) for side in (0, 1)]
        for classifier in CLASSIFIERS:
            accuracy, _, _ = held_out_accuracy(tasks, classifier)
            assert accuracy > 0.9, classifier


@pytest.mark.parametrize("classifier", sorted(CLASSIFIERS))
@pytest.mark.parametrize("env_id,category", [*CASES, *(("AbstainTools-v0", c) for c in tool_categories())])
def test_wording_does_not_reveal_environment_based_categories(env_id: str, category: str, classifier: str) -> None:
    tasks = category_and_twins(env_id, category)
    assert {t.should_abstain for t in tasks} == {True, False}
    accuracy, n, how = held_out_accuracy(tasks, classifier)
    assert accuracy <= MAX_ACCURACY, f"{env_id} {category}: {classifier} {accuracy:.3f} on {n} held-out ({how})"
