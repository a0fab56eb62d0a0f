"""The names of the long table's columns, chosen by the caller."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Columns:
    """Which column of the long table holds what.

    One row of the long table is one (sample, label) cell: the model's ``score`` for that label and
    the ``truth`` (0/1, or a graded non-negative gain for dcg/ndcg). ``weight`` is optional and must
    be constant within a sample. ``by`` names the columns that split the table into independent
    evaluations (models, slices); each group is evaluated as if it were a table of its own.
    ``pred`` optionally holds the model's decisions (bool or 0/1) for the threshold metrics,
    which otherwise predict a label when its score reaches the threshold. ``top_k``: the table
    joins a predictions table (``score``, ``weight``) with a truth table (``truth``), as
    :mod:`polars_rankmetrics.topk` builds it.
    """

    sample: str = "sample"
    label: str = "label"
    score: str = "score"
    truth: str = "truth"
    weight: str | None = None
    by: tuple[str, ...] = ()
    pred: str | None = None
    top_k: bool = False

    @classmethod
    def of(
        cls,
        *,
        sample: str = "sample",
        label: str = "label",
        score: str = "score",
        truth: str = "truth",
        weight: str | None = None,
        by: str | Sequence[str] | None = None,
        pred: str | None = None,
    ) -> Columns:
        """Build from the keyword options every public function takes."""
        by_tuple = (by,) if isinstance(by, str) else tuple(by or ())
        return cls(sample, label, score, truth, weight, by_tuple, pred)

    @property
    def sample_keys(self) -> list[str]:
        """The columns that identify one sample: the ``by`` columns, then the sample id."""
        return [*self.by, self.sample]

    @property
    def required(self) -> list[str]:
        """Every column the evaluation reads, each named once."""
        names = [*self.by, self.sample, self.label, self.score, self.truth]
        names += [c for c in (self.weight, self.pred) if c is not None]
        return list(dict.fromkeys(names))
