-- The per-label tables of the merged states, shaped like the count tables of sql/ that the
-- views of the keys averaged over labels read (09_label_counts.sql, 11_score_counts.sql), so that
-- those views (10_set_scores.sql, 13_label_curves.sql, 14_label_scores.sql,
-- 15_label_summary.sql) finalize the states with the formulas evaluate's SQL has: a state's
-- labels and curves rows are those tables, summed. The exporter defines copies of those views
-- named rankmetrics_merged_<name> (rankmetrics_merged_set_scores, ...), each reading the
-- rankmetrics_merged_ copies of the relations it reads: the views of a state, in the same
-- warehouse, keep their own; and for the _micro averages' intervals, copies of
-- rankmetrics_set_counts and rankmetrics_set_scores named rankmetrics_replicate_<name>, which
-- read rankmetrics_replicate_sample_counts.

-- rankmetrics_merged_parameters: rankmetrics_parameters of the merged states, the metric
-- parameters the set scores read, from the states' rm_params (canonical JSON, polars_rankmetrics/inference/recorded.py: sorted keys, no spaces,
-- "beta" before "by" and "zero_division" last): beta, and zero_division as a number ("warn": 0,
-- "nan": NULL). The states of a roll-up hold one rm_params (rankmetrics_state_checks).
CREATE OR REPLACE VIEW rankmetrics_merged_parameters AS
SELECT
    CAST(split_part(split_part(params, '"beta":', 2), ',', 1) AS DOUBLE) AS beta,
    CASE zero_division
        WHEN '"warn"' THEN CAST(0 AS DOUBLE)
        WHEN '"nan"' THEN CAST(NULL AS DOUBLE)
        ELSE CAST(zero_division AS DOUBLE)
    END AS zero_division,
    CAST(NULL AS BIGINT) AS n_labels
FROM (
    SELECT params, split_part(split_part(params, '"zero_division":', 2), '}', 1) AS zero_division
    FROM (SELECT min(rm_params) AS params FROM rankmetrics_state_groups) AS states
) AS recorded;

-- rankmetrics_state_label_counts: per (grp, label): the merged labels rows, tp, fp and fn, as
-- rankmetrics_label_counts has them (rankmetrics_merged_label_counts reads them where the states
-- hold them).
CREATE OR REPLACE VIEW rankmetrics_state_label_counts AS
SELECT
    grp, rm_label AS label,
    sum(CASE WHEN rm_name = 'tp' THEN rm_value ELSE CAST(0 AS DOUBLE) END) AS tp,
    sum(CASE WHEN rm_name = 'fp' THEN rm_value ELSE CAST(0 AS DOUBLE) END) AS fp,
    sum(CASE WHEN rm_name = 'fn' THEN rm_value ELSE CAST(0 AS DOUBLE) END) AS fn
FROM rankmetrics_merged_state
WHERE rm_part = 'labels'
GROUP BY grp, rm_label;

-- rankmetrics_state_score_counts: per (grp, label, distinct score): the merged curves rows, pos
-- and neg, as rankmetrics_score_counts has them (rankmetrics_merged_score_counts reads them where
-- the states hold them).
CREATE OR REPLACE VIEW rankmetrics_state_score_counts AS
SELECT
    grp, rm_label AS label, rm_score AS score,
    sum(CASE WHEN rm_name = 'pos' THEN rm_value ELSE CAST(0 AS DOUBLE) END) AS pos,
    sum(CASE WHEN rm_name = 'neg' THEN rm_value ELSE CAST(0 AS DOUBLE) END) AS neg
FROM rankmetrics_merged_state
WHERE rm_part = 'curves'
GROUP BY grp, rm_label, rm_score;

-- rankmetrics_merged_sample_counts: the sets that rankmetrics_merged_set_scores scores at its
-- level 'sample', which finalizing has none of (no rows).
CREATE OR REPLACE VIEW rankmetrics_merged_sample_counts AS
SELECT
    grp, CAST(NULL AS BIGINT) AS sample, CAST(NULL AS DOUBLE) AS weight,
    CAST(NULL AS BIGINT) AS n_rows, CAST(NULL AS DOUBLE) AS n_positives,
    CAST(NULL AS DOUBLE) AS n_predicted, CAST(NULL AS DOUBLE) AS true_predicted
FROM rankmetrics_state_groups
WHERE 1 = 0;

-- rankmetrics_replicate_sample_counts: the sets that rankmetrics_replicate_set_scores (the
-- exporter's copy of rankmetrics_set_scores over these) scores at its level 'sample': one per
-- (grp, bootstrap replicate) of the _micro averages' interval, the replicate's pooled counts
-- (the weighted sums of the states' units rows of the per-sample counts true_positives,
-- false_positives and false_negatives, each unit counted as many times as the replicate draws
-- it) in the columns rankmetrics_set_counts reads (tp = true_predicted, fp = n_predicted -
-- true_predicted, fn = n_positives - true_predicted). A replicate that draws no weight has no
-- row (its _micro averages are left out of the interval, as the Python library leaves them
-- out). Apart from rankmetrics_merged_sample_counts, so that the averages over labels do not
-- read the replicates (an engine that inlines views, Spark, would plan them there too).
CREATE OR REPLACE VIEW rankmetrics_replicate_sample_counts AS
SELECT
    grp, replicate AS sample, weight, CAST(NULL AS BIGINT) AS n_rows,
    tp + fn AS n_positives, tp + fp AS n_predicted, tp AS true_predicted
FROM (
    SELECT
        m.grp, d.replicate,
        sum(CASE WHEN m.rm_name = 'true_positives/w' THEN d.draws * m.rm_value END) AS weight,
        sum(CASE WHEN m.rm_name = 'true_positives' THEN d.draws * m.rm_value END) AS tp,
        sum(CASE WHEN m.rm_name = 'false_positives' THEN d.draws * m.rm_value END) AS fp,
        sum(CASE WHEN m.rm_name = 'false_negatives' THEN d.draws * m.rm_value END) AS fn
    FROM rankmetrics_merged_state AS m
    JOIN rankmetrics_unit_draws AS d ON d.unit = m.rm_unit
    WHERE m.rm_part = 'units'
        AND m.rm_name IN ('true_positives/w', 'true_positives', 'false_positives', 'false_negatives')
    GROUP BY m.grp, d.replicate
) AS pooled
WHERE weight > 0;
