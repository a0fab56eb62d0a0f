-- rankmetrics_rank_table: the rank table every ranking metric is an aggregation of.
--
-- Input: a relation rankmetrics_input(grp, sample, label, score DOUBLE, truth DOUBLE, weight DOUBLE,
-- pred DOUBLE), one row per (sample, label); grp identifies an independent evaluation (a model, a
-- slice) and is never NULL; pred is the 0/1 decision the threshold metrics read.
--
-- Every input row, with where it stands in its sample's ranking (1-based, highest score first):
--   rank           #labels of the sample scoring >= score: rank "max" (a tie takes the largest rank)
--   positive_rank  #positive labels (truth > 0) scoring >= score
--   block_start    1 + #labels scoring > score: the first position of the row's tied block
-- The default window frame (RANGE ... CURRENT ROW) includes the tied peers, which is what makes
-- count(*) rank "max". The Polars engine's rank_table() adds the same columns.
CREATE OR REPLACE VIEW rankmetrics_rank_table AS
SELECT
    grp, sample, label, score, truth, weight,
    count(*) OVER (PARTITION BY grp, sample ORDER BY score DESC NULLS LAST) AS rank,
    count(CASE WHEN truth > 0 THEN 1 END)
        OVER (PARTITION BY grp, sample ORDER BY score DESC NULLS LAST) AS positive_rank,
    rank() OVER (PARTITION BY grp, sample ORDER BY score DESC NULLS LAST) AS block_start
FROM rankmetrics_input;
