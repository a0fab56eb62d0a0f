-- The finalized keys, from the means of 03_finalize.sql (the keys averaged over samples) and
-- the summary of the per-label tables of 04_label_tables.sql (the keys averaged over labels).
-- The exporter defines, from the keys to finalize:
--   rankmetrics_label_means(grp, metric, value): per key averaged over labels, its column of
--     rankmetrics_merged_label_summary;
--   rankmetrics_micro_replicates(grp, metric, replicate, value): per _micro average of the
--     threshold scores and bootstrap replicate, its score of rankmetrics_replicate_set_scores'
--     level 'sample' (the replicate's pooled counts, rankmetrics_replicate_sample_counts).

-- rankmetrics_finalized: per (grp, metric): the value, its percentile interval (lo, hi) and the
-- ill-defined samples (NULL for the keys averaged over labels). The interval's bounds are
-- quantiles of the replicates that have a value (a replicate drawing no weight is left out),
-- interpolated as numpy's quantile by default (Hyndman and Fan's type 7): the q quantile of n
-- sorted values x_0 .. x_(n-1) sits at v = n q + (1 - q) - 1 (numpy's arithmetic for
-- q (n - 1)), between x_j and x_(j+1) for j = floor(v), at the fraction f = v - j, and is
-- numpy's lerp of the two: x_j + (x_(j+1) - x_j) f, or x_(j+1) - (x_(j+1) - x_j) (1 - f) from
-- f = 1/2 (x_(j+1) is x_j past the last). The interval is NULL where the value is, or no
-- replicate has a value; the keys averaged over labels other than the _micro averages of the
-- threshold scores have no replicates. Each relation is read once (both bounds from one pass
-- over the sorted replicates): an engine that inlines views (Spark) plans the replicates once.
CREATE OR REPLACE VIEW rankmetrics_finalized AS
WITH replicated AS (
    SELECT grp, metric, value FROM rankmetrics_replicate_means WHERE value IS NOT NULL
    UNION ALL
    SELECT grp, metric, value FROM rankmetrics_micro_replicates WHERE value IS NOT NULL
), placed AS (
    SELECT
        grp, metric, value, position,
        defined * p.lo_quantile + (1 - p.lo_quantile) - 1 AS v_lo,
        defined * p.hi_quantile + (1 - p.hi_quantile) - 1 AS v_hi
    FROM (
        SELECT
            grp, metric, value,
            row_number() OVER (PARTITION BY grp, metric ORDER BY value) - 1 AS position,
            count(*) OVER (PARTITION BY grp, metric) AS defined
        FROM replicated
    ) AS ranked
    CROSS JOIN rankmetrics_finalize_parameters AS p
), indexed AS (
    SELECT
        grp, metric, value, position, v_lo, v_hi,
        greatest(CAST(floor(v_lo) AS BIGINT), 0) AS j_lo,
        greatest(CAST(floor(v_hi) AS BIGINT), 0) AS j_hi
    FROM placed
), neighbours AS (
    SELECT
        grp, metric,
        max(v_lo - j_lo) AS f_lo,
        max(CASE WHEN position = j_lo THEN value END) AS lo_j,
        coalesce(
            max(CASE WHEN position = j_lo + 1 THEN value END),
            max(CASE WHEN position = j_lo THEN value END)
        ) AS lo_next,
        max(v_hi - j_hi) AS f_hi,
        max(CASE WHEN position = j_hi THEN value END) AS hi_j,
        coalesce(
            max(CASE WHEN position = j_hi + 1 THEN value END),
            max(CASE WHEN position = j_hi THEN value END)
        ) AS hi_next
    FROM indexed
    GROUP BY grp, metric
), bounds AS (
    SELECT
        grp, metric,
        CASE WHEN f_lo >= 0.5 THEN lo_next - (lo_next - lo_j) * (1 - f_lo)
            ELSE lo_j + (lo_next - lo_j) * f_lo
        END AS lo,
        CASE WHEN f_hi >= 0.5 THEN hi_next - (hi_next - hi_j) * (1 - f_hi)
            ELSE hi_j + (hi_next - hi_j) * f_hi
        END AS hi
    FROM neighbours
), finalized AS (
    SELECT grp, metric, value, ill_defined FROM rankmetrics_state_means
    UNION ALL
    SELECT grp, metric, value, CAST(NULL AS DOUBLE) AS ill_defined FROM rankmetrics_label_means
)
SELECT
    m.grp, m.metric, m.value,
    CASE WHEN m.value IS NOT NULL THEN b.lo END AS lo,
    CASE WHEN m.value IS NOT NULL THEN b.hi END AS hi,
    m.ill_defined
FROM finalized AS m
LEFT JOIN bounds AS b ON b.grp = m.grp AND b.metric = m.metric;
