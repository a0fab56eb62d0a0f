import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from strategies import long_tables

import polars_rankmetrics as rm


def slow_per_class(y_true, y_score, weights):
    """Obviously correct reference: loop over every positive cell."""
    n_samples, n_labels = y_true.shape
    w = np.ones(n_samples) if weights is None else weights
    sums, counts = np.zeros(n_labels), np.zeros(n_labels)
    for i in range(n_samples):
        for j in range(n_labels):
            if y_true[i, j] > 0:
                at_or_above = y_score[i] >= y_score[i, j]
                precision = (y_true[i][at_or_above] > 0).sum() / at_or_above.sum()
                sums[j] += w[i] * precision
                counts[j] += w[i]
    with np.errstate(invalid="ignore"):
        return sums / counts, counts / counts.sum()


@settings(max_examples=80, deadline=None)
@given(table=long_tables())
def test_per_class_lwlrap_matches_slow_reference_and_sums_to_lwlrap(table):
    df, y_true, y_score, weights = table
    weight = "weight" if weights is not None else None
    per_class = rm.lwlrap_per_class(df, weight=weight)
    values, shares = slow_per_class(y_true, y_score, weights)
    np.testing.assert_allclose(per_class["lwlrap"].fill_null(np.nan), values, rtol=1e-9)
    # No (weighted) positive anywhere: every share is 0 / 0 = NaN, as documented.
    np.testing.assert_allclose(per_class["weight"], shares, rtol=1e-9)
    overall = rm.evaluate(df, ["lwlrap"], weight=weight)["lwlrap"][0]
    if np.isnan(shares).all():
        assert np.isnan(overall) and per_class["lwlrap"].is_null().all()
    else:
        breakdown = (per_class["lwlrap"].fill_null(0) * per_class["weight"]).sum()
        assert breakdown == pytest.approx(overall, rel=1e-9)


def test_per_class_by_group_and_lazy():
    df = rm.from_dense([[1, 0, 1], [0, 0, 1]], [[0.75, 0.5, 1], [1, 0.2, 0.1]])
    both = pl.concat(
        [df.with_columns(m=pl.lit("a")), df.with_columns(m=pl.lit("b"), score=-pl.col("score"))]
    )
    out = both.lazy().pipe(rm.lwlrap_per_class, by="m")
    assert isinstance(out, pl.LazyFrame)
    out = out.collect()
    assert out.columns == ["m", "label", "lwlrap", "weight"]
    a = out.filter(m="a")
    # Model a, sample 0 (scores .75, .5, 1; labels 0 and 2 positive): label 2 ranks first,
    # precision 1/1; label 0 second, precision 2/2. Sample 1 (scores 1, .2, .1; label 2
    # positive) ranks label 2 last: precision 1/3. Label 1 is never positive: null, weight 0.
    assert a["label"].to_list() == [0, 1, 2]
    assert a["lwlrap"][0] == pytest.approx(1.0)
    assert a["lwlrap"][1] is None
    assert a["lwlrap"][2] == pytest.approx((1 + 1 / 3) / 2)
    assert a["weight"].to_list() == pytest.approx([1 / 3, 0.0, 2 / 3])
