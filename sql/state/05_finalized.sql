-- The finalized keys, from the means of 03_finalize.sql (the keys averaged over samples) and
-- the summary of the per-label tables of 04_label_tables.sql (the keys averaged over labels).
-- The exporter defines, from the keys to finalize:
--   rankmetrics_label_means(grp, metric, value): per key averaged over labels, its column of
--     rankmetrics_merged_label_summary;
--   rankmetrics_micro_replicates(grp, metric, replicate, value): per _micro average of the
--     threshold scores and bootstrap replicate, its score of rankmetrics_merged_set_scores' level
--     'sample' (the replicate's pooled counts, rankmetrics_merged_sample_counts).

-- rankmetrics_finalized: per (grp, metric): the value, its percentile interval (lo, hi) and the
-- ill-defined samples (NULL for the keys averaged over labels). The interval's bounds are
-- quantiles of the replicates that have a value (a replicate drawing no weight is left out),
-- interpolated as numpy's quantile by default (Hyndman and Fan's type 7): the q quantile of n
-- sorted values x_0 .. x_(n-1) sits at v = n q + (1 - q) - 1 (numpy's arithmetic for
-- q (n - 1)), between x_j and x_(j+1) for j = floor(v), at the fraction f = v - j, and is
-- numpy's lerp of the two: x_j + (x_(j+1) - x_j) f, or x_(j+1) - (x_(j+1) - x_j) (1 - f) from
-- f = 1/2 (x_(j+1) is x_j past the last). The interval is NULL where the value is, or no
-- replicate has a value; the keys averaged over labels other than the _micro averages of the
-- threshold scores have no replicates.
CREATE OR REPLACE VIEW rankmetrics_finalized AS
WITH replicated AS (
    SELECT grp, metric, value FROM rankmetrics_replicate_means WHERE value IS NOT NULL
    UNION ALL
    SELECT grp, metric, value FROM rankmetrics_micro_replicates WHERE value IS NOT NULL
), ranked AS (
    SELECT
        grp, metric, value,
        row_number() OVER (PARTITION BY grp, metric ORDER BY value) - 1 AS position,
        count(*) OVER (PARTITION BY grp, metric) AS defined
    FROM replicated
), placed AS (
    SELECT grp, metric, bound, v, greatest(CAST(floor(v) AS BIGINT), 0) AS j
    FROM (
        SELECT
            r.grp, r.metric, 'lo' AS bound,
            r.defined * p.lo_quantile + (1 - p.lo_quantile) - 1 AS v
        FROM (SELECT DISTINCT grp, metric, defined FROM ranked) AS r
        CROSS JOIN rankmetrics_finalize_parameters AS p
        UNION ALL
        SELECT
            r.grp, r.metric, 'hi' AS bound,
            r.defined * p.hi_quantile + (1 - p.hi_quantile) - 1 AS v
        FROM (SELECT DISTINCT grp, metric, defined FROM ranked) AS r
        CROSS JOIN rankmetrics_finalize_parameters AS p
    ) AS virtual_indices
), neighbours AS (
    SELECT
        q.grp, q.metric, q.bound, q.v - q.j AS f,
        max(CASE WHEN r.position = q.j THEN r.value END) AS x_j,
        coalesce(
            max(CASE WHEN r.position = q.j + 1 THEN r.value END),
            max(CASE WHEN r.position = q.j THEN r.value END)
        ) AS x_next
    FROM placed AS q
    JOIN ranked AS r ON r.grp = q.grp AND r.metric = q.metric AND r.position - q.j IN (0, 1)
    GROUP BY q.grp, q.metric, q.bound, q.v, q.j
), bounds AS (
    SELECT
        grp, metric, bound,
        CASE WHEN f >= 0.5 THEN x_next - (x_next - x_j) * (1 - f)
            ELSE x_j + (x_next - x_j) * f
        END AS value
    FROM neighbours
), finalized AS (
    SELECT grp, metric, value, ill_defined FROM rankmetrics_state_means
    UNION ALL
    SELECT grp, metric, value, CAST(NULL AS DOUBLE) AS ill_defined FROM rankmetrics_label_means
)
SELECT
    m.grp, m.metric, m.value,
    CASE WHEN m.value IS NOT NULL THEN lo.value END AS lo,
    CASE WHEN m.value IS NOT NULL THEN hi.value END AS hi,
    m.ill_defined
FROM finalized AS m
LEFT JOIN bounds AS lo ON lo.grp = m.grp AND lo.metric = m.metric AND lo.bound = 'lo'
LEFT JOIN bounds AS hi ON hi.grp = m.grp AND hi.metric = m.metric AND hi.bound = 'hi';
