-- rankmetrics_rank_table: the rank table every ranking metric is an aggregation of.
--
-- Input: a relation rankmetrics_input(grp, sample, label, score DOUBLE, truth DOUBLE, weight DOUBLE),
-- one row per (sample, label); grp identifies an independent evaluation (a model, a slice).
--
-- One row per (grp, sample, distinct score): the block of labels tied at that score, with
--   n              labels in the block
--   n_positive     positive labels (truth > 0) in the block
--   gain           summed truth of the block (dcg averages it over the positions the block spans)
--   rank           #labels of the sample scoring >= score: rank "max" (a tie takes the largest rank)
--   positive_rank  #positive labels scoring >= score
-- The running sums are rank "max" because the blocks already hold every tied label.
CREATE OR REPLACE VIEW rankmetrics_rank_table AS
WITH blocks AS (
    SELECT
        grp, sample, score,
        max(weight) AS weight,
        count(*) AS n,
        count(CASE WHEN truth > 0 THEN 1 END) AS n_positive,
        sum(truth) AS gain
    FROM rankmetrics_input
    GROUP BY grp, sample, score
)
SELECT
    grp, sample, score, weight, n, n_positive, gain,
    CAST(sum(n) OVER running AS BIGINT) AS rank,
    CAST(sum(n_positive) OVER running AS BIGINT) AS positive_rank
FROM blocks
WINDOW running AS (
    PARTITION BY grp, sample ORDER BY score DESC ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
);
