"""``evaluate``: many metrics over a long table in one pass, on any registered engine."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Unpack

import polars as pl

from polars_rankmetrics.checks import validation
from polars_rankmetrics.engines import driver, topk, trec_pass
from polars_rankmetrics.engines.key_rules import Part, TrecOptions, joined, key_parts
from polars_rankmetrics.inference.intervals import check_bootstrap, check_intervals, intervals
from polars_rankmetrics.inference.samples import per_sample_keys, sample_groups, supported_keys
from polars_rankmetrics.inference.units import unit_intervals, unit_tables
from polars_rankmetrics.inputs.columns import Columns
from polars_rankmetrics.inputs.sources import Source
from polars_rankmetrics.metrics import trec_kernel
from polars_rankmetrics.metrics.parameters import parameters
from polars_rankmetrics.metrics.registry import MetricKey, parse_keys
from polars_rankmetrics.options import Options, Run, documented


@documented(Options)
def evaluate(
    data: Any,
    metrics: str | Sequence[str | MetricKey] | None = None,
    *,
    truth_table: Any = None,
    n_labels: int | None = None,
    propensities: Any = None,
    by: str | Sequence[str] | None = None,
    per_sample: bool = False,
    log_base: float = 2,
    threshold: float = 0.5,
    beta: float = 1.0,
    zero_division: float | str = "warn",
    ci: float | None = None,
    n_boot: int = 1000,
    seed: int | None = 0,
    ci_method: str = "percentile",
    bootstrap: str = "multinomial",
    ties: str | None = None,
    relevance_level: int = 1,
    max_docs: int | None = None,
    judged_only: bool = False,
    complete: bool = False,
    **options: Unpack[Options],
) -> pl.DataFrame:
    """Compute several metrics over a long table in one pass.

    Parameters
    ----------
    data
        A DataFrame or LazyFrame with one row per (sample, label), or the path of a Parquet file,
        a glob, or a list of paths. On DuckDB also a relation or a table name; a LazyFrame
        given to DuckDB is collected first. With ``truth_table``: the predictions, one row per
        scored (sample, label), any number per sample (the top k, or all), without truth.
    metrics
        Metric keys (a list, or one key): ``coverage_error``, ``lrap``, ``ranking_loss``,
        ``lwlrap``, ``dcg``, ``ndcg``, ``dcg@K`` / ``ndcg@K`` for any K >= 1, the threshold
        metrics below, and the retrieval metrics ``precision@K``, ``recall@K``,
        ``hit_rate@K``, ``hits@K``, ``mrr``, ``mrr@K``, ``map``, ``map@K``, ``r_precision``,
        ``r_precision@K``, ``psprecision@K``, ``psndcg@K``, their ``_norm`` variants and
        pyxclib's ``psprecision_ratio@K``, ``psrecall_ratio@K``, ``psndcg_ratio@K``, and over
        labels ``label_coverage@K``, ``macro_precision@K``, ``macro_recall@K`` (see
        :mod:`polars_rankmetrics.metrics.retrieval`). Default: the six ranking metrics.
        With ``truth_table`` (the qrels), the TREC keys, by trec_eval's names (``P_5``,
        ``recall_100``, ``map_cut_10``, ``ndcg_cut_10``, ``Rprec``, ``recip_rank``,
        ``bpref``, ``infAP``, ``gm_map``, ``num_rel``, ...) or ir_measures' (``P@5``,
        ``P(rel=2)@5``, ``AP``, ``RR``, ``nDCG@10``, ``R@100``, ``Bpref``, ...), computed as
        trec_eval computes them (:mod:`polars_rankmetrics.metrics.trec`). In a call with a TREC
        key, ``map`` and ``ndcg`` are trec_eval's too, and the library's other keys keep their
        definitions, each key read by its own rules
        (:func:`~polars_rankmetrics.engines.key_rules.key_parts`: the binary ones take a
        relevance at least ``relevance_level`` as relevant); without one, ``map`` and ``ndcg``
        are the library's. Each result column is named by the name asked for. ``gm_map`` and
        ``gm_bpref`` are geometric means; ``num_*`` are means per topic here
        (:func:`~polars_rankmetrics.trec_eval` prints trec_eval's sums). The SQL engines
        compute every TREC key, with its parameters and relevance level
        (sql/19_trec_per_sample.sql).
    truth_table
        A top-k evaluation (:mod:`polars_rankmetrics.engines.topk`, Polars engine): the true
        labels, one row per (sample, label) with an optional gain in the ``truth`` column (1
        without it), as a frame, path or glob. A true label without a prediction is unscored: it
        ranks below every scored label of its sample, tied with the other unscored labels. The
        samples are those of either table.
    n_labels
        The size of the label space of a top-k evaluation, which the ranking metrics need (they
        count the unscored labels, in closed form); the retrieval metrics do not.
    propensities
        For the propensity-scored keys: a table of the label column and ``propensity``
        (in (0, 1]), for example from :func:`~polars_rankmetrics.label_propensities`.
    by
        Column(s) splitting the table into independent evaluations (one result row each). Any
        name works except that of a result column (a requested metric key, or, per sample, the
        sample column) or of another role's column (sample, label, ...): those are refused.
    per_sample
        Return one row per sample (with the ``by`` and sample columns) instead of the means.
        lwlrap's per-sample value is the sample's mean precision (null without positives).
    log_base
        Base of dcg's logarithmic discount, > 1 (ndcg does not depend on it).
    threshold
        For the threshold metrics (``hamming_loss``, ``subset_accuracy``, ``zero_one_loss``,
        ``precision_samples``, ``recall_samples``, ``f1_samples``, ``fbeta_samples``,
        ``jaccard_samples``) without a ``pred`` column: a label is predicted where its score is
        at least ``threshold`` (default 0.5).
    beta
        The F-beta weight of recall, > 0, for ``fbeta_samples``.
    zero_division
        The value of a 0/0 precision, recall, F or Jaccard: ``"warn"`` (default, as
        scikit-learn: 0, with one :class:`~polars_rankmetrics.UndefinedMetricWarning` per call
        naming the keys, how many labels or samples, and a few labels), 0, 1, or NaN
        (``"nan"``: the sample or label drops out of that metric's mean); a number or ``"nan"``
        silences the warning. ROC AUC of a one-class label or sample and average precision of
        one without positives warn whatever ``zero_division`` is, as in scikit-learn (see
        :mod:`polars_rankmetrics.metrics.undefined`).
    ci
        A confidence level, such as 0.95: beside each key, ``<key>_lo`` and ``<key>_hi``, a
        bootstrap interval of the mean: ``n_boot`` resamples of the samples (never rows), drawn
        independently within each ``by`` group from ``seed`` (the same seed gives the same
        interval on every engine, whole or in buckets, for any row order; None: fresh
        entropy). ``ci_method``: ``"percentile"`` (default) or ``"bca"`` (Efron's bias-corrected
        and accelerated interval). The keys must be averaged over samples, or be a threshold
        ``_micro`` average (a ratio of sums over samples, resampled as such); the ``_macro``
        and ``_weighted`` averages and the curves' ``_micro`` are refused. Not with
        ``per_sample``.
    bootstrap
        How ``ci`` resamples. ``"multinomial"`` (default): each replicate draws n samples with
        repetition from the group's n samples. ``"poisson"``: the Poisson bootstrap by units,
        for intervals that merge. Each sample falls into one of 4,096 resampling units by the
        md5 hash of its id (integer or string ids; an integer hashes as its decimal text, so
        ``7`` and ``"7"`` are the same sample), and replicate r draws each unit a Poisson(1)
        number of times, a function of (unit, r, seed) alone
        (:mod:`polars_rankmetrics.inference.hashing` documents the arithmetic, which the SQL
        repeats). The replicates' sums therefore add up across partitions, buckets, engines
        and evaluation states: the interval does not depend on how the data was split or
        ordered, and one finalized from states equals the one of ``evaluate`` on their union.
        Drawing units rather than samples is an approximation: with fewer samples than units
        most units hold one sample; with more, a unit sums a random subset of them, which
        estimates the variance of the mean as the samples do, to a factor 1 - 1/4096. A
        replicate that draws no weight for a key is left out of its interval; BCa's
        acceleration leaves out one unit at a time. ``seed=None`` draws fresh entropy,
        reduced modulo 2^31 - 1, as every seed is (seeds equal modulo 2^31 - 1 draw alike).
    ties
        How tied scores within a sample are ordered. ``"average"`` (the default of every key
        but the TREC keys): no order is chosen; ``dcg``, ``ndcg`` and the retrieval keys take
        their expected value over the orders of each tied block, the other keys scikit-learn's
        tie rules (docs/metrics.md), so the result never depends on row order or label names.
        ``"trec_eval"`` (the default and only rule of the TREC keys): trec_eval's order, score
        descending, then the label descending as text (``"b"`` before ``"a"``, ``"9"`` before
        ``"10"``); the retrieval keys then equal trec_eval's on tied runs.
        :func:`~polars_rankmetrics.tie_report` counts the samples whose ties straddle a
        cut-off, where the rules differ.
    relevance_level
        For the TREC keys (trec_eval's ``-l``): a judged relevance at least this is relevant
        (default 1); ``nDCG``'s gains are the relevance values whatever the level.
    max_docs
        For the TREC keys (``-M``): only the first ``max_docs`` documents of each topic, in
        trec_eval's order, are retrieved.
    judged_only
        For the TREC keys (``-J``): the documents the qrels do not judge (absent, or a negative
        relevance) are removed from the run, and the rest renumbered.
    complete
        For the TREC keys (``-c``): every topic of the qrels is evaluated, a topic missing
        from the run retrieving nothing (0 on every measure but the counts of relevant
        documents). Without it, the topics are those of both the run and the qrels, as
        trec_eval 9 and pytrec_eval take them (trec_eval 10.0 stops instead); a run's topic
        missing from the qrels is never evaluated.
    **options

    Warns
    -----
    UndefinedMetricWarning
        Where a requested metric is ill-defined for some labels or samples (above).

    Returns
    -------
    polars.DataFrame
        One column per metric key (named by the key; with ``ci``, followed by ``<key>_lo`` and
        ``<key>_hi``), after the ``by`` columns, sorted by them.

    Raises
    ------
    ValueError
        For input that the metrics are not defined on: a missing column, a non-numeric score,
        null or NaN in score or truth, truth outside {0, 1} for the binary metrics, negative truth,
        a label repeated within a sample, samples with different label sets, an empty table,
        sample weights that are not constant within a sample or sum to 0, an integer or
        decimal score that a 64-bit float cannot hold exactly (every engine ranks as Float64),
        a bad ``log_base`` or memory limit.

    Examples
    --------
    >>> import polars_rankmetrics as rm
    >>> df = rm.from_dense([[1, 0, 1], [0, 1, 0]], [[0.9, 0.5, 0.2], [0.3, 0.8, 0.1]])
    >>> rm.evaluate(df, ["lrap", "ndcg@2", "f1_samples"])
    shape: (1, 3)
    ┌──────────┬──────────┬────────────┐
    │ lrap     ┆ ndcg@2   ┆ f1_samples │
    │ ---      ┆ ---      ┆ ---        │
    │ f64      ┆ f64      ┆ f64        │
    ╞══════════╪══════════╪════════════╡
    │ 0.916667 ┆ 0.806574 ┆ 0.75       │
    └──────────┴──────────┴────────────┘

    Notes
    -----
    The means are sums over samples in parallel, so they may differ from scikit-learn's (and
    from run to run) in the last bits: equal to about 1e-12 relative, not bit for bit.
    """
    keys = parse_keys(metrics)
    context = parameters(
        log_base=log_base, threshold=threshold, beta=beta, zero_division=zero_division
    )
    run, cols = Run.of(options, by=by)
    parts = key_parts(
        data, truth_table, keys, cols, context, ties=ties,
        trec=TrecOptions(relevance_level, max_docs, judged_only, complete),
    )  # fmt: skip
    check_bootstrap(bootstrap)
    if ci is not None:
        check_intervals(ci, n_boot, ci_method)
        if per_sample:
            raise ValueError("ci= gives intervals of the means: not with per_sample=True")
        supported_keys(keys, micro=True)
    validation.check_result_names(cols, [str(k) for k in keys])
    interval = {"level": ci, "n_boot": n_boot, "seed": seed, "method": ci_method,
                "bootstrap": bootstrap}  # fmt: skip
    results = [
        _evaluated(run, cols, part, driver.TopK(part.truth_table, n_labels, propensities),
                   per_sample=per_sample, interval=interval)
        for part in parts
    ]  # fmt: skip
    on = list(cols.sample_keys if per_sample else cols.by)
    return joined(results, on, keys)


def _evaluated(
    run: Run, cols: Columns, part: Part, inputs: driver.TopK, *, per_sample: bool,
    interval: dict[str, Any],
) -> pl.DataFrame:  # fmt: skip
    """The result of one part's keys (:func:`~polars_rankmetrics.key_rules.key_parts`): the
    means, per-sample values, or with ``interval["level"]`` the means and their intervals."""
    data, keys, context = part.data, part.keys, part.context
    if interval["level"] is None:
        in_one_pass = _in_one_pass(run, cols, part, per_sample=per_sample)
        if in_one_pass is not None:
            return in_one_pass
        result = run.evaluate(data, cols, keys, parameters=context, inputs=inputs,
                              per_sample=per_sample)  # fmt: skip
        return _geometric(result, keys)
    ci, n_boot, seed = interval["level"], interval["n_boot"], interval["seed"]
    ci_method = interval["method"]
    columns_read = per_sample_keys(keys)
    with driver.inside_names(cols) as inner:
        collected, _ = run.collect(
            data, inner, columns_read, ["per_sample"], parameters=context, inputs=inputs
        )
        groups, by_types = sample_groups(collected.pop("per_sample"), inner, columns_read)
        if interval["bootstrap"] == "poisson":
            result = unit_intervals(
                unit_tables(groups, inner.sample, columns_read), by_types, inner, keys,
                level=ci, n_boot=n_boot, seed=seed, method=ci_method, context=context,
            )  # fmt: skip
        else:
            result = intervals(groups, by_types, inner, keys, level=ci, n_boot=n_boot,
                               seed=seed, method=ci_method, context=context)  # fmt: skip
    return _geometric(inner.restored(result), keys)


def _in_one_pass(run: Run, cols: Columns, part: Part, *, per_sample: bool) -> pl.DataFrame | None:
    """The TREC keys of a part on the Polars engine, without a memory budget or weights, as
    :func:`~polars_rankmetrics.trec_eval` computes them
    (:func:`~polars_rankmetrics.engines.trec_pass.topic_values`: the run sorted once, every key
    in one pass), per sample or their means; None where the part is not one such
    (the driver then evaluates it)."""
    qrels, keys = part.truth_table, part.keys
    if run.engine.name != "polars" or run.memory_limit is not None or cols.weight is not None:
        return None
    if not isinstance(qrels, topk.Qrels) or not trec_kernel.supported(keys):
        return None
    preparation = qrels.preparation
    trec = TrecOptions(part.context.relevance_level, preparation.max_docs,
                       preparation.judged_only, preparation.complete)  # fmt: skip
    values = trec_pass.topic_values(part.data, qrels.table, keys, trec, cols.in_source())
    if values is None or values.height == 0:  # no topic in common: the driver refuses
        return None
    names = [str(key) for key in keys]
    if per_sample:  # trec_eval's 0 / 0 is NaN, as the driver gives it
        return values.sort(list(cols.in_source().sample_keys))
    means = [
        (pl.col(str(key)).log() if key.metric.geometric else pl.col(str(key))).mean()
        for key in keys
    ]
    by = list(cols.in_source().by)
    result = values.group_by(by).agg(means).sort(by) if by else values.select(means)
    return _geometric(result.select(*by, *names), keys)


def _geometric(result: pl.DataFrame, keys: Sequence[MetricKey]) -> pl.DataFrame:
    """``result`` with the means of the geometric keys' logarithms (and their intervals'
    ends) exponentiated: their geometric means (per sample, the floored values)."""
    names = {str(key) for key in keys if key.metric.geometric}
    logs = [c for c in result.columns if c in names or c[:-3] in names and c[-3:] in ("_lo", "_hi")]
    return result.with_columns(pl.col(logs).exp()) if logs else result


@documented(Options)
def tie_report(
    data: Any,
    k: int | Sequence[int] = (1, 5, 10),
    *,
    truth_table: Any = None,
    by: str | Sequence[str] | None = None,
    **options: Unpack[Options],
) -> pl.DataFrame:
    """Count the samples whose tied scores make the tie rule matter (``evaluate(ties=)``).

    A tied block (labels of a sample sharing a score) straddles a cut-off K when it holds
    positions K and K + 1: the rules then disagree on which of its labels fall within the top
    K. They disagree on a number only where such a block mixes true and false labels.

    Parameters
    ----------
    data
        The scored rows: a long table, or a top-k table's predictions (with ``truth_table``),
        as :func:`evaluate` reads them (read with Polars).
    k
        The cut-offs to audit (positive integers).
    truth_table
        The true labels of a top-k table (a ``truth`` column, 1 without one; a ``by`` column
        it lacks gives every group the same truth, as qrels shared by runs), or None: the
        truth is ``data``'s truth column where it has one.
    by
        Column(s) splitting the table into groups, one row each.
    **options

    Returns
    -------
    polars.DataFrame
        One row per ``by`` group (sorted by them): ``samples``; ``tied``, the samples with a
        tied block; ``straddling@K``, those with a block straddling K; with truth, ``mixed``,
        those with a block mixing true (truth > 0) and false labels (where map, mrr and the
        ranking metrics depend on the rule), and ``mixed@K``, those with a mixed block
        straddling K (where precision@K, recall@K, P_K, ... do). A sample without a tie counts
        in ``samples`` alone; unscored labels (a top-k table's) are never tied.

    Raises
    ------
    ValueError
        For a cut-off that is not a positive integer, or a missing column.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankmetrics as rm
    >>> run = pl.DataFrame({"sample": [1, 1, 1, 2, 2], "label": ["a", "b", "c", "a", "b"],
    ...                     "score": [0.9, 0.5, 0.5, 0.3, 0.2], "truth": [0, 1, 0, 1, 0]})
    >>> rm.tie_report(run, [1, 2]).row(0)  # sample 1 ties b and c at positions 2 and 3
    (2, 1, 0, 1, 1, 0, 1)
    """
    cuts = [k] if isinstance(k, int) else list(k)
    if not cuts or any(isinstance(c, bool) or not isinstance(c, int) or c < 1 for c in cuts):
        raise ValueError(f"k must be positive integers, not {k!r}")
    _, cols = Run.of(options, by=by)
    keys = cols.sample_keys
    rows = Source.of(data).lazy()
    if truth_table is not None:
        true = Source.of(truth_table).lazy()
        schema = true.collect_schema()
        gain = pl.col(cols.truth) if cols.truth in schema else pl.lit(1)
        # A by column the truth table lacks (the run tag of runs sharing qrels) is not joined on.
        on = [*(b for b in cols.by if b in schema), cols.sample, cols.label]
        rows = rows.join(true.select(*on, gain.alias("__truth")), on=on, how="left")
        truth: pl.Expr | None = pl.col("__truth").fill_null(0) > 0
    elif cols.truth in rows.collect_schema():
        truth = pl.col(cols.truth) > 0
    else:
        truth = None
    score = pl.col(cols.score)
    first = score.rank("min", descending=True).over(keys)
    last = score.rank("max", descending=True).over(keys)
    flags = [(last > first).alias("tied")]
    flags += [((first <= c) & (last > c)).alias(f"straddling@{c}") for c in cuts]
    if truth is not None:
        mixed = truth.n_unique().over(*keys, cols.score) > 1
        flags.append(mixed.alias("mixed"))
        flags += [(mixed & (first <= c) & (last > c)).alias(f"mixed@{c}") for c in cuts]
    names = [str(f.meta.output_name()) for f in flags]
    per_sample = (
        rows.filter(score.is_not_null())
        .select(*keys, *flags)
        .group_by(keys)
        .agg(pl.col(names).any())
    )
    counts = [pl.len().alias("samples"), *(pl.col(n).sum() for n in names)]
    counts = [count.cast(pl.Int64) for count in counts]
    if cols.by:
        return per_sample.group_by(cols.by).agg(counts).sort(cols.by).collect()
    return per_sample.select(counts).collect()
