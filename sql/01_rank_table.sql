-- rankmetrics_rank_table: the rank table every ranking metric is an aggregation of.
--
-- Input: a relation rankmetrics_input(grp, sample, label, score DOUBLE, truth DOUBLE, weight DOUBLE,
-- pred DOUBLE, predicted INT, propensity DOUBLE), one row per (sample, label); grp identifies an
-- independent evaluation (a model, a slice) and is never NULL; pred is the 0/1 decision the
-- threshold metrics read; propensity the label's propensity (NULL without one).
-- A top-k table (predictions joined with a truth table) has rows only for scored and true labels:
-- a true label without a prediction has a NULL score (predicted = 0), and ranks below every scored
-- label, tied with all the sample's other unscored labels: rank = n_labels of
-- rankmetrics_parameters, the size of the label space (NULL for a dense table).
--
-- Every input row, with where it stands in its sample's ranking (1-based, highest score first):
--   rank           #labels of the sample scoring >= score: rank "max" (a tie takes the largest rank)
--   positive_rank  #positive labels (truth > 0) scoring >= score
--   block_start    1 + #labels scoring > score: the first position of the row's tied block
-- The default window frame (RANGE ... CURRENT ROW) includes the tied peers, which is what makes
-- count(*) rank "max". The Polars engine's rank_table() adds the same columns.
CREATE OR REPLACE VIEW rankmetrics_rank_table AS
SELECT
    i.grp, i.sample, i.label, i.score, i.truth, i.weight, i.propensity,
    p.n_labels AS label_space,
    CASE
        WHEN i.score IS NULL THEN p.n_labels
        ELSE count(*) OVER (PARTITION BY i.grp, i.sample ORDER BY i.score DESC NULLS LAST)
    END AS rank,
    count(CASE WHEN i.truth > 0 THEN 1 END)
        OVER (PARTITION BY i.grp, i.sample ORDER BY i.score DESC NULLS LAST) AS positive_rank,
    rank() OVER (PARTITION BY i.grp, i.sample ORDER BY i.score DESC NULLS LAST) AS block_start
FROM rankmetrics_input AS i
CROSS JOIN rankmetrics_parameters AS p;
