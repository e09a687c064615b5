"""The metrics of the published multi-hop QA tables, computed the same way.

* :func:`normalize_answer` - SQuAD normalisation: lower-case, drop punctuation, drop the
  articles *a*, *an*, *the*, squeeze whitespace.
* :func:`exact_match` / :func:`token_f1` - SQuAD v1.1 EM and token F1 of one prediction against
  one gold answer; :func:`best_exact_match` / :func:`best_f1` take the maximum over the gold
  answer and its aliases (MuSiQue's ``answer_aliases``).
* :func:`recall_at_k` - passage recall: the share of the gold supporting passages found among the
  first ``k`` distinct retrieved passages (a passage is a title for HotpotQA/2Wiki, a paragraph
  for MuSiQue; :mod:`kag_neo4j.eval.datasets` turns both into comparable *units*).
* :func:`percentile` - linear-interpolated percentiles for latency (numpy's default method).
* :func:`paired_bootstrap` - the mean paired difference of two methods over the same questions,
  with a percentile bootstrap interval (questions resampled with replacement, seeded).
"""

from __future__ import annotations

import math
import re
import string
from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np
from pydantic import BaseModel

__all__ = [
    "best_exact_match",
    "best_f1",
    "exact_match",
    "mean",
    "PairedDifference",
    "normalize_answer",
    "paired_bootstrap",
    "percentile",
    "recall_at_k",
    "token_f1",
]

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = frozenset(string.punctuation)


def normalize_answer(text: str) -> str:
    """SQuAD normalisation: lower case, no punctuation, no articles, single spaces."""
    lowered = text.lower()
    no_punctuation = "".join(ch for ch in lowered if ch not in _PUNCTUATION)
    no_articles = _ARTICLES.sub(" ", no_punctuation)
    return " ".join(no_articles.split())


def exact_match(prediction: str, gold: str) -> float:
    """1.0 when the normalised strings are equal, else 0.0."""
    return float(normalize_answer(prediction) == normalize_answer(gold))


def token_f1(prediction: str, gold: str) -> float:
    """SQuAD v1.1 token F1 of the normalised strings (0.0 when they share no token)."""
    predicted = normalize_answer(prediction).split()
    expected = normalize_answer(gold).split()
    common = Counter(predicted) & Counter(expected)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision = same / len(predicted)
    recall = same / len(expected)
    return 2 * precision * recall / (precision + recall)


def _golds(golds: Iterable[str]) -> list[str]:
    answers = [gold for gold in golds if isinstance(gold, str)]
    if not answers:
        raise ValueError("a question needs at least one gold answer to be scored")
    return answers


def best_exact_match(prediction: str, golds: Iterable[str]) -> float:
    """The maximum :func:`exact_match` over the gold answer and its aliases."""
    return max(exact_match(prediction, gold) for gold in _golds(golds))


def best_f1(prediction: str, golds: Iterable[str]) -> float:
    """The maximum :func:`token_f1` over the gold answer and its aliases."""
    return max(token_f1(prediction, gold) for gold in _golds(golds))


def first_distinct(units: Iterable[str], k: int) -> list[str]:
    """The first ``k`` distinct units, in order (chunks of one passage count once)."""
    seen: list[str] = []
    for unit in units:
        if unit not in seen:
            seen.append(unit)
            if len(seen) == k:
                break
    return seen


def recall_at_k(retrieved: Sequence[str], gold: Iterable[str], k: int) -> float | None:
    """Share of ``gold`` units among the first ``k`` distinct ``retrieved`` units.

    ``None`` when there is no gold unit (the question is left out of the mean).
    """
    if k < 1:
        raise ValueError(f"recall@k needs k >= 1, got {k}")
    expected = set(gold)
    if not expected:
        return None
    top = set(first_distinct(retrieved, k))
    return len(top & expected) / len(expected)


def mean(values: Iterable[float | None]) -> float | None:
    """The mean of the values that are not ``None`` (``None`` when there are none)."""
    present = [value for value in values if value is not None]
    return sum(present) / len(present) if present else None


def percentile(values: Iterable[float], q: float) -> float | None:
    """The ``q``-th percentile (0-100) with linear interpolation between closest ranks."""
    if not 0 <= q <= 100:
        raise ValueError(f"a percentile is between 0 and 100, got {q}")
    ordered = sorted(values)
    if not ordered:
        return None
    position = (len(ordered) - 1) * q / 100
    lower = math.floor(position)
    upper = math.ceil(position)
    if lower == upper:
        return ordered[lower]
    return ordered[lower] + (ordered[upper] - ordered[lower]) * (position - lower)


#: bootstrap resamples and seed of the paired differences ``kag-neo4j eval`` reports
BOOTSTRAP_RESAMPLES = 10_000
BOOTSTRAP_SEED = 0
_BATCH = 1000  # resamples drawn at once (bounds memory at _BATCH x questions indices)


class PairedDifference(BaseModel):
    """``mean`` of ``a - b`` over ``n`` paired questions and its bootstrap interval [``low``, ``high``]."""

    mean: float
    low: float
    high: float
    n: int
    confidence: float = 0.95

    @property
    def excludes_zero(self) -> bool:
        """The interval lies wholly above or below 0: the difference is unlikely to be chance."""
        return self.low > 0 or self.high < 0


def paired_bootstrap(
    a: Sequence[float],
    b: Sequence[float],
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
    confidence: float = 0.95,
) -> PairedDifference | None:
    """The mean of ``a[i] - b[i]`` with a percentile bootstrap ``confidence`` interval.

    ``a`` and ``b`` are one score per question, in the same question order. Each resample draws
    ``len(a)`` questions with replacement (the same draw for both methods: the pairing is kept)
    and takes the mean difference; the interval is the central ``confidence`` share of the
    ``resamples`` means. The same inputs and ``seed`` give the same interval. ``None`` when there
    are no questions.
    """
    if len(a) != len(b):
        raise ValueError(f"paired scores need one value per question in both lists, got {len(a)} and {len(b)}")
    if resamples < 1:
        raise ValueError(f"a bootstrap needs at least one resample, got {resamples}")
    if not 0 < confidence < 1:
        raise ValueError(f"a confidence level is between 0 and 1, got {confidence}")
    if not a:
        return None
    differences = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    n = len(differences)
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    for start in range(0, resamples, _BATCH):
        size = min(_BATCH, resamples - start)
        means[start:start + size] = differences[rng.integers(0, n, size=(size, n))].mean(axis=1)
    tail = 100 * (1 - confidence) / 2
    low, high = np.percentile(means, [tail, 100 - tail])
    return PairedDifference(mean=float(differences.mean()), low=float(low), high=float(high), n=n,
                            confidence=confidence)
