-- rankmetrics_sums: one row per (grp, k): the weighted sums behind the means of rankmetrics_summary.
-- Sums over disjoint sets of samples add up: a table evaluated in parts sums its parts' rows per
-- (grp, k).
-- lwlrap weighs each sample by weight * n_positives (positive_weight); a sample without positives
-- adds nothing to it.
CREATE OR REPLACE VIEW rankmetrics_sums AS
SELECT
    grp, k,
    sum(weight) AS weight,
    sum(weight * n_positives) AS positive_weight,
    sum(weight * coverage_error) AS coverage_error,
    sum(weight * lrap) AS lrap,
    sum(weight * ranking_loss) AS ranking_loss,
    sum(weight * n_positives * lwlrap) AS lwlrap,
    sum(weight * dcg) AS dcg,
    sum(weight * ndcg) AS ndcg
FROM rankmetrics_per_sample
GROUP BY grp, k;

-- rankmetrics_summary: one row per (grp, k): the weighted means of rankmetrics_per_sample.
-- With no positive label at all (positive_weight 0) lwlrap is NULL (the Python engines say NaN;
-- NaN is not portable: SQLite stores it as NULL). Weights that sum to 0 give NULL everywhere.
CREATE OR REPLACE VIEW rankmetrics_summary AS
SELECT
    grp, k,
    coverage_error / nullif(weight, 0) AS coverage_error,
    lrap / nullif(weight, 0) AS lrap,
    ranking_loss / nullif(weight, 0) AS ranking_loss,
    lwlrap / nullif(positive_weight, 0) AS lwlrap,
    dcg / nullif(weight, 0) AS dcg,
    ndcg / nullif(weight, 0) AS ndcg
FROM rankmetrics_sums;
