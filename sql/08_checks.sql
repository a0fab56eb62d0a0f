-- Input checks, read before any metric: each column holds an example (grp, sample, label) of the
-- problem, or NULL when there is none.

-- rankmetrics_row_checks: one row; problems visible in single rows.
CREATE OR REPLACE VIEW rankmetrics_row_checks AS
SELECT
    count(*) AS n_rows,
    any_value(struct_pack(grp, sample, label)) FILTER (WHERE sample IS NULL) AS null_sample,
    any_value(struct_pack(grp, sample, label)) FILTER (WHERE label IS NULL) AS null_label,
    any_value(struct_pack(grp, sample, label)) FILTER (WHERE score IS NULL) AS null_score,
    any_value(struct_pack(grp, sample, label)) FILTER (WHERE isnan(score)) AS nan_score,
    any_value(struct_pack(grp, sample, label)) FILTER (WHERE truth IS NULL) AS null_truth,
    any_value(struct_pack(grp, sample, label)) FILTER (WHERE NOT isfinite(truth)) AS nan_truth,
    any_value(struct_pack(grp, sample, label)) FILTER (WHERE truth NOT IN (0, 1)) AS non_binary_truth,
    any_value(struct_pack(grp, sample, label)) FILTER (WHERE truth < 0) AS negative_truth,
    any_value(struct_pack(grp, sample, label)) FILTER (WHERE weight IS NULL) AS null_weight,
    any_value(struct_pack(grp, sample, label)) FILTER (WHERE weight < 0 OR NOT isfinite(weight))
        AS bad_weight
FROM rankmetrics_input;

-- rankmetrics_group_labels: one row per grp; how many distinct labels the group has. Every sample
-- must carry all of them.
CREATE OR REPLACE VIEW rankmetrics_group_labels AS
SELECT grp, count(DISTINCT label) AS group_labels
FROM rankmetrics_input
GROUP BY grp;

-- rankmetrics_sample_checks: one row per grp; problems visible per sample. A sample must carry
-- its group's whole label set (the group's count of the whole table, which for a bucket of the
-- table is known only to the caller: compare min_labels with it), once, and one weight.
--   weight                 the sum of the sample weights (must be positive over the whole table)
--   min_labels             the fewest distinct labels a sample has; short_sample one such sample
--   repeated_sample        a sample with a label on more than one row
--   varying_weight_sample  a sample whose weight is not constant
-- Examples are the smallest such sample id.
CREATE OR REPLACE VIEW rankmetrics_sample_checks AS
WITH samples AS (
    SELECT
        grp, sample, count(*) AS n_rows, count(DISTINCT label) AS n_labels,
        count(DISTINCT weight) AS n_weights, max(weight) AS weight
    FROM rankmetrics_input
    GROUP BY grp, sample
),
fewest AS (
    SELECT *, min(n_labels) OVER (PARTITION BY grp) AS min_labels
    FROM samples
)
SELECT
    grp,
    sum(weight) AS weight,
    min(min_labels) AS min_labels,
    min(CASE WHEN n_labels = min_labels THEN sample END) AS short_sample,
    min(CASE WHEN n_rows > n_labels THEN sample END) AS repeated_sample,
    min(CASE WHEN n_weights > 1 THEN sample END) AS varying_weight_sample
FROM fewest
GROUP BY grp;
