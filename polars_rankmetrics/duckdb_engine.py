"""The DuckDB engine: the views of ``sql/`` over any source, evaluated lazily and spilling to disk.

The SQL files are the single source of the SQL; this module only names the input for them. It
creates two relations the views read:

- ``rankmetrics_input(grp, sample, label, score, truth, weight)``: the user's table with its
  columns renamed (identifiers quoted, never pasted), ``grp`` a struct of the ``by`` columns;
- ``rankmetrics_cutoffs(k)``: the dcg/ndcg cut-offs wanted (NULL for no cut), inserted as bound
  parameters.

Under a memory budget too small for the whole table, ``rankmetrics_input`` is pointed at one
hash bucket of whole samples at a time, and the buckets' ``rankmetrics_sums`` are added up.
"""

from __future__ import annotations

import math
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import duckdb
import polars as pl

from polars_rankmetrics import validation as checks
from polars_rankmetrics.columns import Columns
from polars_rankmetrics.keys import MetricKey
from polars_rankmetrics.memory import bucket_count, engine_limit
from polars_rankmetrics.sources import Source, parquet_paths

_GAIN_METRICS = ("dcg", "ndcg")

# Bytes of DuckDB's share of the budget that one row of a bucket needs. Past it, DuckDB's memory
# outside its buffer manager (the per-sample aggregation over millions of samples) takes the
# process over the budget; measured in benchmarks/out_of_core.py.
BYTES_PER_ROW = 10

Progress = Callable[[float, float], None]


def sql_directory() -> Path:
    """Where the SQL files are: in the installed package, or the checkout's top-level ``sql/``."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "sql", here.parent / "sql"):
        if any(candidate.glob("*.sql")):
            return candidate
    raise FileNotFoundError("the rankmetrics SQL files are missing from this installation")


def sql_files() -> list[Path]:
    """The view definitions, in the order they must run (each reads the ones before it)."""
    return sorted(sql_directory().glob("*.sql"))


def quote_identifier(name: str) -> str:
    """A SQL identifier for any column name: double-quoted, inner quotes doubled."""
    return '"' + name.replace('"', '""') + '"'


def connect(
    memory_limit: str | None = None, temp_directory: str | None = None
) -> duckdb.DuckDBPyConnection:
    """An in-memory connection. ``memory_limit`` (e.g. ``"1GB"``) is the budget of the whole
    process: DuckDB gets its share (:mod:`polars_rankmetrics.memory`) and spills beyond it."""
    config: dict[str, str] = {"preserve_insertion_order": "false"}
    if memory_limit is not None:
        config["memory_limit"] = engine_limit(memory_limit)
    if temp_directory is not None:
        config["temp_directory"] = temp_directory
    try:
        return duckdb.connect(config=config)
    except duckdb.Error as error:
        raise ValueError(f"bad DuckDB setting: {error}") from None


def _is_table(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    found = con.execute(
        "SELECT count(*) FROM (SELECT table_name AS name FROM duckdb_tables() "
        "UNION ALL SELECT view_name FROM duckdb_views()) WHERE name = ?",
        [name],
    ).fetchall()
    return found[0][0] > 0


def _relation(
    con: duckdb.DuckDBPyConnection, source: Source | duckdb.DuckDBPyRelation
) -> duckdb.DuckDBPyRelation:
    if isinstance(source, duckdb.DuckDBPyRelation):
        return source
    if isinstance(source, pl.LazyFrame):
        source = source.collect()
    if isinstance(source, pl.DataFrame):
        return con.from_arrow(source.to_arrow())
    if isinstance(source, str) and _is_table(con, source):
        return con.sql(f"SELECT * FROM {quote_identifier(source)}")
    return con.read_parquet(parquet_paths(source))


def _input_view(cols: Columns, bucket: tuple[int, int] | None = None) -> str:
    """``rankmetrics_input`` over the source; with ``bucket=(i, n)`` only the samples whose id
    hashes to ``i`` modulo ``n`` (a bucket of whole samples)."""
    q = quote_identifier
    grp = "struct_pack(" + ", ".join(f"{q(b)} := {q(b)}" for b in cols.by) + ")" if cols.by else "0"
    weight = f"CAST({q(cols.weight)} AS DOUBLE)" if cols.weight else "1.0"
    where = ""
    if bucket is not None:
        i, n = (int(part) for part in bucket)
        where = f" WHERE hash({q(cols.sample)}) % {n} = {i}"
    return (
        "CREATE OR REPLACE VIEW rankmetrics_input AS SELECT "
        f"{grp} AS grp, {q(cols.sample)} AS sample, {q(cols.label)} AS label, "
        f"CAST({q(cols.score)} AS DOUBLE) AS score, CAST({q(cols.truth)} AS DOUBLE) AS truth, "
        f"{weight} AS weight FROM rankmetrics_source{where}"
    )


def register_views(
    con: duckdb.DuckDBPyConnection,
    source: Source | duckdb.DuckDBPyRelation,
    *,
    sample: str = "sample",
    label: str = "label",
    score: str = "score",
    truth: str = "truth",
    weight: str | None = None,
    by: str | Sequence[str] | None = None,
    cutoffs: Iterable[int | None] = (None,),
) -> None:
    """Create the rankmetrics views on ``con`` over ``source``.

    ``source`` is a DuckDB relation, a Polars frame, the name of a table or view of ``con``, or a
    Parquet path, glob or list of paths. Afterwards ``rankmetrics_per_sample`` and
    ``rankmetrics_summary`` answer queries (one row per group, sample and cut-off ``k``), as do the
    checks ``rankmetrics_row_checks`` and ``rankmetrics_group_checks``. Nothing is computed yet.
    """
    cols = Columns.of(sample=sample, label=label, score=score, truth=truth, weight=weight, by=by)
    _register(con, source, cols, cutoffs)


def _register(
    con: duckdb.DuckDBPyConnection,
    source: Source | duckdb.DuckDBPyRelation,
    cols: Columns,
    cutoffs: Iterable[int | None],
) -> None:
    _relation(con, source).create_view("rankmetrics_source", replace=True)
    checks.check_schema(con.sql("SELECT * FROM rankmetrics_source LIMIT 0").pl().schema, cols)
    con.execute(_input_view(cols))
    con.execute("CREATE OR REPLACE TEMP TABLE rankmetrics_cutoffs (k BIGINT)")
    con.executemany(
        "INSERT INTO rankmetrics_cutoffs VALUES (?)", [[k] for k in dict.fromkeys(cutoffs)]
    )
    for path in sql_files():
        con.execute(path.read_text())


def _where(cols: Columns, grp: object, **named: object) -> dict[str, object]:
    group = dict(grp) if cols.by and isinstance(grp, dict) else {}
    return group | {getattr(cols, role): value for role, value in named.items()}


def check_rows_duckdb(
    con: duckdb.DuckDBPyConnection, cols: Columns, keys: Sequence[MetricKey]
) -> None:
    """The row checks of :mod:`polars_rankmetrics.validation`, by ``rankmetrics_row_checks``."""
    rows = con.sql("SELECT * FROM rankmetrics_row_checks").pl().row(0, named=True)
    for i, b in enumerate(cols.by):
        found = con.sql(
            "SELECT grp, sample, label FROM rankmetrics_input "
            f"WHERE grp.{quote_identifier(b)} IS NULL LIMIT 1"
        ).pl()
        rows[f"null_by_{i}"] = found.row(0, named=True) if found.height else None
    if rows["n_rows"] == 0:
        checks.raise_empty()
    for pid, message in checks.row_problems(cols, keys).items():
        example = rows.get(pid)
        if example is not None:
            where = _where(cols, example["grp"], sample=example["sample"], label=example["label"])
            checks.raise_row_problem(message, where)


def check_samples_duckdb(con: duckdb.DuckDBPyConnection, cols: Columns) -> pl.DataFrame:
    """The per-sample checks, by ``rankmetrics_group_checks``: each sample carries its group's
    label set (``rankmetrics_group_labels``) once and one weight. Returns the groups' label
    counts and summed sample weights (``grp``, ``group_labels``, ``weight_sum``)."""
    groups = con.sql("SELECT * FROM rankmetrics_group_checks").pl()
    for group in groups.iter_rows(named=True):
        grp = group["grp"]
        if group["repeated_label_sample"] is not None:
            sample = group["repeated_label_sample"]
            label = _repeated_label(con, grp, sample)
            checks.raise_repeated_label(cols, label, _where(cols, grp, sample=sample))
        if group["label_set_sample"] is not None:
            bad = group["label_set_sample"]
            where = _where(cols, grp, sample=bad["sample"])
            checks.raise_label_sets(cols, where, bad["n_labels"], group["group_labels"])
        if group["varying_weight_sample"] is not None:
            checks.raise_varying_weight(
                cols, _where(cols, grp, sample=group["varying_weight_sample"])
            )
    return groups.select("grp", "group_labels", "weight_sum")


def check_weight_totals_duckdb(groups: pl.DataFrame, cols: Columns) -> None:
    """:func:`~polars_rankmetrics.validation.check_weight_totals` on rows of
    :func:`check_samples_duckdb` (possibly one per bucket)."""
    weights = groups.select("grp", weight="weight_sum")
    weights = weights.unnest("grp") if cols.by else weights.rename({"grp": "__all"})
    checks.check_weight_totals(weights, cols)


def validate_duckdb(
    con: duckdb.DuckDBPyConnection, cols: Columns, keys: Sequence[MetricKey]
) -> None:
    """The checks of :mod:`polars_rankmetrics.validation`, run by the SQL of ``06_checks.sql``."""
    check_rows_duckdb(con, cols, keys)
    groups = check_samples_duckdb(con, cols)
    check_weight_totals_duckdb(groups, cols)
    checks.check_label_count(groups, cols, keys)


def _repeated_label(con: duckdb.DuckDBPyConnection, grp: object, sample: object) -> object:
    found = con.execute(
        "SELECT grp, label FROM rankmetrics_input WHERE sample = ? "
        "GROUP BY grp, label HAVING count(*) > 1",
        [sample],
    ).fetchall()
    return next(label for g, label in found if g == grp)


@contextmanager
def _reporting(
    con: duckdb.DuckDBPyConnection, progress: Progress | None, stage: int, stages: int
) -> Iterator[None]:
    """While the block runs a query on ``con``, report its progress as ``stage + share`` of
    ``stages`` (DuckDB's own progress estimate, polled twice a second)."""
    if progress is None:
        yield
        return
    stop = threading.Event()

    def poll() -> None:
        while not stop.wait(0.5):
            percent = con.query_progress()
            if percent >= 0:
                progress(stage + percent / 100, stages)

    watcher = threading.Thread(target=poll, daemon=True)
    watcher.start()
    try:
        yield
    finally:
        stop.set()
        watcher.join()
    progress(stage + 1, stages)


def _result_frame(
    raw: pl.DataFrame,
    cols: Columns,
    keys: Sequence[MetricKey],
    *,
    per_sample: bool,
    log_base: float,
) -> pl.DataFrame:
    """Reshape the views' rows (one per group, [sample,] cut-off) to one column per metric key."""
    frame = raw.unnest("grp") if cols.by else raw.drop("grp")
    ids = [*cols.by, "sample"] if per_sample else list(cols.by)
    dcg_scale = math.log(log_base) / math.log(2)  # 1/log_b(x) = ln(b) / ln(x)
    first_k = frame["k"][0] if frame.height else None
    parts = []
    for key in keys:
        value = pl.col(key.name) * dcg_scale if key.name == "dcg" else pl.col(key.name)
        k = key.k if key.name in _GAIN_METRICS else first_k
        parts.append(frame.filter(pl.col("k").eq_missing(k)).select(*ids, value.alias(str(key))))
    if not ids:
        return pl.concat(parts, how="horizontal")
    result = parts[0]
    for part in parts[1:]:
        result = result.join(part, on=ids, how="left", nulls_equal=True)
    result = result.sort(ids)
    return result.rename({"sample": cols.sample}) if per_sample else result


def _evaluate_in_buckets(
    con: duckdb.DuckDBPyConnection,
    cols: Columns,
    keys: Sequence[MetricKey],
    n: int,
    *,
    per_sample: bool,
    progress: Progress | None,
) -> pl.DataFrame:
    """What the per-sample or summary view gives for the whole table, computed on ``n`` buckets
    of whole samples one at a time. The row checks and the groups' label sets are taken from the
    whole table first; each bucket adds its rows to ``rankmetrics_bucket_sums``, whose sums make
    the summary."""
    with _reporting(con, progress, 0, n + 1):
        check_rows_duckdb(con, cols, keys)
        con.execute(
            "CREATE TEMP TABLE rankmetrics_whole_labels AS SELECT * FROM rankmetrics_group_labels"
        )
    con.execute(
        "CREATE OR REPLACE VIEW rankmetrics_group_labels AS SELECT * FROM rankmetrics_whole_labels"
    )
    checks.check_label_count(con.sql("SELECT * FROM rankmetrics_group_labels").pl(), cols, keys)
    con.execute("CREATE TEMP TABLE rankmetrics_bucket_sums AS FROM rankmetrics_sums LIMIT 0")
    groups, parts = [], []
    for i in range(n):
        con.execute(_input_view(cols, bucket=(i, n)))
        with _reporting(con, progress, i + 1, n + 1):
            groups.append(check_samples_duckdb(con, cols))
            if per_sample:
                parts.append(con.sql("SELECT * FROM rankmetrics_per_sample").pl())
            else:
                con.execute("INSERT INTO rankmetrics_bucket_sums FROM rankmetrics_sums")
    check_weight_totals_duckdb(pl.concat(groups), cols)
    if per_sample:
        return pl.concat(parts)
    con.execute(
        "CREATE OR REPLACE VIEW rankmetrics_sums AS SELECT grp, k, "
        "sum(COLUMNS(* EXCLUDE (grp, k))) FROM rankmetrics_bucket_sums GROUP BY grp, k"
    )
    return con.sql("SELECT * FROM rankmetrics_summary").pl()


def evaluate_duckdb(
    data: Source | duckdb.DuckDBPyRelation,
    cols: Columns,
    keys: Sequence[MetricKey],
    *,
    per_sample: bool = False,
    log_base: float = 2,
    memory_limit: str | None = None,
    progress: Progress | None = None,
) -> pl.DataFrame:
    """Evaluate on DuckDB; see :func:`polars_rankmetrics.evaluate`.

    With ``memory_limit`` (a budget for the whole process, e.g. ``"1GB"``) DuckDB keeps its share
    of it and spills to a temporary directory, removed afterwards; a table too large for one
    piece within the budget (``BYTES_PER_ROW``) is evaluated in buckets of whole samples.
    """
    spill = tempfile.mkdtemp(prefix="rankmetrics-") if memory_limit else None
    try:
        con = connect(memory_limit, spill)
        cutoffs = [k.k for k in keys if k.name in _GAIN_METRICS] or [None]
        _register(con, data, cols, cutoffs)
        if progress is not None:
            con.execute("SET enable_progress_bar = true")
            con.execute("SET enable_progress_bar_print = false")
        n = 1
        if memory_limit is not None:
            rows = con.execute("SELECT count(*) FROM rankmetrics_input").fetchall()[0][0]
            n = bucket_count(rows, memory_limit, BYTES_PER_ROW)
        if n > 1:
            raw = _evaluate_in_buckets(con, cols, keys, n, per_sample=per_sample, progress=progress)
        else:
            with _reporting(con, progress, 0, 2):
                validate_duckdb(con, cols, keys)
            view = "rankmetrics_per_sample" if per_sample else "rankmetrics_summary"
            with _reporting(con, progress, 1, 2):
                raw = con.sql(f"SELECT * FROM {view}").pl()
        con.close()
        return _result_frame(raw, cols, keys, per_sample=per_sample, log_base=log_base)
    finally:
        if spill is not None:
            shutil.rmtree(spill, ignore_errors=True)
