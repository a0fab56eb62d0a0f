"""The option groups that several ``rankmetrics`` commands share (the input and its columns,
how a run goes, the resampling, the thresholds, the tie rule, trec_eval's options), and what
their options accept."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from polars_rankmetrics.engines.base import engine_names
from polars_rankmetrics.inference.intervals import BOOTSTRAPS
from polars_rankmetrics.states.merge import OVERLAP

# The tie rules of --ties (rm.evaluate's ties=), as the line on stderr states them.
TIE_RULES = {
    "average": "ties kept: dcg, ndcg and the retrieval keys take their expected value over the "
    "orders of each tied block, the other keys scikit-learn's tie rules",
    "trec_eval": "ties broken by score descending, then by label descending (as text), as "
    "trec_eval",
}


def ties_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--ties", choices=list(TIE_RULES),
        help="how tied scores within a sample are ordered: average (the default of the library's "
        "keys: no order is chosen; dcg, ndcg and the retrieval keys take their expected value "
        "over the orders of each tied block, the others scikit-learn's rules) or trec_eval (score "
        "descending, then label descending as text: the only rule of the TREC keys, P_5, AP, "
        "nDCG@10, ...); the rule used is stated on stderr",
    )  # fmt: skip


def trec_options(parser: argparse.ArgumentParser, *, html: bool = False) -> None:
    """trec_eval's -l, -M, -J and -c, for the TREC keys (of a run against qrels)."""
    where = "with --html --trec or the TREC keys" if html else "with the TREC keys (P_5, AP, ...)"
    parser.add_argument(
        "--relevance-level", type=int, metavar="N",
        help=f"{where}: a relevance at least N is relevant (trec_eval's -l; default 1)",
    )  # fmt: skip
    parser.add_argument(
        "--max-docs", type=positive, metavar="N",
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


def overlap_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--overlap", choices=OVERLAP, default="error",
        help="of state files: refuse (error) or merge with a warning (warn) states that share "
        "samples (default: error)",
    )  # fmt: skip


def resampling_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--n-boot", type=int, default=1000, metavar="N", help="bootstrap replicates (default 1000)"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the resampling (default 0)")
    parser.add_argument(
        "--bootstrap", choices=BOOTSTRAPS, default="multinomial",
        help="how the resampling draws the samples: multinomial (default), or poisson (by "
        "hashed units of samples: the draws that merge across partitions and states)",
    )  # fmt: skip


def input_options(
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
    run_options(parser)


def run_options(parser: argparse.ArgumentParser) -> None:
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


def threshold_options(parser: argparse.ArgumentParser, *, beta: bool = True) -> None:
    parser.add_argument("--pred", help="decision column (bool or 0/1) for the threshold metrics")
    parser.add_argument(
        "--threshold", type=float, default=0.5,
        help="without --pred, a label is predicted when its score is at least this (default 0.5)",
    )  # fmt: skip
    if beta:
        parser.add_argument("--beta", type=float, default=1.0, help="F-beta's beta (default 1)")
    parser.add_argument(
        "--zero-division", default="warn", type=zero_division,
        help="value of a 0/0 precision, recall, F or Jaccard: warn (0, and a warning where one "
        "happens), 0, 1 or nan (default warn)",
    )  # fmt: skip


def zero_division(text: str) -> float | str:
    if text.strip().lower() == "warn":
        return "warn"
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not warn, 0, 1 or nan: {text!r}") from None


def positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"not a positive integer: {text!r}")
    return value
