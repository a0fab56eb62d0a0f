-- rankmetrics_ideal_table: the ideal ranking of each sample, the one ndcg normalises by.
-- One row per (grp, sample, distinct truth value), best first:
--   n           labels with this truth value
--   truth_rank  #labels with truth >= this one (the block spans positions truth_rank - n + 1 ..)
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
    GROUP BY grp, sample, truth
) AS blocks;
