-- rankmetrics_label_counts: one row per (grp, label): the label's true positives, false positives
-- and false negatives (pred > 0 against truth > 0), summed with the sample weights. Counts of
-- disjoint sets of samples add up. The averages over labels (micro: pooled counts; macro: the
-- mean of the labels' scores; weighted: weighted by support tp + fn) are taken from these counts
-- by the Python side (polars_rankmetrics.classification.label_average).
CREATE OR REPLACE VIEW rankmetrics_label_counts AS
SELECT
    grp, label,
    sum(CASE WHEN truth > 0 AND pred > 0 THEN weight ELSE CAST(0 AS DOUBLE) END) AS tp,
    sum(CASE WHEN truth <= 0 AND pred > 0 THEN weight ELSE CAST(0 AS DOUBLE) END) AS fp,
    sum(CASE WHEN truth > 0 AND pred <= 0 THEN weight ELSE CAST(0 AS DOUBLE) END) AS fn
FROM rankmetrics_input
GROUP BY grp, label;
