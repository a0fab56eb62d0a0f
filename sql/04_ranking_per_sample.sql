-- rankmetrics_ranking_per_sample: one row per (grp, sample): the metrics that need only the rank
-- table (no cut-off).
-- Degenerate cases follow scikit-learn:
--   no positive label:   coverage_error 0, lrap 1, ranking_loss 0, lwlrap NULL (weight 0)
--   all labels positive: coverage_error = n_labels, lrap 1, ranking_loss 0
-- A tie counts as a ranking error (<=) and takes the largest rank.
CREATE OR REPLACE VIEW rankmetrics_ranking_per_sample AS
SELECT
    grp, sample, weight, n_labels, n_positives,
    CAST(coalesce(max_positive_rank, 0) AS DOUBLE) AS coverage_error,
    coalesce(precision_sum / nullif(n_positives, 0), CAST(1 AS DOUBLE)) AS lrap,
    coalesce(
        CAST(wrong_pairs AS DOUBLE) / nullif(n_positives * (n_labels - n_positives), 0),
        CAST(0 AS DOUBLE)
    ) AS ranking_loss,
    precision_sum / nullif(n_positives, 0) AS lwlrap
FROM (
    SELECT
        grp, sample,
        max(weight) AS weight,
        count(*) AS n_labels,
        count(CASE WHEN truth > 0 THEN 1 END) AS n_positives,
        max(CASE WHEN truth > 0 THEN rank END) AS max_positive_rank,
        sum(CASE WHEN truth > 0 THEN CAST(positive_rank AS DOUBLE) / rank END) AS precision_sum,
        sum(CASE WHEN truth > 0 THEN rank - positive_rank END) AS wrong_pairs
    FROM rankmetrics_rank_table
    GROUP BY grp, sample
) AS ranked;
