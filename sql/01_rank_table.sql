-- rankmetrics_rank_table: the rank table every metric is an aggregation of.
--
-- Input: a relation rankmetrics_input(grp, sample, label, score DOUBLE, truth DOUBLE, weight DOUBLE),
-- one row per (sample, label); grp identifies an independent evaluation (a model, a slice).
--
-- One row per (grp, sample, score, truth) block of labels, with n labels in it, and:
--   rank           #labels of the sample scoring >= score: rank "max" (a tie takes the largest rank)
--   positive_rank  #positive labels scoring >= score
--   score_block    #labels sharing this score (the tie block dcg averages over)
--   truth_rank     #labels with truth >= truth: the position range of the ideal ordering
--   truth_block    #labels sharing this truth value
-- The default window frame (RANGE ... CURRENT ROW) includes the tied peers, which is what makes
-- the running counts rank "max".
CREATE OR REPLACE VIEW rankmetrics_rank_table AS
WITH blocks AS (
    SELECT grp, sample, score, truth, max(weight) AS weight, count(*) AS n
    FROM rankmetrics_input
    GROUP BY grp, sample, score, truth
)
SELECT
    grp, sample, score, truth, weight, n,
    sum(n) OVER (PARTITION BY grp, sample ORDER BY score DESC) AS rank,
    sum(CASE WHEN truth > 0 THEN n ELSE 0 END)
        OVER (PARTITION BY grp, sample ORDER BY score DESC) AS positive_rank,
    sum(n) OVER (PARTITION BY grp, sample, score) AS score_block,
    sum(n) OVER (PARTITION BY grp, sample ORDER BY truth DESC) AS truth_rank,
    sum(n) OVER (PARTITION BY grp, sample, truth) AS truth_block
FROM blocks;
