"""Tables joined on a column must give it one type: a mismatch is refused as bad input, naming
the column, both types and the cast, never a Polars SchemaError."""

import polars as pl
import pytest

import polars_rankmetrics as rm

PREDICTIONS = pl.DataFrame({"sample": [1, 1, 2], "label": [1, 2, 1], "score": [0.9, 0.2, 0.5]})
TRUTH = pl.DataFrame({"sample": [1, 2], "label": [1, 1]})
PROPENSITIES = pl.DataFrame({"label": [1, 2], "propensity": [0.5, 0.5]})


@pytest.mark.parametrize(
    ("truth", "propensities", "message"),
    [
        (TRUTH.with_columns(pl.col("sample").cast(pl.String)), None,
         r"column 'sample' is Int64 in the predictions and String in the truth table"),
        (TRUTH.with_columns(pl.col("label").cast(pl.String)), None,
         r"column 'label' is Int64 in the predictions and String in the truth table"),
        (TRUTH, PROPENSITIES.with_columns(pl.col("label").cast(pl.String)),
         r"column 'label' is Int64 in the table and String in the propensity table"),
    ],
)  # fmt: skip
def test_a_join_column_of_two_types_is_refused(truth, propensities, message):
    keys = ["psprecision@1"] if propensities is not None else ["mrr"]
    with pytest.raises(ValueError, match=message + r".*pl\.col\('\w+'\)\.cast\(pl\.Int64\)"):
        rm.evaluate(PREDICTIONS, keys, truth_table=truth, propensities=propensities)


def test_the_by_column_is_named_as_the_user_names_it():
    with pytest.raises(ValueError, match=r"column 'model' is Int32 in the predictions and String"):
        rm.evaluate(
            PREDICTIONS.with_columns(model=pl.lit(1, pl.Int32)), ["mrr"], by="model",
            truth_table=TRUTH.with_columns(model=pl.lit("1")),
        )  # fmt: skip


def test_a_dense_table_and_its_propensities_too():
    dense = rm.from_dense([[1, 0], [0, 1]], [[0.9, 0.1], [0.2, 0.8]])
    strings = PROPENSITIES.with_columns(pl.col("label").cast(pl.String))
    with pytest.raises(ValueError, match=r"column 'label' is Int64 in the table and String"):
        rm.evaluate(dense, ["psprecision@1"], propensities=strings)
