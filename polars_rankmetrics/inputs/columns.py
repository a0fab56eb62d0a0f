"""The names of the long table's columns, chosen by the caller."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, TypedDict, TypeVar

if TYPE_CHECKING:
    from collections.abc import Callable

    import polars as pl

Frame = TypeVar("Frame", "pl.DataFrame", "pl.LazyFrame")
Function = TypeVar("Function", bound="Callable[..., object]")


class RankingColumns(TypedDict, total=False):
    """The keyword options naming the long table's columns, which every public function takes
    as ``**columns`` (defaults: ``sample``, ``label``, ``score``, ``truth``, no weight)."""

    sample: str
    label: str
    score: str
    truth: str
    weight: str | None


class ColumnNames(RankingColumns, total=False):
    """:class:`RankingColumns` and the ``pred`` column of the threshold metrics."""

    pred: str | None


_RANKING_DOC = """\
    sample, label, score, truth
        Column names (keywords): one row per (``sample``, ``label``) cell holds the model's
        ``score`` and the ``truth`` (0/1, bool or numeric; graded non-negative gains where
        only dcg/ndcg are asked for).
    weight
        Column of sample weights, constant within a sample: every mean over samples is
        weighted by them.
"""
_PRED_DOC = """\
    pred
        Column of the model's decisions (bool or 0/1) for the threshold metrics; without it a
        label is predicted where its score is at least ``threshold``.
"""


def documented(names: type[RankingColumns]) -> Callable[[Function], Function]:
    """Write the entries of the column keywords ``names`` (:class:`RankingColumns` or
    :class:`ColumnNames`) where the function's docstring has the line ``**columns``."""
    text = _RANKING_DOC + (_PRED_DOC if "pred" in names.__annotations__ else "")

    def add(function: Function) -> Function:
        doc = function.__doc__ or ""
        if "    **columns\n" not in doc:
            raise ValueError(f"{function.__qualname__}'s docstring has no **columns line")
        function.__doc__ = doc.replace("    **columns\n", text, 1)
        return function

    return add


# How the library names a ``by`` column inside an evaluation (see :meth:`Columns.inside`).
_INSIDE = "__rankmetrics_by{}__"
_INSIDE_NAME = re.compile(r"__rankmetrics_by([0-9]+)__")


def by_names(by: str | Sequence[str] | None) -> list[str]:
    """The ``by`` keyword's column names: one name, several, or none (None or empty)."""
    return [by] if isinstance(by, str) else list(by or ())


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
        by: str | Sequence[str] | None = None,
        accepted: type[RankingColumns] | None = None,
        **names: str | None,
    ) -> Columns:
        """Build from ``by`` and the column keywords a public function takes (``accepted``:
        :class:`ColumnNames` by default); ``TypeError`` naming them for any other keyword."""
        options = (accepted or ColumnNames).__annotations__
        unknown = [name for name in names if name not in options]
        if unknown:
            raise TypeError(
                f"unexpected keyword argument {unknown[0]!r}; the column keywords are "
                f"{', '.join(options)}"
            )
        return cls(by=tuple(by_names(by)), **names)  # type: ignore[arg-type]

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
