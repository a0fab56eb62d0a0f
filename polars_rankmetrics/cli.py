"""The ``rankmetrics`` command: evaluate Parquet files from the shell."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
import threading
import time
import warnings
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import replace
from types import FrameType
from typing import Any, NoReturn

import polars as pl

import polars_rankmetrics
from polars_rankmetrics.compare import compare
from polars_rankmetrics.engines import interrupts
from polars_rankmetrics.engines.base import engine_names, get_engine
from polars_rankmetrics.engines.sql.export import DIALECTS, input_statements, view_statements
from polars_rankmetrics.engines.sql.state import finalize_statements, state_statements
from polars_rankmetrics.evaluate import evaluate
from polars_rankmetrics.inference.corrections import CORRECTIONS
from polars_rankmetrics.inference.intervals import BOOTSTRAPS, CI_METHODS
from polars_rankmetrics.inference.paired import TESTS
from polars_rankmetrics.inputs.columns import Columns
from polars_rankmetrics.inputs.trec import read_trec_qrels, read_trec_run
from polars_rankmetrics.metrics.parameters import parameters
from polars_rankmetrics.metrics.registry import DEFAULT_METRICS, REGISTRY, parse_keys
from polars_rankmetrics.report.comparison import FORMATS, Comparison
from polars_rankmetrics.report.labels import label_report
from polars_rankmetrics.report.page import html_report, require_matplotlib
from polars_rankmetrics.states import finalize, is_state, state
from polars_rankmetrics.states.merge import OVERLAP
from polars_rankmetrics.trec import trec_eval
from polars_rankmetrics.trec.output import trec_eval_lines

# compare's by column when --by is not given: rm.compare's default.
COMPARE_BY = "model"
# report --trec's by column when --by is not given: the run's tag, as rm.read_trec_run names it.
TREC_BY = "run"
# The relations the SQL views read, and where they are described.
_INPUT_RELATIONS = ("rankmetrics_input", "rankmetrics_cutoffs", "rankmetrics_parameters")
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
# What starting the Spark engine costs (docs/engines.md, Spark).
SPARK_START = (
    "a local session in a new JVM: its start and the planning of the queries take tens of seconds"
)


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


def _parser() -> argparse.ArgumentParser:
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
    cmp.add_argument("--baseline", required=True, help="the baseline's value of the --by column")
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
    report.add_argument("--baseline", help="with --html: compare every other --by value with it")
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


def _trec_arguments(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "relevance_level": 1 if args.relevance_level is None else args.relevance_level,
        "max_docs": args.max_docs,
        "judged_only": args.judged_only, "complete": args.complete,
    }  # fmt: skip


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
        help="output format (default: from the --output file's extension, else table)",
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


def _split(values: list[str]) -> list[str]:
    """Repeated and comma-separated values, in order."""
    return [v.strip() for value in values for v in value.split(",") if v.strip()]


def _metric_list(text: str, k: int | None) -> list[str]:
    keys = _split([text])
    if k is None:
        return keys
    if k < 1:
        raise ValueError(f"--k must be a positive integer, not {k}")
    cut = [m for m in keys if "@" in m]
    if cut:
        raise ValueError(f"--k {k} and the explicit cut-off of {cut[0]!r}: give one or the other")
    return [f"{m}@{k}" if m in REGISTRY and REGISTRY[m].takes_k else m for m in keys]


COMPARE_FORMATS = FORMATS
_SUFFIXES = {".json": "json", ".csv": "csv", ".md": "markdown", ".tex": "latex"}


def _format(args: argparse.Namespace) -> str:
    """--format, else the --output file's extension (.json, .csv; .md, .tex for compare),
    else a table."""
    if args.format:
        return str(args.format)
    fmt = _SUFFIXES.get(os.path.splitext(args.output or "")[1].lower(), "table")
    return fmt if args.command == "compare" or fmt in ("json", "csv") else "table"


def _render(result: pl.DataFrame, fmt: str, grouped: bool) -> str:
    if fmt == "json":
        # Polars writes every column type (dates, decimals, categoricals, structs); NaN (lwlrap of
        # a group without positives) is not JSON: it is written as null.
        rows = json.loads(result.fill_nan(None).write_json())
        return json.dumps(rows if grouped else rows[0], indent=2, allow_nan=False)
    if fmt == "csv":
        return result.write_csv().rstrip("\n")
    with pl.Config(tbl_rows=-1, tbl_cols=-1, tbl_hide_dataframe_shape=True, fmt_str_lengths=80):
        return str(result)


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit status: 0 on success, 1 on bad input, 128 + the signal on
    Ctrl-C (130) or SIGTERM (143), after the run has removed its temporary files."""
    received: list[int] = []

    def stop(signum: int, frame: FrameType | None) -> None:
        if not received:  # a second signal must not cut the clean-up short
            received.append(signum)
            raise Interrupted(signum)

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        with interrupts.watching(), _warnings_as_lines():
            status = _run(_parser().parse_args(argv))
    except BrokenPipeError:  # e.g. `rankmetrics sql | head`: the reader left, nothing to report
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except Exception as error:
        # Bad input is reported where it is raised (_run); anything else is a bug, still told
        # in one line: the traceback only on request.
        if not received:
            if os.environ.get("RANKMETRICS_TRACEBACK"):
                raise
            print(
                f"rankmetrics: error: {type(error).__name__}: {_first_line(error)} (an internal "
                "error: please report it; RANKMETRICS_TRACEBACK=1 shows where it was raised)",
                file=sys.stderr,
            )
            return 1
    except BaseException:
        # An engine may turn the signal into an error of its own (DuckDB: "Query interrupted").
        if not received:
            raise
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if received:
        name = "interrupted" if received[0] == signal.SIGINT else "terminated"
        print(f"\rrankmetrics: {name}\033[K" if sys.stderr.isatty() else f"rankmetrics: {name}",
              file=sys.stderr)  # fmt: skip
        return 128 + received[0]
    return status


@contextlib.contextmanager
def _warnings_as_lines() -> Iterator[None]:
    """Each warning as one line of stderr, ``rankmetrics: warning: ...``: a metric's
    :class:`~polars_rankmetrics.UndefinedMetricWarning` comes once per run."""

    def show(message: Warning | str, *args: object, **kwargs: object) -> None:
        print(f"rankmetrics: warning: {_first_line(message)}", file=sys.stderr)

    with warnings.catch_warnings():
        warnings.showwarning = show
        yield


def _first_line(error: BaseException | str) -> str:
    """The first line of an error's message (its type's name when it has none)."""
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


class Interrupted(BaseException):
    """A signal, raised like KeyboardInterrupt so that every ``finally`` runs (temporary files,
    connections) on the way out."""


def _by(args: argparse.Namespace) -> list[str]:
    """The --by columns; compare's default when it is not given (compare needs one)."""
    by = _split(args.by)
    if args.command == "compare" and not args.by:
        return [COMPARE_BY]
    if args.command == "report" and args.trec and not args.by:
        return [TREC_BY]
    if args.command == "compare" and not by:
        raise ValueError("--by must name the column(s) naming the model")
    return by


def _compute(args: argparse.Namespace, options: dict[str, Any]) -> pl.DataFrame | None:
    """The result of the command ``args`` names (None: the HTML report, written to its
    file)."""
    if args.command == "state":
        if args.output is None:
            raise ValueError("state writes a file: give -o STATE.parquet")
        state(
            args.paths, _split([args.metrics]), beta=args.beta, truth_table=args.truth_table,
            n_labels=args.n_labels, propensities=args.propensities, intervals=args.intervals,
            per_label=args.per_label, score_decimals=args.score_decimals, path=args.output,
            **options,
        )  # fmt: skip
        return None
    if args.command in ("evaluate", "compare", "report") and is_state(args.paths):
        return _of_states(args, options)
    if args.command == "report" and args.html is not None:
        data, truth_table = args.paths, args.truth_table
        if args.trec:
            if truth_table is None:
                raise ValueError("--trec reads TREC run files against qrels: give --truth-table")
            data = read_trec_run(data, memory_limit=args.memory_limit)
            truth_table = read_trec_qrels(truth_table, memory_limit=args.memory_limit)
        html_report(
            data, baseline=args.baseline, ci=args.ci, n_boot=args.n_boot, seed=args.seed,
            bootstrap=args.bootstrap, truth_table=truth_table, n_labels=args.n_labels,
            k=args.k, ties=_tie_rule(args), path=args.html, **_trec_arguments(args), **options,
        )  # fmt: skip
        return None
    if args.command == "report":
        given = {"--baseline": args.baseline, "--ci": args.ci, "--truth-table": args.truth_table,
                 "--trec": args.trec or None, "--max-docs": args.max_docs,
                 "--judged-only": args.judged_only or None, "--complete": args.complete or None,
                 "--relevance-level": args.relevance_level}  # fmt: skip
        with_html = [name for name, value in given.items() if value is not None]
        if with_html:
            raise ValueError(f"{with_html[0]} goes with --html")
        if args.ties == "trec_eval":
            raise ValueError(
                "--ties trec_eval goes with --html and a run's --truth-table: the per-label "
                "table follows scikit-learn's tie rules (--ties average)"
            )
        return label_report(args.paths, **options)
    if args.command == "compare":
        return compare(
            args.paths, _split([args.metrics or ",".join(DEFAULT_METRICS)]),
            baseline=args.baseline, test=args.test,
            correction=None if args.correction == "none" else args.correction,
            n_resamples=args.n_resamples, n_boot=args.n_boot, ci=args.ci, seed=args.seed,
            bootstrap=args.bootstrap, on_missing=args.on_missing, truth_table=args.truth_table,
            n_labels=args.n_labels, beta=args.beta, ties=args.ties, **_trec_arguments(args),
            **options,
        )  # fmt: skip
    metrics = _metric_list(args.metrics or ",".join(DEFAULT_METRICS), args.k)
    return evaluate(
        args.paths, metrics, beta=args.beta,
        per_sample=args.per_sample, truth_table=args.truth_table, n_labels=args.n_labels,
        propensities=args.propensities, ci=args.ci, n_boot=args.n_boot, seed=args.seed,
        ci_method=args.ci_method, bootstrap=args.bootstrap, ties=args.ties,
        **_trec_arguments(args), **options,
    )  # fmt: skip


def _tie_rule(args: argparse.Namespace) -> str | None:
    """The tie rule to state on stderr after evaluate, compare or report: ``--ties``, else
    trec_eval's where evaluate or compare of data asks for TREC keys (their only rule) or
    report reads TREC files (``--trec``), else None (the library's keys under their default,
    stated in their docs)."""
    if getattr(args, "ties", None) is not None:
        return str(args.ties)
    if args.command == "report" and args.trec:
        return "trec_eval"
    if args.command not in ("evaluate", "compare") or is_state(args.paths):
        return None
    keys = parse_keys(_split([args.metrics or ",".join(DEFAULT_METRICS)]))
    return "trec_eval" if any(key.metric.family == "trec" for key in keys) else None


def _trec(args: argparse.Namespace, options: dict[str, Any]) -> pl.DataFrame:
    """``rankmetrics trec``: rm.trec_eval's table of the files: read into memory once, as
    trec_eval reads them, or, under ``--memory-limit``, scanned by the engine within it."""
    budget = args.memory_limit
    files = [
        read_trec_run(args.runs, memory_limit=budget),
        read_trec_qrels(args.qrels, memory_limit=budget),
    ]
    # The evaluation reads its input more than once: without a budget, the text is parsed once.
    run, qrels = pl.collect_all(files) if args.memory_limit is None else files
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
    "compare": {"threshold", "zero_division", "beta", "baseline", "test", "correction",
                "n_resamples", "alpha"},
}  # fmt: skip


def _of_states(args: argparse.Namespace, options: dict[str, Any]) -> pl.DataFrame:
    """``evaluate`` (finalize) or ``report`` of state files."""
    required = ["--baseline", args.baseline] if args.command == "compare" else []
    defaults = vars(_parser().parse_args([args.command, *args.paths, *required]))
    taken = _OF_STATES | _OF_STATES_TOO.get(args.command, set())
    given = [
        name for name, value in vars(args).items()
        if name not in taken and value != defaults[name]
    ]  # fmt: skip
    if given:
        raise ValueError(
            f"--{given[0].replace('_', '-')} does not apply to state files: they are "
            "evaluated already, with the options they record"
        )
    if args.command == "compare":
        return compare(
            args.paths, None if args.metrics is None else _split([args.metrics]),
            by=options["by"], baseline=args.baseline, test=args.test,
            correction=None if args.correction == "none" else args.correction,
            n_resamples=args.n_resamples, n_boot=args.n_boot, ci=args.ci, seed=args.seed,
            bootstrap=args.bootstrap, threshold=args.threshold, beta=args.beta,
            zero_division=args.zero_division,
        )  # fmt: skip
    if args.command == "report":
        if args.html is not None:
            raise ValueError("--html reads the data, not state files")
        return label_report(
            args.paths, by=options["by"], threshold=args.threshold,
            zero_division=args.zero_division,
        )  # fmt: skip
    if args.bootstrap != "poisson" and args.ci is not None:
        raise ValueError("intervals of state files are Poisson intervals: give --bootstrap poisson")
    metrics = None if args.metrics is None else _metric_list(args.metrics, args.k)
    return finalize(
        args.paths, metrics, by=options["by"], ci=args.ci, n_boot=args.n_boot, seed=args.seed,
        ci_method=args.ci_method, overlap=args.overlap,
    )  # fmt: skip


def _run(args: argparse.Namespace) -> int:
    if args.command == "sql":
        return _print_sql(args)
    try:
        by = [] if args.command == "trec" else _by(args)
        engine_errors = get_engine(args.engine).errors
        if args.command == "report" and args.html is not None:
            require_matplotlib()
    except (ValueError, ImportError) as error:  # before any work: usage, missing packages
        print(f"rankmetrics: error: {error}", file=sys.stderr)
        return 1
    reported: tuple[type[Exception], ...] = (
        ValueError, OSError, ImportError, pl.exceptions.PolarsError, *engine_errors,
    )  # fmt: skip
    line = None if args.quiet or not sys.stderr.isatty() else _ProgressLine(args.engine)
    options: dict[str, Any] = {
        "engine": args.engine, "memory_limit": args.memory_limit, "temp_dir": args.temp_dir,
        "progress": line,
    }  # fmt: skip
    if args.command != "trec":
        options |= {
            "by": by or None, "weight": args.weight, "sample": args.sample, "label": args.label,
            "score": args.score, "truth": args.truth, "pred": args.pred,
            "threshold": args.threshold, "zero_division": args.zero_division,
        }  # fmt: skip
    try:
        with line or contextlib.nullcontext():
            result = _trec(args, options) if args.command == "trec" else _compute(args, options)
    except reported as error:
        if isinstance(error.__context__, Interrupted):
            raise
        print(f"rankmetrics: error: {_first_line(error)}", file=sys.stderr)
        return 1
    rule = _tie_rule(args)
    if rule is not None and not args.quiet:
        print(f"rankmetrics: {TIE_RULES[rule]}", file=sys.stderr)
    if args.command == "trec" and result is not None:
        if not args.quiet:
            print(f"rankmetrics: ties broken {TREC_TIES}, as trec_eval", file=sys.stderr)
        for text in trec_eval_lines(result, summary=not args.no_summary):
            print(text)
        return 0
    if result is None:
        print(f"rankmetrics: wrote {args.output if args.command == 'state' else args.html}",
              file=sys.stderr)  # fmt: skip
        return 0
    grouped = bool(by) or args.command == "report" or getattr(args, "per_sample", False)
    if args.command == "compare":
        fmt = _format(args)
        text = Comparison(result, by, args.alpha, baseline=args.baseline).render(fmt)
        if fmt in ("table", "markdown") and result.height and result["wins"].is_not_null().any():
            text += ("\n\n" if fmt == "markdown" else "\n") + _compared(result, by)
    else:
        text = _render(result, _format(args), grouped)
    if args.output is None:
        print(text)
        return 0
    try:
        with open(args.output, "w", encoding="utf-8") as out:
            out.write(text + "\n")
    except OSError as error:
        print(
            f"rankmetrics: error: cannot write {args.output!r}: {error.strerror}", file=sys.stderr
        )
        return 1
    return 0


def _compared(result: pl.DataFrame, by: Sequence[str]) -> str:
    """The note under compare's table: how many samples wins/ties/losses count, where a metric
    undefined for some samples leaves them out."""
    totals = (result["wins"] + result["ties"] + result["losses"]).to_list()
    usual = Counter(totals).most_common(1)[0][0]
    models = result.select(by).n_unique() > 1
    others = [
        f"{row['metric']}{' (' + ', '.join(str(row[b]) for b in by) + ')' if models else ''}: "
        f"{total:,}"
        for row, total in zip(result.iter_rows(named=True), totals, strict=True)
        if total != usual
    ]
    counted = f"{usual:,}" + (f" ({'; '.join(others)})" if others else "")
    return (
        "wins/ties/losses count the samples where the metric is defined for both models: "
        f"{counted}. A sample without positives has no lwlrap; with --zero-division nan, a set "
        "metric's 0/0 has no value."
    )


def _print_sql(args: argparse.Namespace) -> int:
    if args.state or args.finalize:
        return _print_state_sql(args)
    given = {"--metrics": args.metrics, "--intervals": args.intervals or None, "--ci": args.ci,
             "--n-boot": args.n_boot, "--seed": args.seed}  # fmt: skip
    misplaced = [option for option, value in given.items() if value is not None]
    if misplaced:
        print(f"rankmetrics: error: {misplaced[0]} applies to --state or --finalize",
              file=sys.stderr)  # fmt: skip
        return 1
    statements = list(view_statements(args.dialect))
    if args.input is not None:
        cols = _sql_columns(args)
        try:
            if any(k < 1 for k in args.k):
                raise ValueError("--k must be a positive integer")
            if args.n_labels is not None and args.n_labels < 1:
                raise ValueError("--n-labels must be a positive integer")
            if args.truth_by is not None and args.truth_table is None:
                raise ValueError("--truth-by names the by columns of a --truth-table: give one")
            context = parameters(
                threshold=args.threshold, beta=args.beta, zero_division=args.zero_division
            )
            defined = input_statements(
                args.input, cols, args.dialect, [None, *args.k], bool_truth=args.bool_truth,
                bool_pred=args.bool_truth, threshold=context.threshold, beta=context.beta,
                zero_division=context.zero_division, n_labels=args.n_labels,
                truth_table=args.truth_table, gain=args.gain,
                truth_by=None if args.truth_by is None else _split(args.truth_by),
            )  # fmt: skip
        except ValueError as error:
            print(f"rankmetrics: error: {error}", file=sys.stderr)
            return 1
        statements = [*defined, *statements]
    else:
        # The file cannot check what it reads: it says so where a reader starts.
        print(
            f"-- The views read {', '.join(_INPUT_RELATIONS[:2])} and {_INPUT_RELATIONS[2]}: "
            f"define all three first ({SQL_ALONE}).\n"
        )
    print("\n\n".join(f"{statement};" for statement in statements))
    return 0


def _sql_columns(args: argparse.Namespace) -> Columns:
    """The columns ``rankmetrics sql --input`` reads."""
    cols = Columns.of(
        sample=args.sample, label=args.label, score=args.score, truth=args.truth,
        weight=args.weight, by=_split(args.by), pred=args.pred,
    )  # fmt: skip
    return cols if args.truth_table is None else replace(cols, top_k=True)


def _print_state_sql(args: argparse.Namespace) -> int:
    """``rankmetrics sql --state``: the statements of ``rankmetrics_state`` over ``--input``;
    ``--finalize``: those of ``rankmetrics_finalize`` over ``rankmetrics_states``
    (:mod:`polars_rankmetrics.engines.sql.state`). An option of the other one is refused."""
    state_only = {"--input": args.input, "--intervals": args.intervals or None,
                  "--truth-table": args.truth_table, "--n-labels": args.n_labels}  # fmt: skip
    finalize_only = {"--ci": args.ci, "--n-boot": args.n_boot, "--seed": args.seed}
    try:
        if args.state and args.finalize:
            raise ValueError("give --state or --finalize, not both")
        if args.k:
            raise ValueError("--k does not apply to states: give cut-offs in --metrics (ndcg@10)")
        if args.truth_by is not None:
            raise ValueError(
                "--truth-by does not apply to states: the truth table of --state has every --by "
                "column"
            )
        asked, wrong = ("--state", finalize_only) if args.state else ("--finalize", state_only)
        given = [option for option, value in wrong.items() if value is not None]
        if given:
            raise ValueError(f"{given[0]} does not apply to {asked}")
        keys = parse_keys(_split([args.metrics or ",".join(DEFAULT_METRICS)]))
        if args.finalize:
            statements = finalize_statements(
                args.dialect, keys, _split(args.by), ci=args.ci,
                n_boot=1000 if args.n_boot is None else args.n_boot,
                seed=0 if args.seed is None else args.seed,
            )  # fmt: skip
        elif args.input is None:
            raise ValueError("--state defines rankmetrics_state over --input TABLE: give one")
        else:
            context = parameters(
                threshold=args.threshold, beta=args.beta, zero_division=args.zero_division
            )
            statements = state_statements(
                args.input, _sql_columns(args), args.dialect, keys, context=context,
                intervals=args.intervals, bool_truth=args.bool_truth, bool_pred=args.bool_truth,
                truth_table=args.truth_table, n_labels=args.n_labels, gain=args.gain,
            )  # fmt: skip
    except ValueError as error:
        print(f"rankmetrics: error: {error}", file=sys.stderr)
        return 1
    if args.finalize:
        # What the statements read, where a reader starts.
        print(
            "-- The views read rankmetrics_states, a table or view of states (the columns of "
            "rankmetrics_state): define it first.\n"
        )
    print("\n\n".join(f"{statement};" for statement in statements))
    return 0


class _ProgressLine:
    """The progress line on a terminal's stderr: the share done and the seconds since the start,
    redrawn every second, since a step may run long between two reports (Spark starts a JVM,
    then plans each query silently). A context: the line is cleared when the run ends, however
    it ends."""

    def __init__(self, engine: str) -> None:
        self.engine, self.share, self.started = engine, 0.0, time.monotonic()
        self._lock, self._stop = threading.RLock(), threading.Event()
        self._ticker = threading.Thread(target=self._tick, daemon=True)

    def __enter__(self) -> _ProgressLine:
        if self.engine == "spark":
            print(f"rankmetrics: starting Spark ({SPARK_START})", file=sys.stderr, flush=True)
        self._draw()
        self._ticker.start()
        return self

    def __call__(self, done: float, total: float) -> None:
        self.share = done / total if total else 0.0
        self._draw()

    def _tick(self) -> None:
        while not self._stop.wait(1.0):
            self._draw()

    def _draw(self) -> None:
        with self._lock:
            if not self._stop.is_set():
                seconds = time.monotonic() - self.started
                print(f"\rrankmetrics: {100 * self.share:3.0f}% done, {seconds:.0f} s\033[K",
                      end="", file=sys.stderr, flush=True)  # fmt: skip

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self._stop.set()
            print("\r\033[K", end="", file=sys.stderr, flush=True)
        self._ticker.join()


if __name__ == "__main__":
    sys.exit(main())
