-- rankmetrics_discounts: cumulative dcg discounts, cumulative = sum over r = 1..position of
-- 1 / log2(r + 1), for positions 0 up to the rows of the largest sample (no rank is larger; a
-- top-k table's unscored block, ranked at n_labels, reads rankmetrics_cutoffs' unscored instead).
-- A block spanning positions a..b, cut at k, sums the discounts D(min(b, k)) - D(min(a - 1, k)).
-- The positions are numbered by row_number() over that sample's rows: no table function needed.
-- harmonic = sum over r = 1..position of 1 / r and log_factorial = ln(position!) serve the
-- retrieval metrics' expected values over tied blocks.
CREATE OR REPLACE VIEW rankmetrics_discounts AS
SELECT
    position,
    sum(
        CASE WHEN position > 0
            THEN ln(CAST(2 AS DOUBLE)) / ln(CAST(position + 1 AS DOUBLE))
            ELSE CAST(0 AS DOUBLE)
        END
    ) OVER (ORDER BY position ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS cumulative,
    sum(
        CASE WHEN position > 0 THEN 1 / CAST(position AS DOUBLE) ELSE CAST(0 AS DOUBLE) END
    ) OVER (ORDER BY position ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS harmonic,
    sum(
        CASE WHEN position > 0 THEN ln(CAST(position AS DOUBLE)) ELSE CAST(0 AS DOUBLE) END
    ) OVER (ORDER BY position ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS log_factorial
FROM (
    SELECT 0 AS position
    UNION ALL
    SELECT row_number() OVER (ORDER BY i.label) AS position
    FROM rankmetrics_input AS i
    JOIN (
        SELECT grp, sample
        FROM rankmetrics_input
        GROUP BY grp, sample
        ORDER BY count(*) DESC
        LIMIT 1
    ) AS largest ON i.grp = largest.grp AND i.sample = largest.sample
) AS positions;
