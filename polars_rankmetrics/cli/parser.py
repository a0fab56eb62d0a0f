"""The ``rankmetrics`` command line: its commands, their options and what each option accepts."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any, NoReturn

import polars_rankmetrics
from polars_rankmetrics.engines.base import engine_names
from polars_rankmetrics.engines.sql.export import DIALECTS
from polars_rankmetrics.inference.corrections import CORRECTIONS
from polars_rankmetrics.inference.intervals import BOOTSTRAPS, CI_METHODS
from polars_rankmetrics.inference.paired import TESTS
from polars_rankmetrics.metrics.registry import DEFAULT_METRICS, REGISTRY
from polars_rankmetrics.report.comparison import FORMATS
from polars_rankmetrics.states.merge import OVERLAP

# compare's by column when --by is not given: rm.compare's default.
COMPARE_BY = "model"

# report --trec's by column when --by is not given: the run's tag, as rm.read_trec_run names it.
TREC_BY = "run"

# Where the SQL views and the relations they read are described.
SQL_ALONE = "see docs/engines.md, SQL alone"

# The order trec_eval gives documents of equal score (form_res_rels.c, comp_sim_docno).
TREC_TIES = "by score descending, then by docno descending (as text)"

# The tie rules of --ties (rm.evaluate's ties=), as the line on stderr states them.
TIE_RULES = {
    "average": "ties kept: dcg, ndcg and the retrieval keys take their expected value over the "
    "orders of each tied block, the other keys scikit-learn's tie rules",
    "trec_eval": "ties broken by score descending, then by label descending (as text), as "
    "trec_eval",
}

COMPARE_FORMATS = FORMATS


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
    _input_options(ev)
    _threshold_options(ev)
    ev.add_argument(
        "--ci", type=float, metavar="LEVEL",
        help="add a bootstrap confidence interval (<key>_lo, <key>_hi) at LEVEL, e.g. 0.95",
    )  # fmt: skip
    ev.add_argument("--ci-method", choices=CI_METHODS, default="percentile")
    _ties_option(ev)
    _trec_options(ev)
    _resampling_options(ev)
    _overlap_option(ev)
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
    _input_options(st, formats=("parquet",))
    _threshold_options(st)
    cmp = commands.add_parser(
        "compare",
        help="compare models with a baseline: deltas with intervals, paired tests, wins/losses",
    )
    cmp.add_argument(
        "--metrics",
        help="comma-separated metric keys averaged over samples (default: "
        f"{','.join(DEFAULT_METRICS)}; of state files: every key they hold)",
    )  # fmt: skip
    cmp.add_argument(
        "--baseline", required=True,
        help="the baseline's value of the --by column (several: VALUE,VALUE in their order)",
    )  # fmt: skip
    cmp.add_argument("--test", choices=TESTS, default="permutation")
    cmp.add_argument(
        "--correction", choices=[*CORRECTIONS, "none"], default="holm",
        help="multiple-testing correction over all (model, metric) rows (default: holm)",
    )  # fmt: skip
    cmp.add_argument("--n-resamples", type=int, default=10_000, metavar="N")
    cmp.add_argument("--ci", type=float, default=0.95, metavar="LEVEL")
    cmp.add_argument(
        "--alpha", type=float, default=0.05,
        help="rows whose adjusted p-value is below this are marked significant (default 0.05)",
    )  # fmt: skip
    cmp.add_argument("--on-missing", choices=("error", "drop"), default="error")
    cmp.add_argument("--truth-table", metavar="PATH", help="top-k: the true labels")
    cmp.add_argument("--n-labels", type=int, metavar="N", help="top-k: the label space")
    _ties_option(cmp)
    _trec_options(cmp)
    _input_options(cmp, formats=COMPARE_FORMATS, by=COMPARE_BY)
    _threshold_options(cmp)
    _resampling_options(cmp)
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
        "--k", type=_positive, default=10, help="top-k: the deepest cut-off drawn (default 10)"
    )
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
    _trec_options(report, html=True)
    _input_options(report)
    _threshold_options(report, beta=False)
    _resampling_options(report)
    _overlap_option(report)
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
    _threshold_options(sql)
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
        "-M", dest="max_docs", type=_positive, metavar="N",
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
    _run_options(te)


def _ties_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--ties", choices=list(TIE_RULES),
        help="how tied scores within a sample are ordered: average (the default of the library's "
        "keys: no order is chosen; dcg, ndcg and the retrieval keys take their expected value "
        "over the orders of each tied block, the others scikit-learn's rules) or trec_eval (score "
        "descending, then label descending as text: the only rule of the TREC keys, P_5, AP, "
        "nDCG@10, ...); the rule used is stated on stderr",
    )  # fmt: skip


def _trec_options(parser: argparse.ArgumentParser, *, html: bool = False) -> None:
    """trec_eval's -l, -M, -J and -c, for the TREC keys (of a run against qrels)."""
    where = "with --html --trec or the TREC keys" if html else "with the TREC keys (P_5, AP, ...)"
    parser.add_argument(
        "--relevance-level", type=int, metavar="N",
        help=f"{where}: a relevance at least N is relevant (trec_eval's -l; default 1)",
    )  # fmt: skip
    parser.add_argument(
        "--max-docs", type=_positive, metavar="N",
        help=f"{where}: read the first N documents per topic (trec_eval's -M)",
    )  # fmt: skip
    parser.add_argument(
        "--judged-only", action="store_true",
        help=f"{where}: remove the documents the qrels do not judge first (trec_eval's -J)",
    )  # fmt: skip
    parser.add_argument(
        "--complete", action="store_true",
        help=f"{where}: every topic of the qrels counts, one missing from a run scoring 0 "
        "(trec_eval's -c)",
    )  # fmt: skip


def _overlap_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--overlap", choices=OVERLAP, default="error",
        help="of state files: refuse (error) or merge with a warning (warn) states that share "
        "samples (default: error)",
    )  # fmt: skip


def _resampling_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--n-boot", type=int, default=1000, metavar="N", help="bootstrap replicates (default 1000)"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the resampling (default 0)")
    parser.add_argument(
        "--bootstrap", choices=BOOTSTRAPS, default="multinomial",
        help="how the resampling draws the samples: multinomial (default), or poisson (by "
        "hashed units of samples: the draws that merge across partitions and states)",
    )  # fmt: skip


def _input_options(
    parser: argparse.ArgumentParser,
    formats: Sequence[str] = ("table", "json", "csv"),
    by: str | None = None,
) -> None:
    """What ``evaluate``, ``compare`` and ``report`` share: the input, its columns, the engine,
    the output. ``by``: the default ``--by`` column (``compare``'s, as in Python)."""
    parser.add_argument(
        "paths", nargs="+", metavar="PATH",
        help="Parquet, CSV or NDJSON file (by extension), glob, or directory (hive partitions too)",
    )  # fmt: skip
    parser.add_argument(
        "--by", action="append", default=[],
        help="group column(s), comma-separated or repeated"
        + ("" if by is None else f" (default: {by}, the column naming the model)"),
    )  # fmt: skip
    parser.add_argument(
        "--format", choices=formats,
        help="output format (default: from the --output file's extension, else table)"
        if len(formats) > 1 else f"the output's format: {formats[0]}, the only one",
    )  # fmt: skip
    parser.add_argument("-o", "--output", metavar="FILE", help="write the result to FILE")
    for name in ("sample", "label", "score", "truth"):
        parser.add_argument(f"--{name}", default=name, help=f"{name} column (default: %(default)s)")
    parser.add_argument("--weight", help="sample weight column")
    _run_options(parser)


def _run_options(parser: argparse.ArgumentParser) -> None:
    """How a command runs: the engine, its memory and temporary files, the progress line."""
    parser.add_argument("--engine", choices=engine_names(), default="polars")
    parser.add_argument(
        "--memory-limit",
        metavar="SIZE",
        help="keep the process under SIZE (e.g. 1GB): DuckDB spills, Polars works in buckets",
    )
    parser.add_argument(
        "--temp-dir",
        metavar="DIR",
        help="where spill and bucket files go, in a directory of their own removed afterwards "
        "(default: the system's temporary directory)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")


def _threshold_options(parser: argparse.ArgumentParser, *, beta: bool = True) -> None:
    parser.add_argument("--pred", help="decision column (bool or 0/1) for the threshold metrics")
    parser.add_argument(
        "--threshold", type=float, default=0.5,
        help="without --pred, a label is predicted when its score is at least this (default 0.5)",
    )  # fmt: skip
    if beta:
        parser.add_argument("--beta", type=float, default=1.0, help="F-beta's beta (default 1)")
    parser.add_argument(
        "--zero-division", default="warn", type=_zero_division,
        help="value of a 0/0 precision, recall, F or Jaccard: warn (0, and a warning where one "
        "happens), 0, 1 or nan (default warn)",
    )  # fmt: skip


def _zero_division(text: str) -> float | str:
    if text.strip().lower() == "warn":
        return "warn"
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not warn, 0, 1 or nan: {text!r}") from None


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"not a positive integer: {text!r}")
    return value


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
