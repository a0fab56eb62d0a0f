"""The extreme-classification keys of a top-k table against napkinXC's metrics module (the
oracle where it has the metric: its propensity-scored values are pyxclib's ratios of dataset
sums) and slow references written here from the definitions."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

import polars_rankmetrics as rm

PRESETS = {"wikipedia": (0.5, 0.4), "amazon": (0.6, 2.6), "other": (0.55, 1.5)}


def _inverse_propensity(count: int, n: int, a: float, b: float) -> float:
    """Jain et al.'s inverse propensity, written from the formula."""
    c = (math.log(n) - 1) * (b + 1) ** a
    return 1 + c * (count + b) ** -a


@pytest.mark.parametrize("dataset", [*PRESETS, None])
def test_label_propensities_presets_follow_the_formula(dataset):
    rng = np.random.default_rng(7)
    n_samples, n_labels = 60, 12
    rows = [(i, j) for i in range(n_samples) for j in range(n_labels) if rng.random() < 0.2]
    train = pl.DataFrame(rows, schema=["sample", "label"], orient="row")
    seen = train["sample"].n_unique()
    result = rm.label_propensities(train, dataset=dataset, labels=range(n_labels + 2))
    a, b = PRESETS[dataset or "other"]
    counts = train.group_by("label").len()
    count = dict(zip(counts["label"], counts["len"], strict=True))
    expected = [_inverse_propensity(count.get(j, 0), seen, a, b) for j in range(n_labels + 2)]
    np.testing.assert_allclose(1 / result["propensity"].to_numpy(), expected, rtol=1e-12)


@pytest.mark.parametrize("dataset", list(PRESETS))
def test_label_propensities_equal_napkinxc_with_the_training_size(dataset):
    """N counts the training rows without a label too (n_samples), as the matrix's rows."""
    napkinxc = pytest.importorskip("napkinxc.metrics")
    from scipy.sparse import csr_matrix

    rng = np.random.default_rng(3)
    dense = (rng.random((40, 9)) < 0.15).astype(np.float64)
    dense[5] = 0  # a training sample without a label
    dense[:, 4] = 0  # a label never seen in training
    rows, columns = np.nonzero(dense)
    train = pl.DataFrame({"sample": rows, "label": columns})
    a, b = PRESETS[dataset]
    theirs = napkinxc.Jain_et_al_inverse_propensity(csr_matrix(dense), A=a, B=b)
    ours = rm.label_propensities(train, dataset=dataset, labels=range(9), n_samples=40)
    np.testing.assert_allclose(1 / ours["propensity"].to_numpy(), theirs, rtol=1e-12)


def test_label_propensities_refuse_bad_models():
    train = pl.DataFrame({"sample": [0, 1], "label": ["a", "b"]})
    with pytest.raises(ValueError, match="unknown dataset 'imdb'; the presets are wikipedia"):
        rm.label_propensities(train, dataset="imdb")
    with pytest.raises(ValueError, match="give dataset='amazon' or a= and b=, not both"):
        rm.label_propensities(train, dataset="amazon", a=0.5)
    with pytest.raises(ValueError, match="n_samples=1 is below the 2 distinct samples"):
        rm.label_propensities(train, n_samples=1)
