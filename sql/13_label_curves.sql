-- rankmetrics_label_curves: per (grp, label) the sums its average precision and ROC AUC are made
-- of, from rankmetrics_score_counts in descending score order (tp_cum, fp_cum: the weighted
-- positives and negatives scoring at least the row's score; a tied block is one threshold):
--   average_precision = sum(pos * tp_cum / (tp_cum + fp_cum)) / support, 0 without positives
--   roc_auc = sum(neg * (tp_cum - pos / 2)) / (support * negatives), a tie counting 1/2,
--             NULL (scikit-learn: NaN) for a label whose cells are all of one class
-- rankmetrics_micro_curves: the same per grp, every cell of the group in one ranking (micro).
CREATE OR REPLACE VIEW rankmetrics_label_curves AS
SELECT
    grp, label,
    sum(pos) AS support,
    sum(neg) AS negatives,
    CASE WHEN sum(pos) > 0 THEN sum(pos * CASE WHEN tp_cum + fp_cum > 0
        THEN tp_cum / (tp_cum + fp_cum) ELSE CAST(0 AS DOUBLE) END) / sum(pos)
        ELSE CAST(0 AS DOUBLE) END AS average_precision,
    CASE WHEN sum(pos) > 0 AND sum(neg) > 0
        THEN sum(neg * (tp_cum - pos / 2)) / (sum(pos) * sum(neg)) END AS roc_auc
FROM (
    SELECT
        grp, label, pos, neg,
        sum(pos) OVER (PARTITION BY grp, label ORDER BY score DESC NULLS LAST
            ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS tp_cum,
        sum(neg) OVER (PARTITION BY grp, label ORDER BY score DESC NULLS LAST
            ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS fp_cum
    FROM rankmetrics_score_counts
) AS curve
GROUP BY grp, label;

CREATE OR REPLACE VIEW rankmetrics_micro_curves AS
SELECT
    grp,
    CASE WHEN sum(pos) > 0 THEN sum(pos * CASE WHEN tp_cum + fp_cum > 0
        THEN tp_cum / (tp_cum + fp_cum) ELSE CAST(0 AS DOUBLE) END) / sum(pos)
        ELSE CAST(0 AS DOUBLE) END AS average_precision,
    CASE WHEN sum(pos) > 0 AND sum(neg) > 0
        THEN sum(neg * (tp_cum - pos / 2)) / (sum(pos) * sum(neg)) END AS roc_auc
FROM (
    SELECT
        grp, pos, neg,
        sum(pos) OVER (PARTITION BY grp ORDER BY score DESC NULLS LAST
            ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS tp_cum,
        sum(neg) OVER (PARTITION BY grp ORDER BY score DESC NULLS LAST
            ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS fp_cum
    FROM (
        SELECT grp, score, sum(pos) AS pos, sum(neg) AS neg
        FROM rankmetrics_score_counts
        GROUP BY grp, score
    ) AS pooled
) AS curve
GROUP BY grp;
