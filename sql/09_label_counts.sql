-- rankmetrics_label_counts: one row per (grp, label): the label's true positives, false positives
-- and false negatives (pred > 0 against truth > 0), summed with the sample weights. Counts of
-- disjoint sets of samples add up. The scores of each label and of the pooled counts are
-- rankmetrics_set_scores' (10_set_scores.sql); the averages over labels are
-- rankmetrics_label_summary's (15_label_summary.sql), or the Python side's over the counts of
-- every bucket (polars_rankmetrics.metrics.label_averages).
CREATE OR REPLACE VIEW rankmetrics_label_counts AS
SELECT
    grp, label,
    sum(CASE WHEN truth > 0 AND pred > 0 THEN weight ELSE CAST(0 AS DOUBLE) END) AS tp,
    sum(CASE WHEN truth <= 0 AND pred > 0 THEN weight ELSE CAST(0 AS DOUBLE) END) AS fp,
    sum(CASE WHEN truth > 0 AND pred <= 0 THEN weight ELSE CAST(0 AS DOUBLE) END) AS fn
FROM rankmetrics_input
GROUP BY grp, label;
