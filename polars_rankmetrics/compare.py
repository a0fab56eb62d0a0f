"""``compare``: every model against a baseline, or every pair of models, metric by metric, on
the samples they share.

The engines compute each model's per-sample values in one pass over the data (on any engine, in
buckets under a memory budget); the paired tests and intervals
(:mod:`polars_rankmetrics.inference`) never read the input again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Unpack

import polars as pl

from polars_rankmetrics.checks import validation
from polars_rankmetrics.engines import driver
from polars_rankmetrics.engines.key_rules import TrecOptions, key_parts, merged_per_sample
from polars_rankmetrics.inference.corrections import CORRECTIONS
from polars_rankmetrics.inference.intervals import check_bootstrap, check_count, check_intervals
from polars_rankmetrics.inference.paired import (
    TESTS,
    CompareOptions,
    baseline_values,
    paired,
    typed_baseline,
)
from polars_rankmetrics.inference.pairs import (
    MANY_TESTS,
    all_pairs,
    default_correction,
    other,
    unit_pairs,
)
from polars_rankmetrics.inference.recorded import zero_division as zero_division_param
from polars_rankmetrics.inference.samples import sample_groups, supported_keys
from polars_rankmetrics.inference.units import check_unit_test, paired_by_units, unit_paired
from polars_rankmetrics.inputs.columns import Columns, by_names
from polars_rankmetrics.metrics.parameters import parameters
from polars_rankmetrics.metrics.registry import parse_keys
from polars_rankmetrics.options import Options, Run, documented
from polars_rankmetrics.states import is_state, merge


@documented(Options)
def compare(
    data: Any,
    metrics: str | Sequence[str] | None = None,
    *,
    by: str | Sequence[str] = "model",
    baseline: Any = "baseline",
    test: str = "permutation",
    correction: str | None = "auto",
    n_resamples: int = 10_000,
    n_boot: int = 1000,
    ci: float = 0.95,
    seed: int | None = 0,
    bootstrap: str = "multinomial",
    on_missing: str = "error",
    truth_table: Any = None,
    n_labels: int | None = None,
    propensities: Any = None,
    log_base: float = 2,
    threshold: float = 0.5,
    beta: float = 1.0,
    zero_division: float | str = "warn",
    ties: str | None = None,
    relevance_level: int = 1,
    max_docs: int | None = None,
    judged_only: bool = False,
    complete: bool = False,
    **options: Unpack[Options],
) -> pl.DataFrame:
    """Compare every model (value of ``by``) with the baseline, or every pair of models
    (``baseline=None``), metric by metric, on the samples they share.

    Parameters
    ----------
    data
        The long table of every model (as for :func:`~polars_rankmetrics.evaluate`), or a top-k
        table with ``truth_table``. Or states of :func:`~polars_rankmetrics.state` kept with
        ``intervals=True`` (as :func:`~polars_rankmetrics.finalize` takes them), each model a
        value of their ``by``: the comparison of the data behind them, with
        ``bootstrap="poisson"`` (the draws are their resampling units) and their parameters;
        ``wins``, ``ties`` and ``losses`` are null (states hold no per-sample values), and the
        models must hold the same samples (a unit whose sample counts differ is refused).
    metrics
        Metric keys averaged over samples (the ranking and retrieval keys, the ``_samples``
        averages, ``hamming_loss``, ``subset_accuracy``, ``zero_one_loss``). Default: the six
        ranking metrics.
    by
        The column(s) naming the model; one result row per other model and metric. Several
        columns name a model together: with ``by=["model", "slice"]`` each (model, slice) pair
        is a model, and every pair other than the baseline's, of any slice, is compared with
        the baseline on the samples they share (to compare the models within each slice,
        compare each slice's rows).
    baseline
        The baseline's value of ``by``: for one column, the value (or a tuple or dict of one);
        for several, a tuple of one value per column, in their order, or a dict naming each of
        them (``{"model": "baseline", "slice": "s"}``). A baseline of another shape is refused.
        None: every pair of models (A, B), A before B in the models' sorted order, each given
        once, compared on the samples every model holds (see Returns).
        A ``str`` given for a column of integers, floats or booleans is read as the column's
        type, as the command line gives it: ``"0"`` is 0 in an integer column, ``"0.5"`` the
        float 0.5 in a float column (parsed exactly, at the column's precision), ``"true"`` and
        ``"false"`` are the booleans; a text that does not read as the type is refused. No
        other value is converted.
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
        With ``baseline=None``, two tests of every model at once, family-wise over the pairs
        of one metric (:mod:`~polars_rankmetrics.inference.tukey`,
        :mod:`~polars_rankmetrics.inference.randomized_tukey`): ``"tukey_hsd"``, Tukey's HSD on
        the two-way ANOVA without replication (the samples as blocks): with m models, n
        samples and ``V_E`` the residual mean square with (m - 1)(n - 1) degrees of freedom,
        ``q = |delta| / sqrt(V_E / n)``, p the studentized range's survival function at q,
        and the simultaneous interval ``delta +- q_crit(ci) sqrt(V_E / n)``; and
        ``"randomized_tukey"``, Carterette's randomized Tukey HSD: ``n_resamples`` permutations
        each shuffling every sample's m values among the models, p = (1 + #{permuted ranges of
        the means >= |delta|}) / (n_resamples + 1), the interval delta +- the ``ci`` quantile
        of the ranges; one set of permutations from ``seed`` for every pair and metric. Both
        compare unweighted means: a weight column, and lwlrap, are refused with them; samples
        whose value is undefined for any model take no part for that metric.
    correction
        ``"holm"``, ``"bonferroni"``, ``"fdr_bh"`` (Benjamini-Hochberg) or None, over all
        (model, metric) rows, or (pair, metric) rows; for ``tukey_hsd`` and
        ``randomized_tukey`` over each pair's metrics only (the tests already hold the family
        of the pairs). ``"auto"`` (default): None for these two tests, Holm's for the others.
    n_resamples
        Resamples of the permutation and bootstrap tests. A sample weight weighs the
        per-sample values in the means and in the resampling.
    n_boot, ci
        Replicates and level of the paired bootstrap interval of the delta.
    seed
        Seed of every draw: the same seed gives the same numbers on every engine, whole or in
        buckets, for any row order.
    bootstrap
        How the samples are drawn. ``"multinomial"`` (default): the bootstrap draws n of the n
        shared samples with repetition, the permutation test swaps each sample's pair on its
        own. ``"poisson"``: the draws of :func:`~polars_rankmetrics.evaluate`'s
        ``bootstrap="poisson"``, functions of the samples' ids, so that a comparison merges
        across partitions, engines and evaluation states: the samples fall into 4,096 units by
        the hash of their ids, the bootstrap (interval and test) draws each unit a Poisson(1)
        number of times, and the permutation test's ``n_resamples`` patterns swap whole units,
        each unit's pair with probability 1/2 (a subgroup of the sign flips, so the test keeps
        its level under the null; p = (hits + 1) / (n_resamples + 1), never enumerated). The
        draws are made once for every model and metric, and their cost does not grow with the
        samples. Only with the permutation and bootstrap tests (t and Wilcoxon read samples).
        ``seed=None``: fresh entropy, reduced modulo 2^31 - 1.
    on_missing
        ``"error"``: samples present for one model and not the other are refused, naming one
        and the counts (with ``baseline=None``: a sample that some model lacks, naming it, a
        model that holds it and one that does not); ``"drop"``: the models are compared on the
        samples they share (all of them, with ``baseline=None``).
    truth_table, n_labels, propensities, log_base, threshold, beta, zero_division, ties
        As for :func:`~polars_rankmetrics.evaluate`.
    relevance_level, max_docs, judged_only, complete
        The TREC keys' options (trec_eval's ``-l``, ``-M``, ``-J``, ``-c``), as for
        :func:`~polars_rankmetrics.evaluate`; with ``complete`` a topic of the qrels that a run
        lacks scores 0 for it, and so is shared by every run.
    **options

    Returns
    -------
    polars.DataFrame
        One row per (model, metric), models and metrics in order: the ``by`` column(s),
        ``metric``, ``value``, ``baseline_value``, ``delta`` (value minus baseline value, for a
        lower-is-better metric too), ``delta_lo``, ``delta_hi``, ``p_value``, ``p_adjusted``,
        ``effect_size``, ``wins``, ``ties``, ``losses`` (samples where the model is better,
        equal or worse by the metric's direction, the differences rounded to 12 decimals so
        that float noise splits no tie; a sample whose value is undefined for either model
        counts in none). ``effect_size``: the paired standardized mean difference
        ``mean(d) / sd(d)`` (ddof 1) of the per-sample differences d (NaN with fewer than two,
        or all equal); for the Tukey tests Sakai's ``ES_E = delta / sqrt(V_E)``; null from
        states, as the wins, ties and losses.

        With ``baseline=None``, one row per pair (A, B) and metric, pairs and metrics in
        order: A's ``by`` column(s), B's (each named ``<column>_other``), ``metric``,
        ``value`` (A's), ``other_value`` (B's), ``delta`` (A minus B), ``delta_lo``,
        ``delta_hi``, ``p_value``, ``p_adjusted``, ``effect_size``, ``wins``, ``ties``,
        ``losses`` (A's). The paired tests' intervals come from one set of ``n_boot``
        resamples for every pair.

    Raises
    ------
    ValueError
        For bad input (as :func:`~polars_rankmetrics.evaluate`), a key not averaged over
        samples, an unknown test or correction, a baseline whose shape does not match ``by``
        (naming the columns and the baseline given), a text baseline that does not read as its
        column's type, a baseline that is not a value of ``by``, samples missing from one
        model (``on_missing="error"``), fewer than two models with ``baseline=None``, a
        Tukey test with a baseline, a weight column or lwlrap, or ``tukey_hsd`` with
        ``bootstrap="poisson"`` (it reads per-sample values; states hold none).

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
    correction = check_test(test, correction, baseline, bootstrap, options.get("weight"))
    if on_missing not in ("error", "drop"):
        raise ValueError(f"on_missing must be 'error' or 'drop', not {on_missing!r}")
    check_intervals(ci, n_boot, "percentile")
    n_resamples = check_count(n_resamples, "n_resamples")
    by_columns = by_names(by)
    if not by_columns:
        raise ValueError("compare needs by=, the column(s) naming the model")
    base = None if baseline is None else baseline_values(baseline, by_columns)
    how = CompareOptions(test, correction, n_resamples, n_boot, ci, seed, on_missing)
    context = parameters(
        log_base=log_base, threshold=threshold, beta=beta, zero_division=zero_division
    )
    if is_state(data):
        if ties is not None:
            raise ValueError("ties= does not apply to states: they are evaluated already")
        if (relevance_level, max_docs, judged_only, complete) != (1, None, False, False):
            raise ValueError(
                "relevance_level, max_docs, judged_only and complete do not apply to states: "
                "they are evaluated already"
            )
        if bootstrap != "poisson" or on_missing != "error":
            raise ValueError(
                "compare of states draws by their resampling units: pass bootstrap='poisson' "
                "(and on_missing='error': the models must hold the same samples)"
            )
        given = {"truth_table": truth_table, "n_labels": n_labels, "propensities": propensities}
        merged = merge(data, by_columns, options={
            **{name: value for name, value in given.items() if value is not None}, **options
        })  # fmt: skip
        merged.require("compare", log_base=context.log_base, threshold=context.threshold,
                       beta=context.beta, zero_division=zero_division_param(context))  # fmt: skip
        keys = merged.keys(metrics)
        supported_keys(keys)
        groups, by_types = merged.unit_groups("compare")
        if base is None:
            pairs = unit_pairs(dict(groups), by_types, merged.cols, keys, how)
            return _restored(merged.cols, pairs)
        result = unit_paired(
            dict(groups), by_types, merged.cols, keys, how,
            baseline=typed_baseline(base, by_columns, list(by_types.values())),
        )  # fmt: skip
        return merged.cols.restored(result)
    keys = parse_keys(metrics)
    supported_keys(keys)
    if any(key.metric.geometric for key in keys):
        raise ValueError("gm_map and gm_bpref are geometric means: compare AP or Bpref")
    run, cols = Run.of(options, by=by_columns)
    parts = key_parts(
        data, truth_table, keys, cols, context, ties=ties,
        trec=TrecOptions(relevance_level, max_docs, judged_only, complete),
    )  # fmt: skip
    validation.check_result_names(cols, [str(k) for k in keys])
    with driver.inside_names(cols) as inner:
        pieces = [
            run.collect(
                part.data, inner, part.keys, ["per_sample"], parameters=part.context,
                inputs=driver.TopK(part.truth_table, n_labels, propensities),
            )[0].pop("per_sample")
            for part in parts
        ]  # fmt: skip
        # Each model's rows as the driver hands them over: one copy of millions of samples.
        groups, by_types = sample_groups(merged_per_sample(pieces, inner, keys), inner, keys)
        if base is None:
            pairs = all_pairs(
                dict(groups), by_types, inner, keys, how, by_units=bootstrap == "poisson"
            )
            return _restored(inner, pairs)
        compared = paired_by_units if bootstrap == "poisson" else paired
        result = compared(
            dict(groups), by_types, inner, keys, how,
            baseline=typed_baseline(base, by_columns, list(by_types.values())),
        )  # fmt: skip
    return inner.restored(result)


def check_test(
    test: str, correction: str | None, baseline: Any, bootstrap: str, weight: str | None
) -> str | None:
    """``test`` and ``correction`` checked against each other and the other options; the
    correction that ``"auto"`` stands for (:func:`.pairs.default_correction`)."""
    if test not in (*TESTS, *MANY_TESTS):
        raise ValueError(f"test must be one of {', '.join((*TESTS, *MANY_TESTS))}, not {test!r}")
    if correction == "auto":
        correction = default_correction(test)
    if correction is not None and correction not in CORRECTIONS:
        raise ValueError(
            f"correction must be one of {', '.join(CORRECTIONS)}, 'auto' or None, not "
            f"{correction!r}"
        )
    check_bootstrap(bootstrap)
    if test in MANY_TESTS:
        if baseline is not None:
            raise ValueError(
                f"test={test!r} compares every pair of models at once: pass baseline=None "
                "(on the command line, --all-pairs)"
            )
        if weight is not None:
            raise ValueError(
                f"test={test!r} compares unweighted means (its variance is the ANOVA's, of "
                "equally weighted samples): with weight= use test='permutation' or "
                "test='bootstrap'"
            )
        if bootstrap == "poisson" and test == "tukey_hsd":
            raise ValueError(
                "test='tukey_hsd' reads per-sample values: with bootstrap='poisson' use "
                "test='randomized_tukey', whose permutations move whole units"
            )
    elif bootstrap == "poisson":
        check_unit_test(test)
    if test in ("t", "wilcoxon") and weight is not None:
        raise ValueError(
            f"test={test!r} compares unweighted per-sample values: with weight= use "
            "test='permutation' or test='bootstrap'"
        )
    return correction


def _restored(cols: Columns, pairs: pl.DataFrame) -> pl.DataFrame:
    """A table of pairs with its ``by`` columns, and model B's, under the user's names."""
    return cols.restored(pairs).rename(
        {other(inner): other(outer) for outer, inner in cols.aliases}
    )
