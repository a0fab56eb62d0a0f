-- The paired ingredients of a comparison between groups (models), from rankmetrics_per_sample:
-- the p-values come from Python (polars_rankmetrics.compare), which can read these rows.

-- rankmetrics_paired_differences: one row per ordered pair of groups (grp, baseline_grp), cut-off
-- k, metric and sample both groups hold: the difference d of the metric's values (grp minus
-- baseline_grp), and better_by, d signed so that a positive value favours grp (the metric's
-- direction: coverage_error and ranking_loss are better lower). A NULL value (lwlrap of a sample
-- without positives) gives no row.
CREATE OR REPLACE VIEW rankmetrics_paired_differences AS
WITH pairs AS (
    SELECT
        a.grp, b.grp AS baseline_grp, a.k, a.sample,
        a.coverage_error - b.coverage_error AS coverage_error,
        a.lrap - b.lrap AS lrap,
        a.ranking_loss - b.ranking_loss AS ranking_loss,
        a.lwlrap - b.lwlrap AS lwlrap,
        a.dcg - b.dcg AS dcg,
        a.ndcg - b.ndcg AS ndcg
    FROM rankmetrics_per_sample AS a
    JOIN rankmetrics_per_sample AS b
        ON a.sample = b.sample AND coalesce(a.k, -1) = coalesce(b.k, -1) AND a.grp <> b.grp
), metrics AS (
    SELECT grp, baseline_grp, k, sample, 'coverage_error' AS metric, coverage_error AS d,
        -coverage_error AS better_by FROM pairs
    UNION ALL
    SELECT grp, baseline_grp, k, sample, 'lrap' AS metric, lrap AS d, lrap AS better_by
    FROM pairs
    UNION ALL
    SELECT grp, baseline_grp, k, sample, 'ranking_loss' AS metric, ranking_loss AS d, -ranking_loss AS better_by
    FROM pairs
    UNION ALL
    SELECT grp, baseline_grp, k, sample, 'lwlrap' AS metric, lwlrap AS d, lwlrap AS better_by
    FROM pairs
    UNION ALL
    SELECT grp, baseline_grp, k, sample, 'dcg' AS metric, dcg AS d, dcg AS better_by
    FROM pairs
    UNION ALL
    SELECT grp, baseline_grp, k, sample, 'ndcg' AS metric, ndcg AS d, ndcg AS better_by
    FROM pairs
)
SELECT grp, baseline_grp, k, metric, sample, d, better_by
FROM metrics
WHERE d IS NOT NULL;

-- rankmetrics_paired: one row per (grp, baseline_grp, k, metric):
--   n_shared   the samples both groups hold with a value of the metric
--   mean_diff  the mean difference (grp minus baseline_grp), unweighted
--   var_diff   the sample variance of the differences (n_shared - 1 in the denominator; NULL
--              for one sample), from the deviations from the mean, not from sums of squares
--   wins, ties, losses   the samples where grp is better, equal or worse by the metric's
--              direction; differences within 1e-12 are ties (float noise splits no tie)
CREATE OR REPLACE VIEW rankmetrics_paired AS
WITH means AS (
    SELECT grp, baseline_grp, k, metric, count(*) AS n_shared,
        sum(d) / CAST(count(*) AS DOUBLE) AS mean_diff
    FROM rankmetrics_paired_differences
    GROUP BY grp, baseline_grp, k, metric
)
SELECT
    m.grp, m.baseline_grp, m.k, m.metric, m.n_shared, m.mean_diff,
    sum((p.d - m.mean_diff) * (p.d - m.mean_diff)) / nullif(CAST(m.n_shared - 1 AS DOUBLE), 0)
        AS var_diff,
    count(CASE WHEN p.better_by > 1e-12 THEN 1 END) AS wins,
    count(CASE WHEN p.better_by BETWEEN -1e-12 AND 1e-12 THEN 1 END) AS ties,
    count(CASE WHEN p.better_by < -1e-12 THEN 1 END) AS losses
FROM means AS m
JOIN rankmetrics_paired_differences AS p
    ON p.grp = m.grp AND p.baseline_grp = m.baseline_grp AND coalesce(p.k, -1) = coalesce(m.k, -1)
    AND p.metric = m.metric
GROUP BY m.grp, m.baseline_grp, m.k, m.metric, m.n_shared, m.mean_diff;
