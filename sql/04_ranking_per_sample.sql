-- rankmetrics_ranking_per_sample: one row per (grp, sample): the metrics that need only the ranks
-- of the positives (rankmetrics_positive_ranks, no cut-off).
-- average_precision is lrap's mean precision over the positives (a tied block is one threshold);
-- roc_auc is the share of (positive, negative) pairs the positive wins, a tie counting 1/2, from
-- the positives' ascending average ranks n_labels + 1 - (block_start + rank) / 2 (Mann-Whitney).
-- Degenerate cases follow scikit-learn:
--   no positive label:   coverage_error 0, lrap 1, ranking_loss 0, lwlrap NULL (weight 0),
--                        average_precision 0, roc_auc NULL (scikit-learn: NaN)
--   all labels positive: coverage_error = n_labels, lrap 1, ranking_loss 0, roc_auc NULL
-- A tie counts as a ranking error (<=) and takes the largest rank. On a top-k table n_labels is the
-- label space's size, and the unscored labels without a row (negatives) count through it.
CREATE OR REPLACE VIEW rankmetrics_ranking_per_sample AS
SELECT
    s.grp, s.sample, s.weight, s.n_labels, s.n_positives,
    CAST(coalesce(r.max_positive_rank, 0) AS DOUBLE) AS coverage_error,
    coalesce(r.precision_sum / nullif(s.n_positives, 0), CAST(1 AS DOUBLE)) AS lrap,
    coalesce(
        CAST(r.wrong_pairs AS DOUBLE) / nullif(s.n_positives * (s.n_labels - s.n_positives), 0),
        CAST(0 AS DOUBLE)
    ) AS ranking_loss,
    r.precision_sum / nullif(s.n_positives, 0) AS lwlrap,
    coalesce(r.precision_sum / nullif(s.n_positives, 0), CAST(0 AS DOUBLE)) AS average_precision,
    (s.n_positives * (s.n_labels + CAST(1 AS DOUBLE)) - r.rank_span_sum / 2
        - s.n_positives * (s.n_positives + CAST(1 AS DOUBLE)) / 2)
        / nullif(CAST(s.n_positives AS DOUBLE) * (s.n_labels - s.n_positives), 0) AS roc_auc
FROM rankmetrics_sample_counts AS s
LEFT JOIN (
    SELECT
        p.grp, p.sample,
        max(p.rank) AS max_positive_rank,
        sum(CAST(p.positive_rank AS DOUBLE) / p.rank) AS precision_sum,
        sum(p.rank - p.positive_rank) AS wrong_pairs,
        sum(CAST(p.block_start + p.rank AS DOUBLE)) AS rank_span_sum
    FROM rankmetrics_positive_ranks AS p
    GROUP BY p.grp, p.sample
) AS r ON s.grp = r.grp AND s.sample = r.sample;

-- rankmetrics_coverage_per_sample: one row per (grp, sample): coverage_error alone, without a
-- sort or a window (the ranking view's column, from the sample counts joined back): the labels
-- scoring at least the sample's lowest-scoring positive (its tied peers included, as rank "max"
-- has them). 0 without a positive; on a top-k table, n_labels when a positive has no score (it
-- ranks with the unscored labels, last). Every row is joined to its sample's counts on the
-- sample alone and the rows counted are summed as 0/1: a comparison of the two sides in the
-- join (a WHERE on both) costs DuckDB, which evaluates it within its hash join, about twice the
-- conditional sums (benchmarks/speed.py, coverage_error). A sample with neither an unscored
-- positive nor a scored one (lowest_positive NULL) has none: the positives need no count here.
CREATE OR REPLACE VIEW rankmetrics_coverage_per_sample AS
SELECT
    s.grp, s.sample, s.weight,
    CAST(CASE
        WHEN c.unscored_positives > 0 THEN p.n_labels
        WHEN s.lowest_positive IS NULL THEN 0
        ELSE c.covered
    END AS DOUBLE) AS coverage_error
FROM rankmetrics_sample_counts AS s
CROSS JOIN rankmetrics_parameters AS p
LEFT JOIN (
    SELECT
        i.grp, i.sample,
        sum(CASE WHEN i.score >= s.lowest_positive THEN 1 ELSE 0 END) AS covered,
        sum(CASE WHEN i.truth > 0 AND i.score IS NULL THEN 1 ELSE 0 END) AS unscored_positives
    FROM rankmetrics_input AS i
    JOIN rankmetrics_sample_counts AS s ON i.grp = s.grp AND i.sample = s.sample
    GROUP BY i.grp, i.sample
) AS c ON c.grp = s.grp AND c.sample = s.sample;
