-- rankmetrics_summary: one row per (grp, k): the weighted means of rankmetrics_per_sample.
-- lwlrap weighs each sample by weight * n_positives; with no positive at all it is NaN.
CREATE OR REPLACE VIEW rankmetrics_summary AS
SELECT
    grp, k,
    sum(weight * coverage_error) / sum(weight) AS coverage_error,
    sum(weight * lrap) / sum(weight) AS lrap,
    sum(weight * ranking_loss) / sum(weight) AS ranking_loss,
    CASE
        WHEN sum(weight * n_positives) > 0
            THEN sum(weight * n_positives * lwlrap) / sum(weight * n_positives)
        ELSE CAST('NaN' AS DOUBLE)
    END AS lwlrap,
    sum(weight * dcg) / sum(weight) AS dcg,
    sum(weight * ndcg) / sum(weight) AS ndcg
FROM rankmetrics_per_sample
GROUP BY grp, k;
