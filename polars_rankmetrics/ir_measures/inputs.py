"""ir_measures' run and qrels forms as the long tables :func:`~polars_rankmetrics.evaluate`
reads: a pandas DataFrame (columns ``query_id``, ``doc_id`` and ``score``, or ``relevance``),
a dict of dicts (topic -> document -> score, or relevance) or an iterable of namedtuples
(``ir_measures.ScoredDoc`` / ``ir_measures.Qrel``, as ``ir_measures.read_trec_run`` and
``read_trec_qrels`` yield from TREC files). ir_measures' own converters
(``ir_measures.util.RunConverter``, ``QrelsConverter``) tell the form and read the iterables.

Topic and document ids become text, as pytrec_eval reads them; the qrels' ``iteration`` is not
read (nor by trec_eval). A document twice in a topic is refused by ``evaluate``, naming it
(ir_measures' pytrec_eval provider keeps the last of them).
"""

from __future__ import annotations

from typing import Any, Literal

import polars as pl
import pyarrow as pa  # type: ignore[import-untyped]
from ir_measures.util import QrelsConverter, RunConverter

# The column ir_measures names, the column evaluate reads.
_IDS = {"query_id": "sample", "doc_id": "label"}
_VALUES = {"run": ("score", pl.Float64), "qrels": ("relevance", pl.Int64)}
_VALUE_COLUMN = {"run": "score", "qrels": "truth"}


def run_table(run: Any) -> pl.DataFrame:
    """The run as columns ``sample``, ``label``, ``score`` (Float64)."""
    return _table(RunConverter(run), "run")


def qrels_table(qrels: Any) -> pl.DataFrame:
    """The qrels as columns ``sample``, ``label``, ``truth`` (Int64)."""
    return _table(QrelsConverter(qrels), "qrels")


def _table(converter: RunConverter | QrelsConverter, kind: Literal["run", "qrels"]) -> pl.DataFrame:
    """``converter``'s input in the long form; its error where ir_measures cannot read it."""
    form, error = converter.predict_type()
    value, dtype = _VALUES[kind]
    names = {**_IDS, value: _VALUE_COLUMN[kind]}
    schema = {"sample": pl.String, "label": pl.String, _VALUE_COLUMN[kind]: dtype}
    if form == "UNKNOWN":
        raise ValueError(f"unknown {kind} format: {error}")
    given = converter.run if isinstance(converter, RunConverter) else converter.qrels
    if form == "pd_dataframe":
        frame = pl.DataFrame([_column(given[name]).alias(names[name]) for name in names])
    elif form == "dict_of_dict":
        frame = pl.DataFrame(
            [(topic, doc, v) for topic, docs in given.items() for doc, v in docs.items()],
            schema=list(names.values()), orient="row", infer_schema_length=None,
        )  # fmt: skip
    else:
        rows = converter.as_namedtuple_iter()
        frame = pl.DataFrame(
            [(row.query_id, row.doc_id, getattr(row, value)) for row in rows],
            schema=list(names.values()), orient="row", infer_schema_length=None,
        )  # fmt: skip
    return _cast(frame, schema, kind)


def _column(series: Any) -> pl.Series:
    """A pandas column as a Polars one; a column of Python strings through pyarrow's string
    type, which reads them without inferring their type."""
    if series.dtype == object:
        try:
            return pl.Series(pa.array(series.to_numpy(), type=pa.large_string()))
        except (pa.ArrowInvalid, pa.ArrowTypeError):  # not all strings: inferred below
            pass
    try:
        return pl.Series(series.name, pl.from_pandas(series, nan_to_null=False))
    except (pa.ArrowInvalid, pa.ArrowTypeError, pl.exceptions.PolarsError) as error:
        sample = series.head(3).tolist()
        raise ValueError(
            f"column {series.name!r} mixes types that one column cannot hold ({sample!r}): {error}"
        ) from None


def _cast(frame: pl.DataFrame, schema: dict[str, Any], kind: str) -> pl.DataFrame:
    """``frame`` with ``schema``'s types: ids as text, the value as a number; a value that is
    not one is refused, naming the column and a sample."""
    value = list(schema)[2]
    ids = frame.select(pl.col("sample", "label").cast(pl.String))
    given = frame.get_column(value)
    try:
        if schema[value].is_integer() and given.dtype.is_float():
            fractional = given.filter(given.is_nan() | (given != given.floor()))
            if fractional.len() > 0:  # a cast would truncate it
                raise pl.exceptions.InvalidOperationError(f"{fractional[0]} is not an integer")
        values = frame.select(pl.col(value).cast(schema[value], strict=True))
    except pl.exceptions.PolarsError:
        sample = frame.get_column(value).head(3).to_list()
        raise ValueError(
            f"the {kind}'s {'score' if kind == 'run' else 'relevance'} must be a number "
            f"({'float' if kind == 'run' else 'integer'}), not {sample!r}"
        ) from None
    return pl.concat([ids, values], how="horizontal")
