-- Input checks, read before any metric. Each problem is a 0/1 flag per row, counted per table; an
-- engine that finds a count above 0 fetches one flagged row as the example for its message:
--   SELECT grp, sample, label FROM rankmetrics_row_flags WHERE <problem> = 1 LIMIT 1
-- "Not finite" is NOT (x BETWEEN -max AND max) for the largest double max: true for NaN and both
-- infinities on every engine, whether it orders NaN above everything or compares it false.
-- On a top-k table the rows of true labels without a prediction (predicted = 0) have no score
-- and no weight. The propensity flags matter only to the propensity-scored metrics, the score
-- outside [0, 1] only to the probability metrics (log loss, Brier), which read scores as
-- probabilities; an engine fetches the score too as that problem's example.

-- rankmetrics_row_flags: one row per input row; problems visible in single rows (and the truth
-- and pred, whose nulls rankmetrics_row_checks counts from the columns).
CREATE OR REPLACE VIEW rankmetrics_row_flags AS
SELECT
    grp, sample, label, score, truth, pred,
    CASE WHEN sample IS NULL THEN 1 ELSE 0 END AS null_sample,
    CASE WHEN label IS NULL THEN 1 ELSE 0 END AS null_label,
    CASE WHEN score IS NULL AND predicted = 1 THEN 1 ELSE 0 END AS null_score,
    CASE WHEN isnan(score) THEN 1 ELSE 0 END AS nan_score,
    CASE WHEN score < 0 OR score > 1 THEN 1 ELSE 0 END AS score_outside_unit,
    CASE WHEN truth IS NULL THEN 1 ELSE 0 END AS null_truth,
    CASE WHEN NOT (truth BETWEEN -1.7976931348623157e308 AND 1.7976931348623157e308)
        THEN 1 ELSE 0 END AS nan_truth,
    CASE WHEN truth <> 0 AND truth <> 1 THEN 1 ELSE 0 END AS non_binary_truth,
    CASE WHEN truth < 0 THEN 1 ELSE 0 END AS negative_truth,
    CASE WHEN weight IS NULL AND predicted = 1 THEN 1 ELSE 0 END AS null_weight,
    CASE WHEN weight < 0 OR NOT (weight BETWEEN -1.7976931348623157e308 AND 1.7976931348623157e308)
        THEN 1 ELSE 0 END AS bad_weight,
    CASE WHEN pred IS NULL THEN 1 ELSE 0 END AS null_pred,
    CASE WHEN pred <> 0 AND pred <> 1 THEN 1 ELSE 0 END AS non_binary_pred,
    CASE WHEN truth > 0 AND propensity IS NULL THEN 1 ELSE 0 END AS missing_propensity,
    CASE WHEN truth > 0 AND NOT (propensity > 0 AND propensity <= 1) THEN 1 ELSE 0 END
        AS bad_propensity
FROM rankmetrics_input;

-- rankmetrics_row_checks: one row; how many rows show each problem. A column's nulls are counted
-- as count(*) - count(column), which a file's statistics answer without a scan; an engine asks
-- for the columns it needs, leaving the others uncomputed.
CREATE OR REPLACE VIEW rankmetrics_row_checks AS
SELECT
    count(*) AS n_rows,
    count(*) - count(sample) AS null_sample,
    count(*) - count(label) AS null_label,
    sum(null_score) AS null_score,
    sum(nan_score) AS nan_score,
    sum(score_outside_unit) AS score_outside_unit,
    count(*) - count(truth) AS null_truth,
    sum(nan_truth) AS nan_truth,
    sum(non_binary_truth) AS non_binary_truth,
    sum(negative_truth) AS negative_truth,
    sum(null_weight) AS null_weight,
    sum(bad_weight) AS bad_weight,
    count(*) - count(pred) AS null_pred,
    sum(non_binary_pred) AS non_binary_pred,
    sum(missing_propensity) AS missing_propensity,
    sum(bad_propensity) AS bad_propensity
FROM rankmetrics_row_flags;

-- rankmetrics_group_labels: one row per grp; how many distinct labels the group has. Every sample
-- must carry all of them.
CREATE OR REPLACE VIEW rankmetrics_group_labels AS
SELECT grp, count(DISTINCT label) AS group_labels
FROM rankmetrics_input
GROUP BY grp;

-- rankmetrics_sample_facts: one row per (grp, sample): what the sample checks read, from the
-- sample counts (rankmetrics_sample_counts).
--   n_rows          the sample's rows
--   n_labels        its distinct labels (fewer than n_rows: a label repeats)
--   varying_weight  1 when its weight is not constant
--   weight          its weight
CREATE OR REPLACE VIEW rankmetrics_sample_facts AS
SELECT grp, sample, n_rows, distinct_labels AS n_labels, varying_weight, weight
FROM rankmetrics_sample_counts;

-- rankmetrics_sample_checks: one row per grp; problems visible per sample. A sample must carry
-- its group's whole label set (the group's count of the whole table, which for a bucket of the
-- table is known only to the caller: compare min_labels with it), once, and one weight.
--   weight                 the sum of the sample weights (must be positive over the whole table)
--   min_labels             the fewest distinct labels a sample has; short_sample one such sample
--   repeated_sample        a sample with a label on more than one row
--   varying_weight_sample  a sample whose weight is not constant
--   max_labels             the most distinct labels a sample has; long_sample one such sample
--   unweighted_sample      a sample without any weight (on a top-k table: without predictions)
-- Examples are the smallest such sample id. The fewest and most labels are joined per grp rather
-- than windowed over the samples, which would sort them.
CREATE OR REPLACE VIEW rankmetrics_sample_checks AS
WITH facts AS (
    SELECT * FROM rankmetrics_sample_facts
), extremes AS (
    SELECT grp, min(n_labels) AS min_labels, max(n_labels) AS max_labels
    FROM facts
    GROUP BY grp
)
SELECT
    f.grp,
    sum(f.weight) AS weight,
    min(e.min_labels) AS min_labels,
    min(CASE WHEN f.n_labels = e.min_labels THEN f.sample END) AS short_sample,
    min(CASE WHEN f.n_rows > f.n_labels THEN f.sample END) AS repeated_sample,
    min(CASE WHEN f.varying_weight = 1 THEN f.sample END) AS varying_weight_sample,
    max(e.max_labels) AS max_labels,
    min(CASE WHEN f.n_labels = e.max_labels THEN f.sample END) AS long_sample,
    min(CASE WHEN f.weight IS NULL THEN f.sample END) AS unweighted_sample
FROM facts AS f
JOIN extremes AS e ON f.grp = e.grp
GROUP BY f.grp;
