-- rankmetrics_score_counts: one row per (grp, label, distinct score): the weighted counts of the
-- label's positive (truth > 0) and negative cells at that score. Counts of disjoint sets of
-- samples add up. A label's precision-recall and ROC curves are cumulative sums of these in
-- descending score order (rankmetrics_label_scores), exact, in memory bounded by the number of
-- distinct (label, score) pairs. score + 0 turns -0.0 into 0.0, which ties with it.
CREATE OR REPLACE VIEW rankmetrics_score_counts AS
SELECT
    grp, label, score,
    sum(CASE WHEN truth > 0 THEN weight ELSE CAST(0 AS DOUBLE) END) AS pos,
    sum(CASE WHEN truth > 0 THEN CAST(0 AS DOUBLE) ELSE weight END) AS neg
FROM (
    SELECT grp, label, score + CAST(0 AS DOUBLE) AS score, truth, weight FROM rankmetrics_input
) AS cells
GROUP BY grp, label, score;
