-- rankmetrics_per_sample: one row per (grp, sample, k) for every cut-off k in rankmetrics_cutoffs(k)
-- (NULL = no cut; the metrics other than dcg/ndcg do not depend on k).
-- Degenerate cases follow scikit-learn:
--   no positive label:   coverage_error 0, lrap 1, ranking_loss 0, lwlrap NULL (weight 0), dcg 0, ndcg 0
--   all labels positive: coverage_error = n_labels, lrap 1, ranking_loss 0
-- A tie counts as a ranking error (<=) and takes the largest rank; dcg gives a tied block its mean
-- gain times the discounts of the positions it spans (D(rank) - D(block_start - 1)), also when the
-- block straddles k: each row adds its gain times that span over the block's size.
CREATE OR REPLACE VIEW rankmetrics_per_sample AS
WITH ranked AS (
    SELECT
        t.grp, t.sample, c.k,
        max(t.weight) AS weight,
        count(*) AS n_labels,
        count(CASE WHEN t.truth > 0 THEN 1 END) AS n_positives,
        max(CASE WHEN t.truth > 0 THEN t.rank END) AS max_positive_rank,
        sum(CASE WHEN t.truth > 0 THEN CAST(t.positive_rank AS DOUBLE) / t.rank END) AS precision_sum,
        sum(CASE WHEN t.truth > 0 THEN t.rank - t.positive_rank END) AS wrong_pairs,
        sum(t.truth * (hi.cumulative - lo.cumulative) / (t.rank - t.block_start + 1)) AS dcg
    FROM rankmetrics_rank_table AS t
    CROSS JOIN rankmetrics_cutoffs AS c
    JOIN rankmetrics_discounts AS hi ON hi.position = least(t.rank, coalesce(c.k, t.rank))
    JOIN rankmetrics_discounts AS lo ON lo.position = least(t.block_start - 1, coalesce(c.k, t.rank))
    GROUP BY t.grp, t.sample, c.k
),
ideal AS (
    SELECT
        t.grp, t.sample, c.k,
        sum(t.truth * (hi.cumulative - lo.cumulative)) AS ideal_dcg
    FROM rankmetrics_ideal_table AS t
    CROSS JOIN rankmetrics_cutoffs AS c
    JOIN rankmetrics_discounts AS hi ON hi.position = least(t.truth_rank, coalesce(c.k, t.truth_rank))
    JOIN rankmetrics_discounts AS lo
        ON lo.position = least(t.truth_rank - t.n, coalesce(c.k, t.truth_rank))
    GROUP BY t.grp, t.sample, c.k
)
SELECT
    r.grp, r.sample, r.k, r.weight, r.n_labels, r.n_positives,
    CAST(coalesce(r.max_positive_rank, 0) AS DOUBLE) AS coverage_error,
    coalesce(r.precision_sum / nullif(r.n_positives, 0), 1.0) AS lrap,
    coalesce(
        CAST(r.wrong_pairs AS DOUBLE) / nullif(r.n_positives * (r.n_labels - r.n_positives), 0), 0.0
    ) AS ranking_loss,
    r.precision_sum / nullif(r.n_positives, 0) AS lwlrap,
    r.dcg,
    CASE WHEN i.ideal_dcg > 0 THEN r.dcg / i.ideal_dcg ELSE 0.0 END AS ndcg
FROM ranked AS r
JOIN ideal AS i
    ON r.grp IS NOT DISTINCT FROM i.grp AND r.sample = i.sample AND r.k IS NOT DISTINCT FROM i.k;
