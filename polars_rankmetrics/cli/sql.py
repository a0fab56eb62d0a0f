"""``rankmetrics sql``: the SQL views in a dialect, with the input views over a table, or the
statements of an evaluation state and of its roll-up."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace

from polars_rankmetrics.cli.parser import SQL_ALONE, UsageError, refusal_status, split_values
from polars_rankmetrics.engines.sql.export import input_statements, view_statements
from polars_rankmetrics.engines.sql.state import finalize_statements, state_statements
from polars_rankmetrics.inputs.columns import Columns
from polars_rankmetrics.metrics.parameters import parameters
from polars_rankmetrics.metrics.registry import DEFAULT_METRICS, parse_keys

# The relations the SQL views read.
_INPUT_RELATIONS = ("rankmetrics_input", "rankmetrics_cutoffs", "rankmetrics_parameters")


def print_sql(args: argparse.Namespace) -> int:
    """``rankmetrics sql``: the views of ``sql/`` in ``--dialect``, after the input views over
    ``--input`` where it is given; with ``--state`` or ``--finalize``, the state's statements
    (:func:`_print_state_sql`). Returns the exit status."""
    if args.state or args.finalize:
        return _print_state_sql(args)
    given = {"--metrics": args.metrics, "--intervals": args.intervals or None, "--ci": args.ci,
             "--n-boot": args.n_boot, "--seed": args.seed}  # fmt: skip
    misplaced = [option for option, value in given.items() if value is not None]
    if misplaced:
        print(f"rankmetrics: error: {misplaced[0]} applies to --state or --finalize",
              file=sys.stderr)  # fmt: skip
        return 2
    statements = list(view_statements(args.dialect))
    if args.input is not None:
        cols = _sql_columns(args)
        try:
            if any(k < 1 for k in args.k):
                raise UsageError("--k must be a positive integer")
            if args.n_labels is not None and args.n_labels < 1:
                raise UsageError("--n-labels must be a positive integer")
            if args.truth_by is not None and args.truth_table is None:
                raise UsageError("--truth-by names the by columns of a --truth-table: give one")
            context = parameters(
                threshold=args.threshold, beta=args.beta, zero_division=args.zero_division
            )
            defined = input_statements(
                args.input, cols, args.dialect, [None, *args.k], bool_truth=args.bool_truth,
                bool_pred=args.bool_truth, threshold=context.threshold, beta=context.beta,
                zero_division=context.zero_division, n_labels=args.n_labels,
                truth_table=args.truth_table, gain=args.gain,
                truth_by=None if args.truth_by is None else split_values(args.truth_by),
            )  # fmt: skip
        except ValueError as error:
            print(f"rankmetrics: error: {error}", file=sys.stderr)
            return refusal_status(error)
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
        weight=args.weight, by=split_values(args.by), pred=args.pred,
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
            raise UsageError("give --state or --finalize, not both")
        if args.k:
            raise UsageError("--k does not apply to states: give cut-offs in --metrics (ndcg@10)")
        if args.truth_by is not None:
            raise UsageError(
                "--truth-by does not apply to states: the truth table of --state has every --by "
                "column"
            )
        asked, wrong = ("--state", finalize_only) if args.state else ("--finalize", state_only)
        given = [option for option, value in wrong.items() if value is not None]
        if given:
            raise UsageError(f"{given[0]} does not apply to {asked}")
        keys = parse_keys(split_values([args.metrics or ",".join(DEFAULT_METRICS)]))
        if args.finalize:
            statements = finalize_statements(
                args.dialect, keys, split_values(args.by), ci=args.ci,
                n_boot=1000 if args.n_boot is None else args.n_boot,
                seed=0 if args.seed is None else args.seed,
            )  # fmt: skip
        elif args.input is None:
            raise UsageError("--state defines rankmetrics_state over --input TABLE: give one")
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
        return refusal_status(error)
    if args.finalize:
        # What the statements read, where a reader starts.
        print(
            "-- The views read rankmetrics_states, a table or view of states (the columns of "
            "rankmetrics_state): define it first.\n"
        )
    print("\n\n".join(f"{statement};" for statement in statements))
    return 0
