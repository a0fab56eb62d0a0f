"""The ``rankmetrics`` command line: its commands, their options and what each option accepts."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any, NoReturn

import polars_rankmetrics
from polars_rankmetrics.cli.option_groups import (
    TIE_RULES,
    input_options,
    overlap_option,
    positive,
    resampling_options,
    run_options,
    threshold_options,
    ties_option,
    trec_options,
)
from polars_rankmetrics.engines.sql.export import DIALECTS
from polars_rankmetrics.inference.corrections import CORRECTIONS
from polars_rankmetrics.inference.intervals import CI_METHODS
from polars_rankmetrics.inference.paired import TESTS
from polars_rankmetrics.inference.pairs import MANY_TESTS
from polars_rankmetrics.metrics.registry import DEFAULT_METRICS, REGISTRY
from polars_rankmetrics.report.comparison import FORMATS

# compare's by column when --by is not given: rm.compare's default.
COMPARE_BY = "model"

# The by column of report, compare and leaderboard with --trec when --by is not given: the
# run's tag, as rm.read_trec_run names it.
TREC_BY = "run"

# Where the SQL views and the relations they read are described.
SQL_ALONE = "see docs/engines.md, SQL alone"

# The order trec_eval gives documents of equal score (form_res_rels.c, comp_sim_docno).
TREC_TIES = "by score descending, then by docno descending (as text)"

COMPARE_FORMATS = FORMATS

# compare's and leaderboard's tests: the paired tests, then those built for many systems.
COMPARE_TESTS = (*TESTS, *MANY_TESTS)

# compare's and leaderboard's metrics with --trec when --metrics is not given: trec_eval's.
TREC_METRICS = ("AP", "ndcg_cut_10", "P_10")


class UsageError(ValueError):
    """Options the command line refuses by itself (they do not go together, or one is missing
    that another needs): one line and exit status 2, as argparse's own usage errors."""


def refusal_status(error: BaseException) -> int:
    """The exit status of a refusal: 2 for a :class:`UsageError`, 1 for anything else (bad
    input, a key or parameter the library refuses)."""
    return 2 if isinstance(error, UsageError) else 1


class _Parser(argparse.ArgumentParser):
    """argparse with a one-line usage error (exit status 2, argparse's convention)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"rankmetrics: error: {message} (see {self.prog} --help)\n")


class _Version(argparse.Action):
    """``--version``: the installed version, read only when asked for."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, help="show the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *args: Any) -> NoReturn:
        print(f"rankmetrics {polars_rankmetrics.__version__}")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="rankmetrics",
        description="Multilabel ranking and classification metrics over long tables (Parquet, "
        "CSV, NDJSON).",
    )
    parser.add_argument("--version", action=_Version)
    commands = parser.add_subparsers(dest="command", required=True)
    valid = ", ".join(
        f"{m.name}@K" if m.requires_k else f"{m.name}[@K]" if m.takes_k else m.name
        for m in REGISTRY.values()
    )
    ev = commands.add_parser(
        "evaluate",
        help="the metrics of one or more files, globs or directories, or of state files "
        "(rankmetrics state): the metrics of the data behind them",
    )
    ev.add_argument(
        "--metrics",
        help=f"comma-separated metric keys, from: {valid} (default: {','.join(DEFAULT_METRICS)}; "
        "of state files: every key they hold)",
    )
    ev.add_argument(
        "-k", "--k", type=int, help="cut the metrics that take @K at K (ndcg -> ndcg@K)"
    )
    ev.add_argument(
        "--per-sample", action="store_true", help="one row per sample instead of the means"
    )
    ev.add_argument(
        "--truth-table", metavar="PATH",
        help="top-k evaluation: the true labels (sample, label[, truth gain]) as a file, glob or "
        "directory; the input paths then hold the predictions (sample, label, score)",
    )  # fmt: skip
    ev.add_argument(
        "--n-labels", type=int, metavar="N",
        help="the size of the label space of a top-k evaluation (the ranking metrics need it)",
    )  # fmt: skip
    ev.add_argument(
        "--propensities", metavar="PATH",
        help="label propensities (label, propensity) for psprecision@K and psndcg@K",
    )  # fmt: skip
    input_options(ev)
    threshold_options(ev)
    ev.add_argument(
        "--ci", type=float, metavar="LEVEL",
        help="add a bootstrap confidence interval (<key>_lo, <key>_hi) at LEVEL, e.g. 0.95",
    )  # fmt: skip
    ev.add_argument("--ci-method", choices=CI_METHODS, default="percentile")
    ties_option(ev)
    trec_options(ev)
    resampling_options(ev)
    overlap_option(ev)
    st = commands.add_parser(
        "state",
        help="evaluate a partition once into a state file (-o STATE.parquet) that rankmetrics "
        "evaluate, compare and report merge with others (docs/pipelines.md)",
    )
    st.add_argument(
        "--metrics", default=",".join(DEFAULT_METRICS),
        help="comma-separated metric keys, as for evaluate (default: %(default)s)",
    )  # fmt: skip
    st.add_argument(
        "--intervals", action="store_true",
        help="keep the resampling units: intervals and paired tests of merged states",
    )  # fmt: skip
    st.add_argument(
        "--per-label", action="store_true", help="keep the tables of report (per-label)"
    )
    st.add_argument(
        "--score-decimals", type=int, metavar="N",
        help="round the scores of the curve metrics' tables to N decimals (bounds their size)",
    )  # fmt: skip
    st.add_argument("--truth-table", metavar="PATH", help="top-k: the true labels")
    st.add_argument("--n-labels", type=int, metavar="N", help="top-k: the label space")
    st.add_argument("--propensities", metavar="PATH", help="label propensities (label, propensity)")
    input_options(st, formats=("parquet",))
    threshold_options(st)
    _systems_parsers(commands)
    report = commands.add_parser(
        "report",
        help="one row per label: support, predicted, precision, recall, F1, average precision, "
        "ROC AUC and per-class lwlrap",
    )
    report.add_argument(
        "--html", metavar="PATH",
        help="write the evaluation report there instead: one self-contained HTML page (summary, "
        "curves, the per-label table, score distributions; needs matplotlib)",
    )  # fmt: skip
    report.add_argument(
        "--baseline",
        help="with --html: compare every other --by value with it (several columns: VALUE,VALUE)",
    )  # fmt: skip
    report.add_argument(
        "--ci", type=float, metavar="LEVEL", help="with --html: bootstrap intervals (e.g. 0.95)"
    )
    report.add_argument(
        "--truth-table", metavar="PATH",
        help="with --html: top-k: the true labels (with --trec: a TREC qrels file)",
    )  # fmt: skip
    report.add_argument("--n-labels", type=int, metavar="N", help="top-k: the label space")
    report.add_argument(
        "--propensities", metavar="PATH",
        help="with --html: label propensities (label, propensity) for psprecision@K and "
        "psndcg@K in --metrics",
    )  # fmt: skip
    report.add_argument(
        "--k", type=positive, default=10,
        help="top-k: the deepest cut-off drawn, without --metrics (default 10)",
    )  # fmt: skip
    report.add_argument(
        "--metrics",
        help="with --html: comma-separated metric keys of the summary and the comparison in "
        "place of the page's own, as for evaluate: trec_eval's names (map, ndcg_cut_10, P_5) "
        "beside the library's (precision@5, mrr), each read by its own rules",
    )  # fmt: skip
    report.add_argument(
        "--trec", action="store_true",
        help="with --html: the PATHs are TREC run files (qid Q0 docno rank score tag) and "
        "--truth-table a TREC qrels file (qid iter docno rel), read as rankmetrics trec reads "
        "them; --by defaults to run (the run's tag) and --ties to trec_eval",
    )  # fmt: skip
    report.add_argument(
        "--ties", choices=list(TIE_RULES),
        help="with --html, how tied scores are ordered and which measures a top-k page holds: "
        "average (the default: the library's keys, no order chosen) or trec_eval (a run "
        "against qrels: trec_eval's measures AP, recip_rank, ndcg_cut_K, P_K, recall_K, ties "
        "broken by score descending, then label descending as text); the rule used is stated "
        "on stderr and on the page",
    )  # fmt: skip
    trec_options(report, html=True)
    input_options(report)
    threshold_options(report, beta=False)
    resampling_options(report)
    overlap_option(report)
    _trec_parser(commands)
    sql_help = (
        "print the SQL views in a dialect (run them after defining rankmetrics_input, "
        f"rankmetrics_cutoffs and rankmetrics_parameters, or let --input define them; {SQL_ALONE})"
    )
    sql = commands.add_parser("sql", help=sql_help, description=sql_help)
    sql.add_argument("--dialect", choices=DIALECTS, default="duckdb")
    sql.add_argument(
        "--input",
        metavar="TABLE",
        help="also define rankmetrics_input over TABLE (schema.table), rankmetrics_cutoffs and "
        "rankmetrics_parameters",
    )
    sql.add_argument(
        "--by", action="append", default=[], help="group column(s), comma-separated or repeated"
    )
    sql.add_argument("--weight", help="sample weight column")
    sql.add_argument(
        "--truth-table", metavar="TABLE",
        help="top-k: --input holds the predictions and TABLE the true labels (sample, label); "
        "rankmetrics_input is their full outer join",
    )  # fmt: skip
    sql.add_argument(
        "--truth-by", action="append", metavar="COLS",
        help="top-k: the --by columns the truth table has, comma-separated or repeated ('' for "
        "none; default: all of them); a truth table without some is shared by the groups: each "
        "row is a true label of every group with its values of these columns",
    )  # fmt: skip
    sql.add_argument("--n-labels", type=int, metavar="N", help="top-k: the size of the label space")
    sql.add_argument(
        "--gain", action="store_true",
        help="top-k: the truth table has a gain column (named by --truth); else each true label "
        "has gain 1",
    )  # fmt: skip
    for name in ("sample", "label", "score", "truth"):
        sql.add_argument(f"--{name}", default=name, help=f"{name} column (default: %(default)s)")
    sql.add_argument(
        "--k", type=int, action="append", default=[], help="a dcg/ndcg cut-off (repeatable)"
    )
    sql.add_argument(
        "--bool-truth",
        action="store_true",
        help="the truth (and pred) column is boolean (cast through an integer: PostgreSQL "
        "needs it)",
    )
    threshold_options(sql)
    state_sql = sql.add_argument_group(
        "states in SQL", "print the statements of an evaluation state instead (docs/engines.md, "
        "States in SQL)",
    )  # fmt: skip
    state_sql.add_argument(
        "--state", action="store_true",
        help="define rankmetrics_state over --input: the rows of rankmetrics state for its data",
    )  # fmt: skip
    state_sql.add_argument(
        "--finalize", action="store_true",
        help="define rankmetrics_finalize over rankmetrics_states, a table or view of states you "
        "define: the metrics of the data behind them, one row per --by group and key",
    )  # fmt: skip
    state_sql.add_argument(
        "--metrics",
        help=f"comma-separated metric keys (default: {','.join(DEFAULT_METRICS)})",
    )
    state_sql.add_argument(
        "--intervals", action="store_true",
        help="with --state: keep the resampling units, for the intervals of --finalize --ci",
    )  # fmt: skip
    state_sql.add_argument(
        "--ci", type=float, metavar="LEVEL",
        help="with --finalize: Poisson bootstrap intervals (lo, hi) at LEVEL, e.g. 0.95",
    )  # fmt: skip
    state_sql.add_argument(
        "--n-boot", type=int, metavar="N", help="with --finalize --ci: replicates (default 1000)"
    )
    state_sql.add_argument(
        "--seed", type=int, help="with --finalize --ci: seed of the resampling (default 0)"
    )
    return parser


def _systems_parsers(commands: Any) -> None:
    """``rankmetrics compare`` (with a baseline, or every pair) and ``rankmetrics leaderboard``
    (every model ranked, with its group letters)."""
    cmp = commands.add_parser(
        "compare",
        help="compare models with a baseline, or every pair of models (--all-pairs): deltas "
        "with intervals, paired tests, effect sizes, wins/losses",
    )
    against = cmp.add_mutually_exclusive_group(required=True)
    against.add_argument(
        "--baseline",
        help="the baseline's value of the --by column (several: VALUE,VALUE in their order)",
    )
    against.add_argument(
        "--all-pairs", action="store_true",
        help="compare every pair of models (A, B), A before B in sorted order, on the samples "
        "every model has",
    )  # fmt: skip
    _inference_options(cmp, "rows whose adjusted p-value is below this are marked significant")
    cmp.add_argument(
        "--ci", type=float, default=0.95, metavar="LEVEL",
        help="the level of the deltas' intervals (default 0.95)",
    )  # fmt: skip
    board = commands.add_parser(
        "leaderboard",
        help="rank the models per metric, with intervals and group letters (models sharing a "
        "letter do not differ significantly)",
    )
    _inference_options(board, "two models share a letter where their pair's adjusted p-value "
                       "is at least this")  # fmt: skip
    board.add_argument(
        "--ci", type=float, default=0.95, metavar="LEVEL",
        help="the level of the values' bootstrap intervals (default 0.95)",
    )  # fmt: skip


def _inference_options(parser: argparse.ArgumentParser, alpha: str) -> None:
    """What compare and leaderboard share: the metrics, the test and its correction, the
    input (data, state files, or TREC run files with --trec)."""
    parser.add_argument(
        "--metrics",
        help="comma-separated metric keys averaged over samples (default: "
        f"{','.join(DEFAULT_METRICS)}; with --trec: {','.join(TREC_METRICS)}; of state files: "
        "every key they hold)",
    )  # fmt: skip
    parser.add_argument(
        "--test", choices=COMPARE_TESTS, default="permutation",
        help="the test of each pair (default: permutation); tukey_hsd and randomized_tukey "
        "read every model at once and go with all pairs",
    )  # fmt: skip
    parser.add_argument(
        "--correction", choices=[*CORRECTIONS, "none"],
        help="multiple-testing correction over all (model, metric) rows; for tukey_hsd and "
        "randomized_tukey over the metrics only (default: holm, and none for those two)",
    )  # fmt: skip
    parser.add_argument("--n-resamples", type=int, default=10_000, metavar="N")
    parser.add_argument("--alpha", type=float, default=0.05, help=f"{alpha} (default 0.05)")
    parser.add_argument("--on-missing", choices=("error", "drop"), default="error")
    parser.add_argument(
        "--truth-table", metavar="PATH",
        help="top-k: the true labels (with --trec: a TREC qrels file)",
    )  # fmt: skip
    parser.add_argument("--n-labels", type=int, metavar="N", help="top-k: the label space")
    parser.add_argument(
        "--trec", action="store_true",
        help="the PATHs are TREC run files (qid Q0 docno rank score tag; 50 runs of a track "
        "against one qrels, say) and --truth-table their qrels file (qid iter docno rel), read "
        "as rankmetrics trec reads them; --by defaults to run (the run's tag) and --ties to "
        "trec_eval",
    )  # fmt: skip
    ties_option(parser)
    trec_options(parser)
    input_options(parser, formats=COMPARE_FORMATS, by=COMPARE_BY)
    threshold_options(parser)
    resampling_options(parser)


def _trec_parser(commands: Any) -> None:
    """``rankmetrics trec``: trec_eval 10.0's command line, its options' letters and output."""
    te = commands.add_parser(
        "trec",
        help="evaluate TREC run files against qrels as trec_eval 10.0 does, printed in its "
        "format (docs/trec.md)",
        description="Evaluate TREC run files against qrels as trec_eval 10.0 does, printing its "
        "lines (measure, topic or all, value). Ties in score are broken as trec_eval breaks "
        f"them: {TREC_TIES}.",
    )
    te.add_argument("qrels", metavar="QRELS", help="the qrels file (qid iter docno rel)")
    te.add_argument(
        "runs", nargs="+", metavar="RUN",
        help="run files or globs (qid Q0 docno rank score tag), gzip too; each tag is a run, "
        "printed in turn",
    )  # fmt: skip
    te.add_argument(
        "-m", "--measure", action="append", default=[], metavar="MEASURE",
        help="a measure or family, with parameters after a dot (P.5,10; ndcg.1=3,2=9), or "
        "official (default), all_trec; repeatable",
    )  # fmt: skip
    te.add_argument(
        "-q", dest="per_topic", action="store_true", help="each topic's values before the summary"
    )
    te.add_argument(
        "-c", dest="complete", action="store_true",
        help="every topic of the qrels counts, a topic missing from a run scoring 0 (without it: "
        "the topics of both, where trec_eval 10.0 stops)",
    )  # fmt: skip
    te.add_argument(
        "-M", dest="max_docs", type=positive, metavar="N",
        help="read the first N documents per topic",
    )  # fmt: skip
    te.add_argument(
        "-l", dest="relevance_level", type=int, default=1, metavar="N",
        help="a relevance at least N is relevant (default 1)",
    )  # fmt: skip
    te.add_argument(
        "-J", dest="judged_only", action="store_true",
        help="remove the documents the qrels do not judge from the runs first",
    )  # fmt: skip
    te.add_argument(
        "-n", dest="no_summary", action="store_true", help="no summary lines (topic all)"
    )
    run_options(te)


def check_lists(args: argparse.Namespace) -> None:
    """Refuse a ``--by`` or ``--metrics`` given that names nothing (``--by ""``): left out, the
    option has a meaning of its own (no groups, the default metrics), which an empty value must
    not take silently."""
    for option in ("by", "metrics"):
        value = getattr(args, option, None)
        given = value if isinstance(value, list) else [] if value is None else [value]
        if given and not split_values(given):
            raise UsageError(
                f"--{option} {given[0]!r} names nothing: give a comma-separated list, or leave "
                "the option out"
            )


def split_values(values: list[str]) -> list[str]:
    """Repeated and comma-separated values, in order."""
    return [v.strip() for value in values for v in value.split(",") if v.strip()]


def metric_list(text: str, k: int | None) -> list[str]:
    keys = split_values([text])
    if k is None:
        return keys
    if k < 1:
        raise UsageError(f"--k must be a positive integer, not {k}")
    cut = [m for m in keys if "@" in m]
    if cut:
        raise UsageError(f"--k {k} and the explicit cut-off of {cut[0]!r}: give one or the other")
    return [f"{m}@{k}" if m in REGISTRY and REGISTRY[m].takes_k else m for m in keys]
