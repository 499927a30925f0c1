"""How far apart are two stores scored on the same questions? The mean of their per-question differences,
with a bootstrap interval over the questions.

Two stores read by the same answerer differ question by question, and with 60-odd questions a gap of a
few hundredths of F1 can be a handful of answers. The interval says how much of a gap another draw of
the same number of questions could undo: resampling the questions (paired, so each question's two
scores move together) with scipy's bootstrap, percentile method (BCa breaks down when most
differences are zero, as they are when two stores give the same answers).
"""

from __future__ import annotations

from typing import Sequence

from pydantic import BaseModel, Field


class PairedDifference(BaseModel):
    """`a` against `b` on the same questions: a's score minus b's."""

    questions: int = Field(description="Questions scored in both.")
    mean: float = Field(description="Mean of a − b over the questions.")
    low: float = Field(description="Lower end of the bootstrap interval of the mean.")
    high: float = Field(description="Upper end of the bootstrap interval of the mean.")
    confidence: float = Field(description="The interval's confidence level.")
    better: int = Field(description="Questions where a scored higher.")
    worse: int = Field(description="Questions where a scored lower.")
    same: int = Field(description="Questions scored alike.")

    def render(self, digits: int = 3) -> str:
        def signed(x: float) -> str:
            return f"{round(x, digits) + 0.0:+.{digits}f}"  # + 0.0: no "-0.000"

        return (f"{signed(self.mean)} [{signed(self.low)}, {signed(self.high)}] "
                f"({self.better} better, {self.worse} worse, {self.same} same; {self.questions} questions)")


def paired_difference(a: Sequence[float], b: Sequence[float], *, confidence: float = 0.95,
                      resamples: int = 10_000, seed: int = 0, tolerance: float = 1e-9) -> PairedDifference:
    """a − b question by question, the mean and its bootstrap interval (seeded: the same scores give the
    same interval). Scores within `tolerance` count as the same."""
    import numpy as np
    from scipy.stats import bootstrap

    if len(a) != len(b):
        raise ValueError(f"paired scores need the same questions: {len(a)} against {len(b)}")
    if not a:
        raise ValueError("no questions to compare")
    if not 0 < confidence < 1:
        raise ValueError("confidence is a share, between 0 and 1")
    diffs = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    diffs[np.abs(diffs) <= tolerance] = 0.0
    mean = float(diffs.mean())
    if np.all(diffs == diffs[0]):  # nothing to resample: every draw has the same mean
        low = high = mean
    else:
        interval = bootstrap((diffs,), np.mean, confidence_level=confidence, n_resamples=resamples,
                             method="percentile", rng=np.random.default_rng(seed)).confidence_interval
        low, high = float(interval.low), float(interval.high)
    return PairedDifference(questions=len(diffs), mean=mean, low=low, high=high, confidence=confidence,
                            better=int((diffs > 0).sum()), worse=int((diffs < 0).sum()),
                            same=int((diffs == 0).sum()))
