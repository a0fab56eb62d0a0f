-- rankmetrics_probability_per_sample: one row per (grp, sample): the mean over the sample's
-- labels of each cell's loss, its score p read as the probability that the label is true:
--   log_loss  -ln(p) for a true label (truth > 0), -ln(1 - p) for a false one; the probability
--             of the outcome clipped to [eps, 1 - eps] first, eps = 2.220446049250313e-16 (the
--             float64 machine epsilon, as scikit-learn clips), so a confident mistake costs
--             -ln(eps) = 36.04, never an infinity
--   brier     (truth - p)^2: the square of the distance from p to the truth
-- The scores lie in [0, 1]: the checks refuse others for these metrics (score_outside_unit).
CREATE OR REPLACE VIEW rankmetrics_probability_per_sample AS
SELECT
    grp, sample, max(weight) AS weight, count(*) AS n_labels,
    avg(-ln(
        CASE
            WHEN outcome < eps THEN eps
            WHEN outcome > CAST(1 AS DOUBLE) - eps THEN CAST(1 AS DOUBLE) - eps
            ELSE outcome
        END
    )) AS log_loss,
    avg(miss * miss) AS brier
FROM (
    SELECT
        grp, sample, weight, eps,
        CASE WHEN truth > 0 THEN score ELSE CAST(1 AS DOUBLE) - score END AS outcome,
        CASE WHEN truth > 0 THEN CAST(1 AS DOUBLE) - score ELSE score END AS miss
    FROM rankmetrics_input
    CROSS JOIN (SELECT CAST(2.220446049250313e-16 AS DOUBLE) AS eps) AS constants
) AS cells
GROUP BY grp, sample;
