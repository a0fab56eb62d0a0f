"""The checks on the column types of a table, before any row is read: every column the
evaluation reads exists and holds a type every engine reads alike (no Python objects, no
128-bit integers, ids that are not lists, numeric scores, weights and truth), and which row
problems those types rule out.

Each engine asks them of the types Polars gives its source (:func:`check_frame`), so that a
type another reader would take for another (a Parquet Duration read as a number, a 128-bit
integer as bytes) is refused in the same words on every engine.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import polars as pl

from polars_rankmetrics.inputs.columns import Columns


def check_frame(frame: pl.DataFrame | pl.LazyFrame, cols: Columns) -> None:
    """:func:`check_schema` of the types Polars gives ``frame`` (a frame, or a scan of the
    source's files), under the user's column names (:meth:`.Columns.in_source`). A frame held
    in memory is counted as it is, a scan by a query (of Parquet files, from their footers),
    and only where its types fail."""

    def count_rows() -> int:
        if isinstance(frame, pl.DataFrame):
            return frame.height
        return int(frame.select(pl.len()).collect().item())

    check_schema(frame.collect_schema(), cols.in_source(), count_rows)


def check_schema(
    schema: pl.Schema, cols: Columns, count_rows: Callable[[], int] | None = None
) -> None:
    """Every column exists; score, truth and weight are numeric (truth may be bool).

    A table without rows whose schema fails (``count_rows`` tells) is refused as empty: a CSV
    file's header alone types every column as text, and an empty NDJSON file has no columns.
    """
    try:
        _check_columns(schema, cols)
    except ValueError:
        if count_rows is not None and count_rows() == 0:
            raise_empty()
        raise


def _check_columns(schema: pl.Schema, cols: Columns) -> None:
    missing = [name for name in cols.required if name not in schema]
    if missing:
        raise ValueError(
            f"column {missing[0]!r} not found; the table has columns {_listed(schema.names())}"
            + _other_shapes(schema, cols)
        )
    check_objects(schema, cols)
    check_wide_integers(schema, cols)
    for key in (cols.sample, cols.label):
        if isinstance(schema[key], pl.List | pl.Array | pl.Struct):
            raise ValueError(
                f"column {key!r} holds {schema[key]} values, which are not ids: a sample or "
                "label column holds one value per row (a string or a number), as explode() or "
                "unnest() give them"
            )
    numeric = {"score": cols.score, "weight": cols.weight}
    bool_or_numeric = {"truth": cols.truth, "pred": cols.pred}
    for role, name in (numeric | bool_or_numeric).items():
        dtype = schema[name] if name is not None else None
        if dtype is None or dtype.is_numeric() or (role in bool_or_numeric and dtype == pl.Boolean):
            continue
        raise_column_type(name, role, dtype)  # type: ignore[arg-type]


def check_objects(schema: Mapping[str, pl.DataType], cols: Columns) -> None:
    """Refuse a column the evaluation reads that holds Python objects (``pl.Object``): an engine
    would read the objects' addresses, not their values (DuckDB reads a frame's through Arrow,
    as bytes, so it is asked of the frame's own schema before the frame is registered)."""
    for name in cols.required:
        if schema.get(name) == pl.Object:
            raise ValueError(
                f"column {name!r} holds Python objects (Object), which no engine reads by "
                "value: convert it to a column of values first (strings, numbers)"
            )


def check_wide_integers(schema: Mapping[str, pl.DataType], cols: Columns) -> None:
    """Refuse a column the evaluation reads that holds 128-bit integers: Arrow has no such
    type, so an engine that reads frames through Arrow (DuckDB, Spark) cannot read them, and
    neither can a Parquet reader other than Polars (a CSV number past 64 bits is one too)."""
    for name in cols.required:
        dtype = schema.get(name)
        if dtype in (pl.Int128, pl.UInt128):
            raise ValueError(
                f"column {name!r} holds {dtype} values, which not every engine reads (Arrow has "
                f"no 128-bit integers): cast it first, e.g. pl.col({name!r}).cast(pl.Float64), "
                "or to Int64 for ids"
            )


def raise_column_type(name: str, role: str, dtype: object) -> None:
    """Refuse the ``role`` column ``name`` for its type ``dtype``, saying how to cast it or name
    another column."""
    wanted = {"score": "numeric", "weight": "numeric", "truth": "bool or numeric",
              "pred": "bool or 0/1"}[role]  # fmt: skip
    named = f"column {name!r}" if name == role else f"column {name!r} ({role})"
    raise ValueError(
        f"{named} must be {wanted}, not {dtype}: cast it first, e.g. "
        f"pl.col({name!r}).cast(pl.Float64), or name the {role} column with {role}= "
        f"(--{role} on the command line)"
    )


_SHOWN_COLUMNS = 10


def _listed(names: Sequence[str]) -> str:
    """Column names for a message: the first ten of a wide table, and the count."""
    if len(names) <= _SHOWN_COLUMNS:
        return str(list(names))
    shown = ", ".join(repr(name) for name in names[:_SHOWN_COLUMNS])
    return f"[{shown}, ...] ({len(names)} columns)"


def _other_shapes(schema: pl.Schema, cols: Columns) -> str:
    """A hint for a table of another shape than the long one: a wide table (a column per label,
    no label column) or one row per sample holding lists."""
    if any(isinstance(dtype, pl.List | pl.Array) for dtype in schema.dtypes()):
        return (
            "; a table of one row per sample holding lists of labels and scores is converted "
            "with rm.from_lists"
        )
    if cols.label not in schema:
        return (
            "; the long table has one row per (sample, label): a wide table (one column per "
            "label) or a matrix is converted with rm.from_dense(y_true, y_score)"
        )
    return ""


def raise_empty() -> None:
    raise ValueError("the table is empty: there is no row to evaluate")


def is_exact_in_float64(score: pl.Expr, dtype: pl.DataType) -> pl.Expr:
    """Whether an integer or decimal score survives the round trip through Float64, which every
    engine ranks by; a value that does not could tie with a neighbour on one engine only.
    (Distinct values that all survive stay distinct and in order as floats.)"""
    return score.cast(pl.Float64).cast(dtype, strict=False).eq_missing(score)


def ruled_out(schema: pl.Schema, cols: Columns) -> set[str]:
    """The row problems that the column types of ``schema`` rule out, which no engine spends a
    pass on: a NaN in a column that is not a float, a truth value outside {0, 1} (or negative)
    in a boolean column, a pred value outside {0, 1} in a boolean column."""
    truth_type = schema[cols.truth]
    ruled = set()
    if not schema[cols.score].is_float():
        ruled.add("nan_score")
    if not truth_type.is_float():
        ruled.add("nan_truth")
    if truth_type == pl.Boolean:
        ruled |= {"non_binary_truth", "negative_truth"}
    if cols.pred is not None and schema[cols.pred] == pl.Boolean:
        ruled.add("non_binary_pred")
    return ruled
