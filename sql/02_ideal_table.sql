-- rankmetrics_ideal_table: the ideal ranking of each sample, the one ndcg normalises by.
-- One row per (grp, sample, distinct positive truth value), best first:
--   n           labels with this truth value
--   truth_rank  #labels with truth >= this one (the block spans positions truth_rank - n + 1 ..)
-- The labels of truth 0 add nothing to the ideal dcg and rank below every positive (the checks
-- refuse a negative truth): they are left out, and a sample without a positive has no row.
CREATE OR REPLACE VIEW rankmetrics_ideal_table AS
SELECT
    grp, sample, truth, n,
    CAST(sum(n) OVER (
        PARTITION BY grp, sample ORDER BY truth DESC NULLS LAST
        ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
    ) AS BIGINT) AS truth_rank
FROM (
    SELECT grp, sample, truth, count(*) AS n
    FROM rankmetrics_input
    WHERE truth > 0
    GROUP BY grp, sample, truth
) AS blocks;
