"""The ``rankmetrics`` command: evaluate Parquet files from the shell. :func:`main` runs one
command (:mod:`.parser` reads it, :mod:`.commands` computes it, :mod:`.output` writes it,
:mod:`.sql` prints SQL) and turns bad input, warnings and signals into lines of stderr and an
exit status."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import warnings
from collections.abc import Iterator
from types import FrameType
from typing import Any

import polars as pl

from polars_rankmetrics.cli.commands import baseline_of, by_columns, compute, run_trec, tie_line
from polars_rankmetrics.cli.option_groups import TIE_RULES
from polars_rankmetrics.cli.output import ProgressLine, compared, output_format, render
from polars_rankmetrics.cli.parser import (
    TREC_TIES,
    UsageError,
    build_parser,
    check_lists,
    refusal_status,
)
from polars_rankmetrics.cli.sql import print_sql
from polars_rankmetrics.engines import interrupts
from polars_rankmetrics.engines.base import get_engine
from polars_rankmetrics.outputs import write_text
from polars_rankmetrics.report.comparison import Comparison
from polars_rankmetrics.report.leaderboard import Leaderboard
from polars_rankmetrics.report.page import require_matplotlib
from polars_rankmetrics.trec.output import trec_eval_lines

__all__ = ["TIE_RULES", "main"]


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit status: 0 on success, 1 on bad input, 2 on a usage error
    (:class:`~polars_rankmetrics.cli.parser.UsageError`), 128 + the signal on
    Ctrl-C (130) or SIGTERM (143), after the run has removed its temporary files."""
    received: list[int] = []

    def stop(signum: int, frame: FrameType | None) -> None:
        if not received:  # a second signal must not cut the clean-up short
            received.append(signum)
            raise Interrupted(signum)

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        with interrupts.watching(), _warnings_as_lines():
            status = _run(build_parser().parse_args(argv))
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


def _shown(baseline: object) -> str:
    """The baseline as the comparison's table names a model: its values joined by ", "."""
    return ", ".join(map(str, baseline)) if isinstance(baseline, tuple) else str(baseline)


def _first_line(error: BaseException | str) -> str:
    """The first line of an error's message (its type's name when it has none)."""
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


class Interrupted(BaseException):
    """A signal, raised like KeyboardInterrupt so that every ``finally`` runs (temporary files,
    connections) on the way out."""


def _run(args: argparse.Namespace) -> int:
    try:
        check_lists(args)
    except UsageError as error:
        print(f"rankmetrics: error: {error}", file=sys.stderr)
        return refusal_status(error)
    if args.command == "sql":
        return print_sql(args)
    try:
        by = [] if args.command == "trec" else by_columns(args)
        engine_errors = get_engine(args.engine).errors
        if args.command == "report" and args.html is not None:
            require_matplotlib()
    except (ValueError, ImportError) as error:  # before any work: usage, missing packages
        print(f"rankmetrics: error: {error}", file=sys.stderr)
        return refusal_status(error)
    reported: tuple[type[Exception], ...] = (
        ValueError, OSError, ImportError, pl.exceptions.PolarsError, *engine_errors,
    )  # fmt: skip
    line = None if args.quiet or not sys.stderr.isatty() else ProgressLine(args.engine)
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
            result = run_trec(args, options) if args.command == "trec" else compute(args, options)
    except reported as error:
        if isinstance(error.__context__, Interrupted):
            raise
        print(f"rankmetrics: error: {_first_line(error)}", file=sys.stderr)
        return refusal_status(error)
    stated = tie_line(args)
    if stated is not None and not args.quiet:
        print(f"rankmetrics: {stated}", file=sys.stderr)
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
    if args.command == "leaderboard":
        text = Leaderboard(result, by, args.alpha, args.test).render(output_format(args))
    elif args.command == "compare":
        fmt = output_format(args)
        shown = "" if args.all_pairs else _shown(baseline_of(args, by))
        text = Comparison(result, by, args.alpha, baseline=shown).render(fmt)
        if fmt in ("table", "markdown") and result.height and result["wins"].is_not_null().any():
            text += ("\n\n" if fmt == "markdown" else "\n") + compared(result, by)
    else:
        text = render(result, output_format(args), grouped)
    if args.output is None:
        print(text)
        return 0
    try:
        write_text(args.output, text + "\n")
    except OSError as error:
        print(
            f"rankmetrics: error: cannot write {args.output!r}: {error.strerror}", file=sys.stderr
        )
        return 1
    return 0
