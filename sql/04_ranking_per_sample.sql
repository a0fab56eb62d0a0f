-- rankmetrics_ranking_per_sample: one row per (grp, sample): the metrics that need only the rank
-- table (no cut-off).
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
    grp, sample, weight, n_labels, n_positives,
    CAST(coalesce(max_positive_rank, 0) AS DOUBLE) AS coverage_error,
    coalesce(precision_sum / nullif(n_positives, 0), CAST(1 AS DOUBLE)) AS lrap,
    coalesce(
        CAST(wrong_pairs AS DOUBLE) / nullif(n_positives * (n_labels - n_positives), 0),
        CAST(0 AS DOUBLE)
    ) AS ranking_loss,
    precision_sum / nullif(n_positives, 0) AS lwlrap,
    coalesce(precision_sum / nullif(n_positives, 0), CAST(0 AS DOUBLE)) AS average_precision,
    (n_positives * (n_labels + CAST(1 AS DOUBLE)) - rank_span_sum / 2
        - n_positives * (n_positives + CAST(1 AS DOUBLE)) / 2)
        / nullif(CAST(n_positives AS DOUBLE) * (n_labels - n_positives), 0) AS roc_auc
FROM (
    SELECT
        grp, sample,
        max(weight) AS weight,
        coalesce(max(label_space), count(*)) AS n_labels,
        count(CASE WHEN truth > 0 THEN 1 END) AS n_positives,
        max(CASE WHEN truth > 0 THEN rank END) AS max_positive_rank,
        sum(CASE WHEN truth > 0 THEN CAST(positive_rank AS DOUBLE) / rank END) AS precision_sum,
        sum(CASE WHEN truth > 0 THEN rank - positive_rank END) AS wrong_pairs,
        sum(CASE WHEN truth > 0 THEN CAST(block_start + rank AS DOUBLE) END) AS rank_span_sum
    FROM rankmetrics_rank_table
    GROUP BY grp, sample
) AS ranked;

-- rankmetrics_coverage_per_sample: one row per (grp, sample): coverage_error alone, without a
-- sort or a window (the ranking view's column, from an aggregation joined back): the labels
-- scoring at least the sample's lowest-scoring positive (its tied peers included, as rank "max"
-- has them). 0 without a positive; on a top-k table, n_labels when a positive has no score (it
-- ranks with the unscored labels, last). A window partition (min OVER the sample) then a GROUP BY
-- took 3x as long on DuckDB.
CREATE OR REPLACE VIEW rankmetrics_coverage_per_sample AS
SELECT
    s.grp, s.sample,
    max(s.weight) AS weight,
    CAST(CASE
        WHEN max(s.positives) = 0 THEN 0
        WHEN max(s.unscored_positives) > 0 THEN max(p.n_labels)
        ELSE count(CASE WHEN i.score >= s.lowest_positive THEN 1 END)
    END AS DOUBLE) AS coverage_error
FROM rankmetrics_input AS i
JOIN (
    SELECT
        grp, sample,
        max(weight) AS weight,
        count(CASE WHEN truth > 0 THEN 1 END) AS positives,
        count(CASE WHEN truth > 0 AND score IS NULL THEN 1 END) AS unscored_positives,
        min(CASE WHEN truth > 0 THEN score END) AS lowest_positive
    FROM rankmetrics_input
    GROUP BY grp, sample
) AS s ON i.grp = s.grp AND i.sample = s.sample
CROSS JOIN rankmetrics_parameters AS p
GROUP BY s.grp, s.sample;
