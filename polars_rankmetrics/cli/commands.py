"""What each command of ``rankmetrics`` computes, from its parsed arguments: a table to print, or
a file written."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

import polars as pl

from polars_rankmetrics.cli.option_groups import TIE_RULES
from polars_rankmetrics.cli.parser import (
    COMPARE_BY,
    TREC_BY,
    TREC_METRICS,
    UsageError,
    build_parser,
    metric_list,
    split_values,
)
from polars_rankmetrics.compare import compare
from polars_rankmetrics.evaluate import evaluate
from polars_rankmetrics.inputs.trec import TrecRun, read_trec_qrels, read_trec_run
from polars_rankmetrics.leaderboard import leaderboard
from polars_rankmetrics.metrics.registry import DEFAULT_METRICS, parse_keys
from polars_rankmetrics.report.labels import label_report
from polars_rankmetrics.report.page import html_report
from polars_rankmetrics.states import finalize, is_state, state
from polars_rankmetrics.trec import trec_eval


def by_columns(args: argparse.Namespace) -> list[str]:
    """The --by columns; compare's and leaderboard's default when it is not given (they need
    one: ``run``, the run's tag, with --trec)."""
    by = split_values(args.by)
    models = args.command in ("compare", "leaderboard")
    if (models or args.command == "report") and args.trec and not args.by:
        return [TREC_BY]
    if models and not args.by:
        return [COMPARE_BY]
    if models and not by:
        raise UsageError("--by must name the column(s) naming the model")
    return by


def compute(args: argparse.Namespace, options: dict[str, Any]) -> pl.DataFrame | None:
    """The result of the command ``args`` names (None: the HTML report, written to its
    file)."""
    if args.command == "state":
        if args.output is None or not args.output.lower().endswith(".parquet"):
            raise UsageError(
                "state writes a Parquet file: give -o STATE.parquet"
                + ("" if args.output is None else f", not {args.output!r}")
            )
        state(
            args.paths, split_values([args.metrics]), beta=args.beta, truth_table=args.truth_table,
            n_labels=args.n_labels, propensities=args.propensities, intervals=args.intervals,
            per_label=args.per_label, score_decimals=args.score_decimals, path=args.output,
            **options,
        )  # fmt: skip
        return None
    if args.command in ("evaluate", "compare", "leaderboard", "report") and is_state(args.paths):
        return _of_states(args, options)
    if args.command == "report" and args.html is not None:
        data, truth_table = inputs(args)
        metrics = None if args.metrics is None else split_values([args.metrics])
        html_report(
            data, baseline=baseline_of(args, options["by"]), ci=args.ci, n_boot=args.n_boot,
            seed=args.seed, bootstrap=args.bootstrap, truth_table=truth_table,
            n_labels=args.n_labels, propensities=args.propensities, k=args.k,
            metrics=metrics, path=args.html,
            ties="trec_eval" if args.trec and args.ties is None else args.ties,
            **_trec_arguments(args), **options,
        )  # fmt: skip
        return None
    if args.command == "report":
        given = {"--baseline": args.baseline, "--ci": args.ci, "--truth-table": args.truth_table,
                 "--trec": args.trec or None, "--max-docs": args.max_docs,
                 "--judged-only": args.judged_only or None, "--complete": args.complete or None,
                 "--relevance-level": args.relevance_level,
                 "--metrics": args.metrics, "--propensities": args.propensities}  # fmt: skip
        with_html = [name for name, value in given.items() if value is not None]
        if with_html:
            raise UsageError(f"{with_html[0]} goes with --html")
        if args.ties == "trec_eval":
            raise UsageError(
                "--ties trec_eval goes with --html and a run's --truth-table: the per-label "
                "table follows scikit-learn's tie rules (--ties average)"
            )
        return label_report(args.paths, **options)
    if args.command in ("compare", "leaderboard"):
        return _systems(args, options)
    metrics = metric_list(args.metrics or ",".join(DEFAULT_METRICS), args.k)
    return evaluate(
        args.paths, metrics, beta=args.beta,
        per_sample=args.per_sample, truth_table=args.truth_table, n_labels=args.n_labels,
        propensities=args.propensities, ci=args.ci, n_boot=args.n_boot, seed=args.seed,
        ci_method=args.ci_method, bootstrap=args.bootstrap, ties=args.ties,
        **_trec_arguments(args), **options,
    )  # fmt: skip


def inputs(args: argparse.Namespace) -> tuple[Any, Any]:
    """The data and the truth table the PATHs and ``--truth-table`` name: as given, or with
    ``--trec`` the run files and the qrels file read as ``rankmetrics trec`` reads them."""
    if not getattr(args, "trec", False):
        return args.paths, args.truth_table
    if args.truth_table is None:
        raise UsageError("--trec reads TREC run files against qrels: give --truth-table")
    return (
        read_trec_run(args.paths, memory_limit=args.memory_limit),
        read_trec_qrels(args.truth_table, memory_limit=args.memory_limit),
    )


def _systems(args: argparse.Namespace, options: dict[str, Any]) -> pl.DataFrame:
    """``compare`` (against ``--baseline``, or ``--all-pairs``) or ``leaderboard`` of data."""
    data, truth_table = inputs(args)
    default = TREC_METRICS if args.trec else DEFAULT_METRICS
    metrics = split_values([args.metrics or ",".join(default)])
    ties = "trec_eval" if args.trec and args.ties is None else args.ties
    shared: dict[str, Any] = dict(
        test=args.test, n_resamples=args.n_resamples, n_boot=args.n_boot, ci=args.ci,
        seed=args.seed, bootstrap=args.bootstrap, on_missing=args.on_missing,
        truth_table=truth_table, n_labels=args.n_labels, beta=args.beta, ties=ties,
        **correction_of(args), **_trec_arguments(args), **options,
    )  # fmt: skip
    if args.command == "leaderboard":
        return leaderboard(data, metrics, alpha=args.alpha, **shared)
    baseline = None if args.all_pairs else baseline_of(args, options["by"])
    return compare(data, metrics, baseline=baseline, **shared)


def correction_of(args: argparse.Namespace) -> dict[str, Any]:
    """``--correction`` as the keyword it gives (``none``: None); nothing where it is not
    given, so that the library's default for the test applies."""
    if args.correction is None:
        return {}
    return {"correction": None if args.correction == "none" else args.correction}


def baseline_of(args: argparse.Namespace, by: Sequence[str] | None) -> Any:
    """``--baseline``: with several ``--by`` columns, comma-separated values, one per column in
    their order (a value with a comma cannot be given then); with one, the text whole."""
    text = args.baseline
    if text is not None and by is not None and len(by) > 1 and "," in text:
        return tuple(text.split(","))
    return text


def _trec_arguments(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "relevance_level": 1 if args.relevance_level is None else args.relevance_level,
        "max_docs": args.max_docs,
        "judged_only": args.judged_only, "complete": args.complete,
    }  # fmt: skip


# The commands whose --metrics may hold TREC keys beside the library's (report's with --html).
_KEYED = ("evaluate", "compare", "leaderboard", "report")


def tie_rule(args: argparse.Namespace) -> str | None:
    """The tie rule to state on stderr after evaluate, compare, leaderboard or report:
    ``--ties``, else trec_eval's where evaluate, compare or leaderboard of data (or report
    --html with --metrics) asks for TREC keys (their only rule) or a command reads TREC files
    (``--trec``), else None (the library's keys under their default, stated in their docs)."""
    if getattr(args, "ties", None) is not None:
        return str(args.ties)
    if getattr(args, "trec", False):
        return "trec_eval"
    if args.command not in _KEYED or is_state(args.paths):
        return None
    if args.command == "report" and (args.html is None or args.metrics is None):
        return None
    keys = parse_keys(split_values([args.metrics or ",".join(DEFAULT_METRICS)]))
    return "trec_eval" if any(key.metric.family == "trec" for key in keys) else None


def tie_line(args: argparse.Namespace) -> str | None:
    """What the line on stderr says of the tie rule (:func:`tie_rule`; None: nothing): both
    rules where TREC keys and the library's keys are asked for together and the library's
    keep theirs (``--ties average``, or no ``--ties`` and no ``--trec``)."""
    rule = tie_rule(args)
    if rule is None:
        return None
    ties, trec = getattr(args, "ties", None), getattr(args, "trec", False)
    library_average = ties == "average" or ties is None and not trec
    if args.command in _KEYED and library_average:
        default = TREC_METRICS if trec else DEFAULT_METRICS
        keys = parse_keys(split_values([args.metrics or ",".join(default)]))
        families = {key.metric.family == "trec" for key in keys}
        if families == {True, False}:
            return (
                f"TREC keys: {TIE_RULES['trec_eval']}; the library's keys: {TIE_RULES['average']}"
            )
    return TIE_RULES[rule]


def run_trec(args: argparse.Namespace, options: dict[str, Any]) -> pl.DataFrame:
    """``rankmetrics trec``: rm.trec_eval's table of the files: read into memory once, as
    trec_eval reads them, or, under ``--memory-limit``, scanned by the engine within it."""
    budget = args.memory_limit
    run: Any = read_trec_run(args.runs, memory_limit=budget) if budget else TrecRun(args.runs)
    qrels: Any = read_trec_qrels(args.qrels, memory_limit=budget)
    # The evaluation reads its input more than once: without a budget, the text is parsed once
    # (the run a bucket of topics at a time, where its file allows).
    if budget is None:
        qrels = qrels.collect()
    return trec_eval(
        run, qrels, args.measure or ["official"],
        per_topic=args.per_topic, complete=args.complete, max_docs=args.max_docs,
        relevance_level=args.relevance_level, judged_only=args.judged_only, **options,
    )  # fmt: skip


# What evaluate and report of state files take from the command line; any other option given is
# refused, the states having recorded theirs.
_OF_STATES = {"command", "paths", "metrics", "k", "by", "ci", "ci_method", "n_boot", "seed",
              "bootstrap", "overlap", "format", "output", "quiet"}  # fmt: skip


# The metrics' parameters report and compare take too, which must be the states' own.
_OF_STATES_TOO = {
    "report": {"threshold", "zero_division"},
    "compare": {"threshold", "zero_division", "beta", "baseline", "all_pairs", "test",
                "correction", "n_resamples", "alpha"},
    "leaderboard": {"threshold", "zero_division", "beta", "test", "correction", "n_resamples",
                    "alpha"},
}  # fmt: skip


def _of_states(args: argparse.Namespace, options: dict[str, Any]) -> pl.DataFrame:
    """``evaluate`` (finalize), ``compare``, ``leaderboard`` or ``report`` of state files."""
    required = []
    if args.command == "compare":
        required = ["--all-pairs"] if args.all_pairs else ["--baseline", args.baseline]
    defaults = vars(build_parser().parse_args([args.command, *args.paths, *required]))
    taken = _OF_STATES | _OF_STATES_TOO.get(args.command, set())
    given = [
        name for name, value in vars(args).items()
        if name not in taken and value != defaults[name]
    ]  # fmt: skip
    if given:
        raise UsageError(
            f"--{given[0].replace('_', '-')} does not apply to state files: they are "
            "evaluated already, with the options they record"
        )
    if args.command in ("compare", "leaderboard"):
        shared: dict[str, Any] = dict(
            by=options["by"], test=args.test, n_resamples=args.n_resamples, n_boot=args.n_boot,
            ci=args.ci, seed=args.seed, bootstrap=args.bootstrap, threshold=args.threshold,
            beta=args.beta, zero_division=args.zero_division, **correction_of(args),
        )  # fmt: skip
        metrics = None if args.metrics is None else split_values([args.metrics])
        if args.command == "leaderboard":
            return leaderboard(args.paths, metrics, alpha=args.alpha, **shared)
        baseline = None if args.all_pairs else baseline_of(args, options["by"])
        return compare(args.paths, metrics, baseline=baseline, **shared)
    if args.command == "report":
        if args.html is not None:
            raise UsageError("--html reads the data, not state files")
        if args.metrics is not None:
            raise UsageError("--metrics goes with --html, which reads the data, not state files")
        return label_report(
            args.paths, by=options["by"], threshold=args.threshold,
            zero_division=args.zero_division,
        )  # fmt: skip
    if args.bootstrap != "poisson" and args.ci is not None:
        raise UsageError("intervals of state files are Poisson intervals: give --bootstrap poisson")
    metrics = None if args.metrics is None else metric_list(args.metrics, args.k)
    return finalize(
        args.paths, metrics, by=options["by"], ci=args.ci, n_boot=args.n_boot, seed=args.seed,
        ci_method=args.ci_method, overlap=args.overlap,
    )  # fmt: skip
