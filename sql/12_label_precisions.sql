-- rankmetrics_label_precisions: one row per (grp, label): the sum over the label's positive cells
-- of weight x lrap precision (positive_rank / rank). Divided by the label's weighted positives
-- (rankmetrics_label_counts: tp + fn) it is the label's per-class lwlrap; sums of disjoint sets
-- of samples add up.
CREATE OR REPLACE VIEW rankmetrics_label_precisions AS
SELECT
    grp, label,
    sum(CASE WHEN truth > 0 THEN weight * CAST(positive_rank AS DOUBLE) / rank
        ELSE CAST(0 AS DOUBLE) END) AS precision_sum
FROM rankmetrics_rank_table
GROUP BY grp, label;
