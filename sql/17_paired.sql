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
), directions AS (
    -- Each metric and its direction (1 where higher is better, a DOUBLE: Spark reads 1.0 as a
    -- DECIMAL): the rows of pairs are read once and crossed with these, one row per metric.
    SELECT 'coverage_error' AS metric, CAST(-1 AS DOUBLE) AS direction
    UNION ALL SELECT 'lrap', CAST(1 AS DOUBLE)
    UNION ALL SELECT 'ranking_loss', CAST(-1 AS DOUBLE)
    UNION ALL SELECT 'lwlrap', CAST(1 AS DOUBLE)
    UNION ALL SELECT 'dcg', CAST(1 AS DOUBLE)
    UNION ALL SELECT 'ndcg', CAST(1 AS DOUBLE)
), metrics AS (
    SELECT
        p.grp, p.baseline_grp, p.k, p.sample, m.metric, m.direction,
        CASE m.metric
            WHEN 'coverage_error' THEN p.coverage_error
            WHEN 'lrap' THEN p.lrap
            WHEN 'ranking_loss' THEN p.ranking_loss
            WHEN 'lwlrap' THEN p.lwlrap
            WHEN 'dcg' THEN p.dcg
            WHEN 'ndcg' THEN p.ndcg
        END AS d
    FROM pairs AS p
    CROSS JOIN directions AS m
)
SELECT grp, baseline_grp, k, metric, sample, d, direction * d AS better_by
FROM metrics
WHERE d IS NOT NULL;

-- rankmetrics_paired: one row per (grp, baseline_grp, k, metric):
--   n_shared   the samples both groups hold with a value of the metric
--   mean_diff  the mean difference (grp minus baseline_grp), unweighted
--   var_diff   the sample variance of the differences (n_shared - 1 in the denominator; NULL
--              for one sample), from the deviations from the mean, not from sums of squares
--   wins, ties, losses   the samples where grp is better, equal or worse by the metric's
--              direction; differences within 1e-12 are ties (float noise splits no tie)
-- The mean is a window over each group's differences, so that the view reads them once.
CREATE OR REPLACE VIEW rankmetrics_paired AS
WITH centred AS (
    SELECT
        grp, baseline_grp, k, metric, d, better_by,
        count(*) OVER (PARTITION BY grp, baseline_grp, k, metric) AS n_shared,
        sum(d) OVER (PARTITION BY grp, baseline_grp, k, metric)
            / CAST(count(*) OVER (PARTITION BY grp, baseline_grp, k, metric) AS DOUBLE)
            AS mean_diff
    FROM rankmetrics_paired_differences
)
SELECT
    grp, baseline_grp, k, metric, n_shared, mean_diff,
    sum((d - mean_diff) * (d - mean_diff)) / nullif(CAST(n_shared - 1 AS DOUBLE), 0)
        AS var_diff,
    count(CASE WHEN better_by > 1e-12 THEN 1 END) AS wins,
    count(CASE WHEN better_by BETWEEN -1e-12 AND 1e-12 THEN 1 END) AS ties,
    count(CASE WHEN better_by < -1e-12 THEN 1 END) AS losses
FROM centred
GROUP BY grp, baseline_grp, k, metric, n_shared, mean_diff;
