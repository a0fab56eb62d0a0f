"""Decisions between models: confidence intervals of the metrics and paired comparisons.

Both read the per-sample table an engine computes in one pass over the data (on any engine, in
buckets under a memory budget); the resampling (:mod:`polars_rankmetrics.inference`) never reads
the input again. Samples are resampled, never rows, independently within each ``by`` group.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from os import PathLike
from typing import Any, Unpack

import numpy as np
import polars as pl

from polars_rankmetrics.checks import validation
from polars_rankmetrics.engines import driver
from polars_rankmetrics.engines.base import Progress, get_engine
from polars_rankmetrics.engines.driver import TopK
from polars_rankmetrics.inference import resampling
from polars_rankmetrics.inference.corrections import CORRECTIONS, adjusted
from polars_rankmetrics.inputs.columns import ColumnNames, Columns, documented
from polars_rankmetrics.metrics.parameters import parameters
from polars_rankmetrics.metrics.registry import COUNT_KEYS, Context, MetricKey, parse_keys
from polars_rankmetrics.metrics.sums import undefined_as_nan, weight_column

CI_METHODS = ("percentile", "bca")
_DECIMALS = 12
TESTS = ("permutation", "bootstrap", "t", "wilcoxon")
COMPARE_COLUMNS = (
    "metric", "value", "baseline_value", "delta", "delta_lo", "delta_hi", "p_value",
    "p_adjusted", "wins", "ties", "losses",
)  # fmt: skip


# The _micro averages that are ratios of sums over samples (of the counts of COUNT_KEYS); the
# curve ones (average_precision_micro, roc_auc_micro) are not.
MICRO = {
    "precision_micro": "precision", "recall_micro": "recall", "f1_micro": "f1",
    "fbeta_micro": "fbeta", "jaccard_micro": "jaccard",
}  # fmt: skip


def supported_keys(keys: Sequence[MetricKey], *, micro: bool = False) -> None:
    """Every key is a weighted mean over samples (what resampling samples estimates), or, with
    ``micro``, a ratio of sums over samples (the threshold ``_micro`` averages)."""
    for key in keys:
        if key.metric.reduction != "samples" and not (micro and key.name in MICRO):
            supported = "the ranking and retrieval keys, the _samples averages, hamming_loss, "
            supported += "subset_accuracy, zero_one_loss"
            if micro:
                supported += ", and " + ", ".join(MICRO)
            raise ValueError(
                f"{key} is computed over labels, not as a mean over samples: it has no "
                f"{'interval' if micro else 'paired test'} here; supported: {supported}"
            )


def _micro(
    kind: str, tp: np.ndarray, fp: np.ndarray, fn: np.ndarray, context: Context
) -> np.ndarray:
    """A _micro average from (means or sums of) the counts, as
    :func:`~polars_rankmetrics.metrics.classification.set_score` defines it; a 0/0 is
    ``zero_division``."""
    b2 = 1.0 if kind == "f1" else context.beta**2
    num, den = {
        "precision": (tp, tp + fp), "recall": (tp, tp + fn),
        "f1": ((1 + b2) * tp, (1 + b2) * tp + b2 * fn + fp),
        "fbeta": ((1 + b2) * tp, (1 + b2) * tp + b2 * fn + fp), "jaccard": (tp, tp + fp + fn),
    }[kind]  # fmt: skip
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), context.zero_division)


def per_sample_keys(keys: Sequence[MetricKey]) -> list[MetricKey]:
    """The per-sample columns an interval of ``keys`` reads: the keys averaged over samples,
    and the counts when a _micro average is asked for."""
    columns = [k for k in keys if k.metric.reduction == "samples"]
    if any(k.name in MICRO for k in keys):
        columns += [MetricKey(name) for name in COUNT_KEYS if MetricKey(name) not in columns]
    return columns


def check_level(level: float, name: str = "ci") -> None:
    if isinstance(level, bool) or not isinstance(level, int | float) or not 0 < level < 1:
        raise ValueError(
            f"{name} must be a confidence level in (0, 1), such as 0.95, not {level!r}"
        )


def check_intervals(level: float, n_boot: int, method: str) -> None:
    """The options of a bootstrap interval: a level in (0, 1), a positive number of
    replicates, a method of :data:`CI_METHODS`."""
    check_level(level)
    _count(n_boot, "n_boot")
    if method not in CI_METHODS:
        raise ValueError(f"ci_method must be one of {', '.join(CI_METHODS)}, not {method!r}")


def _count(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive integer, not {value!r}")
    return value


def _arrays(frame: pl.DataFrame, keys: Sequence[MetricKey]) -> tuple[np.ndarray, np.ndarray]:
    """Samples x keys: the per-sample values (NaN where undefined) and their weights."""
    names = [str(k) for k in keys]
    values = frame.select(pl.col(names).cast(pl.Float64).fill_null(float("nan"))).to_numpy()
    weights = frame.select(
        pl.col([weight_column(k) for k in keys]).cast(pl.Float64).fill_null(0.0)
    ).to_numpy()
    return values.reshape(frame.height, len(keys)), weights.reshape(frame.height, len(keys))


def _values(frame: pl.DataFrame, key: MetricKey) -> np.ndarray:
    """One key's per-sample values (NaN where undefined)."""
    return frame[str(key)].cast(pl.Float64).fill_null(float("nan")).to_numpy()


def _stacked(
    mine: pl.DataFrame, base: pl.DataFrame, keys: Sequence[MetricKey]
) -> tuple[resampling.Paired, np.ndarray]:
    """The :class:`~polars_rankmetrics.inference.resampling.Paired` table of two models' rows
    (the same samples in the same order), read a column at a time (no other copy of either
    table), and per model and key whether a value is undefined."""
    frames = (mine, base)

    def column(model: int, key: int) -> tuple[np.ndarray, np.ndarray]:
        frame = frames[model]
        weights = frame[weight_column(keys[key])].cast(pl.Float64).fill_null(0.0).to_numpy()
        return _values(frame, keys[key]), weights

    undefined = np.array([[np.isnan(_values(f, key)).any() for key in keys] for f in frames])
    return resampling.paired_table(mine.height, len(keys), column), undefined


def _means(sums: np.ndarray, undefined: np.ndarray, keys: Sequence[MetricKey]) -> np.ndarray:
    """Each key's weighted mean from its sums of weighted values and of weights; NaN for a key
    whose undefined sample value makes it NaN."""
    k = len(keys)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(sums[k:] > 0, sums[:k] / sums[k:], math.nan)
    for j, key in enumerate(keys):
        if key.metric.undefined == "nan" and undefined[j]:
            means[j] = math.nan
    return means


def _estimates(values: np.ndarray, weights: np.ndarray, keys: Sequence[MetricKey]) -> np.ndarray:
    """:func:`_means` of per-sample ``values`` and their ``weights`` (samples x keys)."""
    sums = resampling.weighted_sums(values, weights)
    return _means(sums, np.isnan(values).any(axis=0), keys)


def frame_means(frame: pl.DataFrame, keys: Sequence[MetricKey]) -> np.ndarray:
    """:func:`_means` of a per-sample table's rows (each key's value and weight, ``key/w``),
    summed by Polars: no array copy of the table."""
    sums, undefined = [], []
    for key in keys:
        value = pl.col(str(key)).cast(pl.Float64)
        defined = value.is_not_null() & value.is_not_nan()
        weight = pl.when(defined).then(pl.col(weight_column(key)).cast(pl.Float64)).otherwise(0.0)
        sums += [(weight * value.fill_nan(0.0)).sum().alias(f"{key}/v"), weight.sum()]
        undefined.append((~defined).any().alias(f"{key}/x"))
    found = frame.select(*sums, *undefined).row(0)
    k = len(keys)
    weighted, weights = found[0 : 2 * k : 2], found[1 : 2 * k : 2]
    return _means(np.array(weighted + weights), np.array(found[2 * k :]), keys)


Groups = list[tuple[tuple[Any, ...], pl.DataFrame]]


def sample_groups(
    pieces: list[pl.DataFrame], cols: Columns, keys: Sequence[MetricKey]
) -> tuple[Groups, dict[str, Any]]:
    """Each ``by`` group's per-sample rows (``pieces``: :func:`~.driver.collect`'s, a frame per
    group sorted by sample, undefined values as NaN), groups in order: the table resampling
    reads, held once."""
    by_types = {b: pieces[0].schema[b] for b in cols.by}
    groups = []
    while pieces:
        rows = undefined_as_nan(pieces.pop(0), keys)
        groups.append((rows.select(cols.by).row(0) if cols.by else (), rows))
    groups.sort(key=lambda group: [(v is None, v) for v in group[0]])
    return groups, by_types


def intervals(
    groups: Groups,
    by_types: dict[str, Any],
    cols: Columns,
    keys: Sequence[MetricKey],
    *,
    level: float,
    n_boot: int,
    seed: int | None,
    method: str,
    context: Context,
) -> pl.DataFrame:
    """Per ``by`` group: each key's estimate and its bootstrap interval (``key_lo``,
    ``key_hi``), from each group's rows (:func:`sample_groups`: the per-sample values of
    :func:`per_sample_keys` with their weights, ``key/w``, sorted by sample). A _micro average
    is its ratio applied to the resampled means of the counts."""
    columns = per_sample_keys(keys)
    at = {str(k): j for j, k in enumerate(columns)}
    rows = []
    base_seed = resampling.entropy(seed)
    for g, (values_of_group, frame) in enumerate(groups):
        values, weights = _arrays(frame, columns)
        means = _estimates(values, weights, columns)
        draws = resampling.bootstrap_means(
            values, weights, n_boot, resampling.generator(base_seed, g)
        )
        loo = resampling.jackknife_means(values, weights) if method == "bca" else None

        def pick(table: np.ndarray, key: MetricKey) -> np.ndarray:
            if key.name in MICRO:
                tp, fp, fn = (table[..., at[name]] for name in COUNT_KEYS)
                return _micro(MICRO[key.name], tp, fp, fn, context)
            return table[..., at[str(key)]]

        estimate = np.array([pick(means, k) for k in keys], dtype=np.float64)
        replicates = np.stack([pick(draws, k) for k in keys], axis=1)
        for j, key in enumerate(keys):
            if key.metric.undefined == "nan" and math.isnan(estimate[j]):
                replicates[:, j] = math.nan
        if loo is not None:
            jackknife = np.stack([pick(loo, k) for k in keys], axis=1)
            lo, hi = resampling.bca_interval(replicates, estimate, jackknife, level)
        else:
            lo, hi = resampling.percentile_interval(replicates, level)
        row: dict[str, Any] = dict(zip(cols.by, values_of_group, strict=True))
        for j, key in enumerate(keys):
            row |= {str(key): estimate[j], f"{key}_lo": lo[j], f"{key}_hi": hi[j]}
        rows.append(row)
    names = [name for key in keys for name in (str(key), f"{key}_lo", f"{key}_hi")]
    schema: dict[str, Any] = dict(by_types)
    schema |= dict.fromkeys(names, pl.Float64)
    return pl.DataFrame(rows, schema=schema, orient="row")


@documented(ColumnNames)
def compare(
    data: Any,
    metrics: str | Sequence[str] | None = None,
    *,
    by: str | Sequence[str] = "model",
    baseline: Any = "baseline",
    test: str = "permutation",
    correction: str | None = "holm",
    n_resamples: int = 10_000,
    n_boot: int = 1000,
    ci: float = 0.95,
    seed: int | None = 0,
    on_missing: str = "error",
    truth_table: Any = None,
    n_labels: int | None = None,
    propensities: Any = None,
    engine: str = "polars",
    log_base: float = 2,
    threshold: float = 0.5,
    beta: float = 1.0,
    zero_division: float | str = "warn",
    memory_limit: str | None = None,
    temp_dir: str | PathLike[str] | None = None,
    progress: Progress | None = None,
    **columns: Unpack[ColumnNames],
) -> pl.DataFrame:
    """Compare every model (value of ``by``) with the baseline, metric by metric, on the samples
    they share.

    Parameters
    ----------
    data
        The long table of every model (as for :func:`~polars_rankmetrics.evaluate`), or a top-k
        table with ``truth_table``.
    metrics
        Metric keys averaged over samples (the ranking and retrieval keys, the ``_samples``
        averages, ``hamming_loss``, ``subset_accuracy``, ``zero_one_loss``). Default: the six
        ranking metrics.
    by
        The column(s) naming the model; one result row per other model and metric.
    baseline
        The baseline's value of ``by`` (a tuple for several columns).
    test
        ``"permutation"``: Fisher's paired randomization test, two-sided: each sample's two
        values swapped with probability 1/2, ``n_resamples`` times, p = (hits + 1) /
        (n_resamples + 1); exact (every sign pattern) where 2^n <= ``n_resamples``.
        ``"bootstrap"``: the paired bootstrap's two-sided p, the ``n_resamples`` replicates of
        the delta centred on the observed one. ``"t"``: ``scipy.stats.ttest_rel`` on the
        per-sample values. ``"wilcoxon"``: ``scipy.stats.wilcoxon`` on their differences
        (scipy's defaults), rounded to 12 decimals as for ``wins``. The t and Wilcoxon tests
        are unweighted: a weight column is refused with them. Samples whose value is undefined
        for either model take no part in the tests.
    correction
        Over all (model, metric) rows: ``"holm"``, ``"bonferroni"``, ``"fdr_bh"``
        (Benjamini-Hochberg) or None.
    n_resamples
        Resamples of the permutation and bootstrap tests. A sample weight weighs the
        per-sample values in the means and in the resampling.
    n_boot, ci
        Replicates and level of the paired bootstrap interval of the delta.
    seed
        Seed of every draw: the same seed gives the same numbers on every engine, whole or in
        buckets, for any row order.
    on_missing
        ``"error"``: samples present for one model and not the other are refused, naming one
        and the counts; ``"drop"``: the models are compared on the samples they share.
    truth_table, n_labels, propensities, engine, log_base, threshold, beta, zero_division, \
memory_limit, temp_dir, progress
        As for :func:`~polars_rankmetrics.evaluate`.
    **columns

    Returns
    -------
    polars.DataFrame
        One row per (model, metric), models and metrics in order: the ``by`` column(s),
        ``metric``, ``value``, ``baseline_value``, ``delta`` (value minus baseline value, for a
        lower-is-better metric too), ``delta_lo``, ``delta_hi``, ``p_value``, ``p_adjusted``,
        ``wins``, ``ties``, ``losses`` (samples where the model is better, equal or worse by the
        metric's direction, the differences rounded to 12 decimals so that float noise splits
        no tie; a sample whose value is undefined for either model counts in none).

    Raises
    ------
    ValueError
        For bad input (as :func:`~polars_rankmetrics.evaluate`), a key not averaged over
        samples, an unknown test or correction, a baseline that is not a value of ``by``, or
        samples missing from one model (``on_missing="error"``).

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankmetrics as rm
    >>> df = pl.concat([
    ...     rm.from_dense([[1, 0], [0, 1], [1, 1]], [[0.9, 0.2], [0.3, 0.7], [0.4, 0.8]])
    ...     .with_columns(model=pl.lit("baseline")),
    ...     rm.from_dense([[1, 0], [0, 1], [1, 1]], [[0.9, 0.2], [0.8, 0.7], [0.4, 0.8]])
    ...     .with_columns(model=pl.lit("candidate")),
    ... ])
    >>> rm.compare(df, ["lrap"], by="model").select("model", "delta", "wins", "losses").row(0)
    ('candidate', -0.16666666666666663, 0, 1)
    """
    if test not in TESTS:
        raise ValueError(f"test must be one of {', '.join(TESTS)}, not {test!r}")
    if correction is not None and correction not in CORRECTIONS:
        raise ValueError(
            f"correction must be one of {', '.join(CORRECTIONS)} or None, not {correction!r}"
        )
    if on_missing not in ("error", "drop"):
        raise ValueError(f"on_missing must be 'error' or 'drop', not {on_missing!r}")
    if test in ("t", "wilcoxon") and columns.get("weight") is not None:
        raise ValueError(
            f"test={test!r} compares unweighted per-sample values: with weight= use "
            "test='permutation' or test='bootstrap'"
        )
    check_intervals(ci, n_boot, "percentile")
    n_resamples = _count(n_resamples, "n_resamples")
    keys = parse_keys(metrics)
    supported_keys(keys)
    by_columns = [by] if isinstance(by, str) else list(by)
    if not by_columns:
        raise ValueError("compare needs by=, the column(s) naming the model")
    cols = Columns.of(by=by_columns, **columns)
    context = parameters(
        log_base=log_base, threshold=threshold, beta=beta, zero_division=zero_division
    )
    validation.check_result_names(cols, [str(k) for k in keys])
    with driver.inside_names(cols) as inner:
        collected, _ = driver.collect(
            get_engine(engine), data, inner, keys, ["per_sample"], parameters=context,
            inputs=TopK(truth_table, n_labels, propensities), memory_limit=memory_limit,
            temp_dir=temp_dir, progress=progress,
        )  # fmt: skip
        # Each model's rows as the driver hands them over: one copy of millions of samples.
        groups, by_types = sample_groups(collected.pop("per_sample"), inner, keys)
        result = paired(
            dict(groups), by_types, inner, keys, baseline=baseline, test=test,
            correction=correction, n_resamples=n_resamples, n_boot=n_boot, level=ci, seed=seed,
            on_missing=on_missing,
        )  # fmt: skip
    return inner.restored(result)


def _baseline_key(baseline: Any, by: Sequence[str]) -> tuple[Any, ...]:
    return tuple(baseline) if isinstance(baseline, tuple | list) else (baseline,)


def _describe(value: tuple[Any, ...], by: Sequence[str]) -> str:
    return ", ".join(f"{b}={v!r}" for b, v in zip(by, value, strict=True))


def _aligned(
    model: pl.DataFrame, base: pl.DataFrame, cols: Columns, names: tuple[str, str], drop: bool
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The rows of the samples both tables hold, in the same (sorted) order; without ``drop``
    a sample of one table only is refused, naming one and the counts. Tables of the same
    samples in the same order (the usual case) are returned as they are."""
    s = cols.sample
    if model[s].equals(base[s]) and model[s].is_sorted():
        return model, base
    only_model = model.join(base.select(s), on=s, how="anti", nulls_equal=True)
    only_base = base.join(model.select(s), on=s, how="anti", nulls_equal=True)
    if not drop and (only_model.height or only_base.height):
        example = (only_model if only_model.height else only_base).sort(s)[s][0]
        where = names[0] if only_model.height else names[1]
        raise ValueError(
            f"{names[0]} and the baseline {names[1]} do not hold the same samples: "
            f"{only_model.height} of {model.height} samples of {names[0]} are not in the "
            f"baseline, {only_base.height} of {base.height} samples of the baseline are not in "
            f"{names[0]} (e.g. {s}={example!r}, of {where}); pass on_missing='drop' to compare "
            "them on the samples they share"
        )
    shared = model.join(base.select(s), on=s, how="semi", nulls_equal=True).sort(s)
    return shared, base.join(shared.select(s), on=s, how="semi", nulls_equal=True).sort(s)


def paired(
    groups: dict[tuple[Any, ...], pl.DataFrame],
    by_types: dict[str, Any],
    cols: Columns,
    keys: Sequence[MetricKey],
    *,
    baseline: Any,
    test: str,
    correction: str | None,
    n_resamples: int,
    n_boot: int,
    level: float,
    seed: int | None,
    on_missing: str,
) -> pl.DataFrame:
    """:func:`compare` from the per-sample rows of each model (``groups``, by their ``by``
    values, each sorted by sample) with the keys' weights (``key/w``)."""
    if test in ("t", "wilcoxon"):  # scipy's import costs a second: only where it is used
        from scipy import stats  # type: ignore[import-untyped]

    by = list(cols.by)
    base_key = _baseline_key(baseline, by)
    if base_key not in groups:
        found = ", ".join(_describe(k, by) for k in groups) or "none"
        raise ValueError(
            f"the baseline {_describe(base_key, by)} is not a value of the by column(s) "
            f"(found: {found})"
        )
    rows: list[dict[str, Any]] = []
    base_seed = resampling.entropy(seed)
    for m, (model_key, model) in enumerate(groups.items()):
        if model_key == base_key:
            continue
        names = (_describe(model_key, by), _describe(base_key, by))
        mine, base = _aligned(model, groups[base_key], cols, names, on_missing == "drop")
        table, undefined = _stacked(mine, base, keys)
        sums = table.table.sum(axis=0)
        values = _means(table.model_sums(sums, 0), undefined[0], keys)
        base_values = _means(table.model_sums(sums, 1), undefined[1], keys)
        deltas = values - base_values
        replicates = resampling.bootstrap_deltas(
            table, n_boot, resampling.generator(base_seed, m, 0)
        )
        replicates[:, np.isnan(deltas)] = math.nan
        lo, hi = resampling.percentile_interval(replicates, level)
        rng = resampling.generator(base_seed, m, 1)
        if test == "permutation":
            p_values = resampling.sign_flip_p_values(table, n_resamples, rng)
        elif test == "bootstrap":
            null = resampling.bootstrap_deltas(table, n_resamples, rng)
            p_values = resampling.bootstrap_p_values(null, deltas)
        del table
        for j, key in enumerate(keys):
            v1, v0 = _values(mine, key), _values(base, key)
            both = ~(np.isnan(v1) | np.isnan(v0))
            # Rounded to 12 decimals: the engines sum in parallel, and float noise must not
            # split a tie, or make an equal pair a win (the Wilcoxon test drops zeros).
            d = np.round(v1[both] - v0[both], _DECIMALS)
            better = d if key.metric.better == "higher" else -d
            if test == "t":
                t = stats.ttest_rel(v1[both], v0[both]) if both.sum() > 1 else None
                p = math.nan if t is None else float(t.pvalue)
            elif test == "wilcoxon":
                p = float(stats.wilcoxon(d).pvalue) if np.any(d != 0) else 1.0
            else:
                p = float(p_values[j])
            rows.append(
                dict(zip(by, model_key, strict=True))
                | {
                    "metric": str(key),
                    "value": float(values[j]),
                    "baseline_value": float(base_values[j]),
                    "delta": float(deltas[j]),
                    "delta_lo": float(lo[j]),
                    "delta_hi": float(hi[j]),
                    "p_value": p,
                    "wins": int(np.sum(better > 0)),
                    "ties": int(np.sum(better == 0)),
                    "losses": int(np.sum(better < 0)),
                }  # fmt: skip
            )
    p_adjusted = adjusted(np.array([r["p_value"] for r in rows], dtype=np.float64), correction)
    for row, q in zip(rows, p_adjusted, strict=True):
        row["p_adjusted"] = float(q)
    schema: dict[str, Any] = dict(by_types)
    schema |= {"metric": pl.String} | dict.fromkeys(
        ("value", "baseline_value", "delta", "delta_lo", "delta_hi", "p_value", "p_adjusted"),
        pl.Float64,
    )
    schema |= dict.fromkeys(("wins", "ties", "losses"), pl.Int64)
    frame = pl.DataFrame(rows, schema=schema, orient="row")
    return frame.select(*by, *COMPARE_COLUMNS)
