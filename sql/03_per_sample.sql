-- rankmetrics_per_sample: one row per (grp, sample, k) for every cut-off k in rankmetrics_cutoffs(k)
-- (NULL = no cut). Degenerate cases follow scikit-learn:
--   no positive label:   coverage_error 0, lrap 1, ranking_loss 0, lwlrap NULL (weight 0), dcg 0, ndcg 0
--   all labels positive: coverage_error = n_labels, lrap 1, ranking_loss 0
-- A tie counts as a ranking error (<=); dcg averages a tied block's gain over the positions it spans,
-- also when the block straddles k.
CREATE OR REPLACE VIEW rankmetrics_per_sample AS
WITH gains AS (
    SELECT
        t.grp, t.sample, c.k, t.weight, t.n, t.truth, t.rank, t.positive_rank,
        t.truth * t.n * (score_hi.cumulative - score_lo.cumulative) / t.score_block AS dcg_part,
        t.truth * t.n * (truth_hi.cumulative - truth_lo.cumulative) / t.truth_block AS ideal_part
    FROM rankmetrics_rank_table AS t
    CROSS JOIN rankmetrics_cutoffs AS c
    JOIN rankmetrics_discounts AS score_hi
        ON score_hi.position = least(t.rank, coalesce(c.k, t.rank))
    JOIN rankmetrics_discounts AS score_lo
        ON score_lo.position = least(t.rank - t.score_block, coalesce(c.k, t.rank))
    JOIN rankmetrics_discounts AS truth_hi
        ON truth_hi.position = least(t.truth_rank, coalesce(c.k, t.truth_rank))
    JOIN rankmetrics_discounts AS truth_lo
        ON truth_lo.position = least(t.truth_rank - t.truth_block, coalesce(c.k, t.truth_rank))
),
samples AS (
    SELECT
        grp, sample, k,
        max(weight) AS weight,
        sum(n) AS n_labels,
        sum(CASE WHEN truth > 0 THEN n ELSE 0 END) AS n_positives,
        max(CASE WHEN truth > 0 THEN rank END) AS max_positive_rank,
        sum(CASE WHEN truth > 0 THEN n * CAST(positive_rank AS DOUBLE) / rank END) AS precision_sum,
        sum(CASE WHEN truth > 0 THEN n * (rank - positive_rank) END) AS wrong_pairs,
        sum(dcg_part) AS dcg,
        sum(ideal_part) AS ideal_dcg
    FROM gains
    GROUP BY grp, sample, k
)
SELECT
    grp, sample, k, weight, n_labels, n_positives,
    CAST(coalesce(max_positive_rank, 0) AS DOUBLE) AS coverage_error,
    coalesce(precision_sum / nullif(n_positives, 0), 1.0) AS lrap,
    coalesce(CAST(wrong_pairs AS DOUBLE) / nullif(n_positives * (n_labels - n_positives), 0), 0.0)
        AS ranking_loss,
    precision_sum / nullif(n_positives, 0) AS lwlrap,
    dcg,
    CASE WHEN ideal_dcg > 0 THEN dcg / ideal_dcg ELSE 0.0 END AS ndcg
FROM samples;
