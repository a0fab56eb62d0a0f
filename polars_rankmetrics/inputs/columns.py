"""The names of the long table's columns, chosen by the caller."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    import polars as pl

Frame = TypeVar("Frame", "pl.DataFrame", "pl.LazyFrame")

# How the library names a ``by`` column inside an evaluation (see :meth:`Columns.inside`).
_INSIDE = "__rankmetrics_by{}__"
_INSIDE_NAME = re.compile(r"__rankmetrics_by([0-9]+)__")


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
    :mod:`polars_rankmetrics.engines.topk` builds it. ``aliases``: (name in the source, name inside)
    pairs that an engine applies where it opens the source (:meth:`inside`).
    """

    sample: str = "sample"
    label: str = "label"
    score: str = "score"
    truth: str = "truth"
    weight: str | None = None
    by: tuple[str, ...] = ()
    pred: str | None = None
    top_k: bool = False
    aliases: tuple[tuple[str, str], ...] = ()

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

    def inside(self) -> Columns:
        """These columns as an evaluation names them: each ``by`` column renamed
        ``__rankmetrics_by0__``, ``__rankmetrics_by1__``, ... where the source is opened, so that
        no column of the library's own frames (``tp``, ``support``, ``weight``, a metric's sums,
        ...) can meet a user's name. Refuses a ``by`` column that is also another role's column.
        """
        roles = {
            "sample": self.sample, "label": self.label, "score": self.score,
            "truth": self.truth, "weight": self.weight, "pred": self.pred,
        }  # fmt: skip
        for name in self.by:
            for role, column in roles.items():
                if name == column:
                    raise ValueError(f"by column {name!r} is also the {role} column")
        if len(set(self.by)) < len(self.by):
            raise ValueError(f"by names a column twice: {list(self.by)}")
        inner = tuple(_INSIDE.format(i) for i in range(len(self.by)))
        return replace(self, by=inner, aliases=tuple(zip(self.by, inner, strict=True)))

    def opened(self) -> Columns:
        """These columns over a source already renamed (a bucket written from one): no aliases."""
        return replace(self, aliases=())

    def in_source(self) -> Columns:
        """These columns as the source names them, before its ``aliases`` are applied."""
        outer = {inner: name for name, inner in self.aliases}
        return replace(self, by=tuple(outer.get(b, b) for b in self.by), aliases=())

    def shown(self, text: str) -> str:
        """``text`` (an error message) with the inside names of ``by`` columns replaced by the
        user's."""
        outer = [name for name, _ in self.aliases]
        return _INSIDE_NAME.sub(lambda m: outer[int(m.group(1))], text) if outer else text

    def restored(self, frame: Frame) -> Frame:
        """``frame`` (a result) with its ``by`` columns under the user's names."""
        return frame.rename({inner: outer for outer, inner in self.aliases})
