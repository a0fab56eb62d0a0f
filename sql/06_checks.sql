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

-- rankmetrics_group_checks: one row per grp; problems visible per sample, and the sum of the
-- sample weights (which must be positive).
CREATE OR REPLACE VIEW rankmetrics_group_checks AS
WITH samples AS (
    SELECT
        grp, sample, count(*) AS n_rows, count(DISTINCT label) AS n_labels,
        count(DISTINCT weight) AS n_weights, max(weight) AS weight
    FROM rankmetrics_input
    GROUP BY grp, sample
)
SELECT
    g.grp,
    any_value(g.group_labels) AS group_labels,
    sum(s.weight) AS weight_sum,
    any_value(s.sample) FILTER (WHERE s.n_rows > s.n_labels) AS repeated_label_sample,
    any_value(struct_pack(s.sample, s.n_labels)) FILTER (WHERE s.n_labels <> g.group_labels)
        AS label_set_sample,
    any_value(s.sample) FILTER (WHERE s.n_weights > 1) AS varying_weight_sample
FROM samples AS s
JOIN rankmetrics_group_labels AS g ON s.grp IS NOT DISTINCT FROM g.grp
GROUP BY g.grp;
