"""Hand-computed cases: every worked example of the source documents, and tie cases by hand."""

import math

import pytest

import polars_rankmetrics as rm

Y_TRUE = [[1, 0, 0], [0, 0, 1]]
Y_SCORE = [[0.75, 0.5, 1], [1, 0.2, 0.1]]


def value(y_true, y_score, metric, engine, **kw):
    return engine.evaluate(rm.from_dense(y_true, y_score), [metric], **kw)[metric][0]


def test_coverage_error_doc_example(engine):
    # sample 0: the positive (0.75) has rank 2; sample 1: the positive (0.1) has rank 3.
    assert value(Y_TRUE, Y_SCORE, "coverage_error", engine) == 2.5


def test_lrap_doc_example(engine):
    # (1/2 + 1/3) / 2
    assert value(Y_TRUE, Y_SCORE, "lrap", engine) == pytest.approx(5 / 12)


def test_lrap_multilabel_blog_example(engine):
    # sample 0: positives at ranks 2 (2 positives at or above) and 1 -> (2/2 + 1/1) / 2 = 1
    # sample 1: 1/3 -> mean (1 + 1/3) / 2 = 2/3
    assert value([[1, 0, 1], [0, 0, 1]], Y_SCORE, "lrap", engine) == pytest.approx(2 / 3)


def test_ranking_loss_doc_examples(engine):
    # sample 0: the positive (0.75) is below one negative (1) of 2 pairs: 1/2; sample 1: 2/2.
    assert value(Y_TRUE, Y_SCORE, "ranking_loss", engine) == pytest.approx(0.75)
    assert value(Y_TRUE, [[1.0, 0.1, 0.2], [0.1, 0.2, 0.9]], "ranking_loss", engine) == 0.0


def test_ranking_loss_geeksforgeeks_examples(engine):
    y_true = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
    # Each sample: one of its two pairs is wrong -> 1/2 each.
    assert (
        value(y_true, [[0.75, 0.5, 1], [1, 0.2, 0.1], [0.1, 1, 0.9]], "ranking_loss", engine) == 0.5
    )
    # Sample 2 ties a negative (0.1 vs 0.1) only among negatives; no positive is ranked below.
    assert (
        value(y_true, [[0.75, 0.5, 0.1], [0.1, 0.6, 0.1], [0.3, 0.3, 0.4]], "ranking_loss", engine)
        == 0.0
    )


def test_tie_counts_as_a_ranking_error(engine):
    # One positive tied with one negative: the single pair counts as wrong (<=, not <).
    assert value([[1, 0]], [[0.5, 0.5]], "ranking_loss", engine) == 1.0
    # ... and the positive takes the pessimistic (max) rank 2.
    assert value([[1, 0]], [[0.5, 0.5]], "coverage_error", engine) == 2.0
    assert value([[1, 0]], [[0.5, 0.5]], "lrap", engine) == 0.5


def test_degenerate_rows(engine):
    # No positive: coverage 0, lrap 1, ranking loss 0. All positive: coverage L, lrap 1, loss 0.
    empty, full = [[0, 0, 0]], [[1, 1, 1]]
    score = [[0.3, 0.2, 0.1]]
    assert value(empty, score, "coverage_error", engine) == 0.0
    assert value(empty, score, "lrap", engine) == 1.0
    assert value(empty, score, "ranking_loss", engine) == 0.0
    assert value(full, score, "coverage_error", engine) == 3.0
    assert value(full, score, "lrap", engine) == 1.0
    assert value(full, score, "ranking_loss", engine) == 0.0
    assert value(empty, score, "ndcg", engine) == 0.0
    assert value(empty, score, "dcg", engine) == 0.0


def test_dcg_tied_block_averages_gains(engine):
    # Scores [1, 1, 0.5], gains [1, 0, 1]. The tied block spans positions 1-2 with mean gain 1/2:
    # 0.5 * (1/log2(2) + 1/log2(3)) + 1 * 1/log2(4)
    expected = 0.5 * (1 + 1 / math.log2(3)) + 1 / math.log2(4)
    assert value([[1, 0, 1]], [[1, 1, 0.5]], "dcg", engine) == pytest.approx(expected)
    # Cut at k=1 inside the block: the block keeps only position 1's discount, times 1/2.
    assert value([[1, 0, 1]], [[1, 1, 0.5]], "dcg@1", engine) == pytest.approx(0.5)
    # ndcg@1: the ideal puts a gain of 1 first.
    assert value([[1, 0, 1]], [[1, 1, 0.5]], "ndcg@1", engine) == pytest.approx(0.5)


def test_dcg_graded_gain_and_log_base(engine):
    # Gains [3, 0, 1] ranked by score [0.1, 0.9, 0.5]: order 0.9 (0), 0.5 (1), 0.1 (3).
    expected_base2 = 0 + 1 / math.log2(3) + 3 / math.log2(4)
    assert value([[3, 0, 1]], [[0.1, 0.9, 0.5]], "dcg", engine) == pytest.approx(expected_base2)
    ideal = 3 + 1 / math.log2(3)
    assert value([[3, 0, 1]], [[0.1, 0.9, 0.5]], "ndcg", engine) == pytest.approx(
        expected_base2 / ideal
    )
    base10 = 1 / math.log10(3) + 3 / math.log10(4)
    assert value([[3, 0, 1]], [[0.1, 0.9, 0.5]], "dcg", engine, log_base=10) == pytest.approx(
        base10
    )


def test_lwlrap_weights_samples_by_positives(engine):
    # Precisions: sample 0 has positives at ranks 2 (2/2) and 1 (1/1); sample 1 one at 1/3.
    # lwlrap = (1 + 1 + 1/3) / 3 positives; lrap would be (1 + 1/3) / 2.
    assert value([[1, 0, 1], [0, 0, 1]], Y_SCORE, "lwlrap", engine) == pytest.approx(7 / 9)


def test_weights(engine):
    # coverage per sample 2 and 3; weights 1 and 3 -> (2 + 9) / 4
    df = rm.from_dense(Y_TRUE, Y_SCORE).with_columns(
        w=(rm.from_dense(Y_TRUE, Y_SCORE)["sample"] * 2 + 1)
    )
    result = engine.evaluate(df, ["coverage_error"], weight="w")
    assert result["coverage_error"][0] == pytest.approx(11 / 4)


def test_infinite_scores_are_ordered(engine):
    # +inf ranks first, -inf last; the positive at -inf has rank 3.
    inf = float("inf")
    assert value([[0, 0, 1]], [[inf, 0.0, -inf]], "coverage_error", engine) == 3.0
    assert value([[1, 0, 0]], [[inf, inf, -inf]], "coverage_error", engine) == 2.0
