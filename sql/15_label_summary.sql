-- rankmetrics_label_summary: one row per grp: the metrics averaged over labels, as scikit-learn's
-- average= (sklearn.metrics.precision_score, average_precision_score, roc_auc_score, ...):
--   *_micro     the score of the counts pooled over labels (curves: one ranking of every cell)
--   *_macro     the mean of the labels' scores; a NULL (0/0 with zero_division NULL) drops out,
--               a NULL roc_auc (a one-class label) makes roc_auc_macro NULL (scikit-learn: NaN)
--   *_weighted  the mean weighted by the labels' support; where the labels left have none, the
--               plain mean (set scores) or 0 (curves); a label without support weighs 0
-- NULL where nothing is left to average. The ill_defined_* columns count the labels where the
-- library warns: a 0/0 precision (no predicted cells), recall (no true cells), F-beta and Jaccard
-- (neither), given zero_division; an average precision without positives (0) and a ROC AUC of
-- one class only (NULL). A *_micro average is ill-defined where the count equals the group's
-- labels.
CREATE OR REPLACE VIEW rankmetrics_label_summary AS
SELECT
    s.grp,
    min(t.precision) AS precision_micro,
    min(t.recall) AS recall_micro,
    min(t.f1) AS f1_micro,
    min(t.fbeta) AS fbeta_micro,
    min(t.jaccard) AS jaccard_micro,
    avg(s.precision) AS precision_macro,
    avg(s.recall) AS recall_macro,
    avg(s.f1) AS f1_macro,
    avg(s.fbeta) AS fbeta_macro,
    avg(s.jaccard) AS jaccard_macro,
    CASE WHEN sum(CASE WHEN s.precision IS NOT NULL THEN s.support END) > 0
        THEN sum(s.precision * s.support) / sum(CASE WHEN s.precision IS NOT NULL THEN s.support END)
        ELSE avg(s.precision) END AS precision_weighted,
    CASE WHEN sum(CASE WHEN s.recall IS NOT NULL THEN s.support END) > 0
        THEN sum(s.recall * s.support) / sum(CASE WHEN s.recall IS NOT NULL THEN s.support END)
        ELSE avg(s.recall) END AS recall_weighted,
    CASE WHEN sum(CASE WHEN s.f1 IS NOT NULL THEN s.support END) > 0
        THEN sum(s.f1 * s.support) / sum(CASE WHEN s.f1 IS NOT NULL THEN s.support END)
        ELSE avg(s.f1) END AS f1_weighted,
    CASE WHEN sum(CASE WHEN s.fbeta IS NOT NULL THEN s.support END) > 0
        THEN sum(s.fbeta * s.support) / sum(CASE WHEN s.fbeta IS NOT NULL THEN s.support END)
        ELSE avg(s.fbeta) END AS fbeta_weighted,
    CASE WHEN sum(CASE WHEN s.jaccard IS NOT NULL THEN s.support END) > 0
        THEN sum(s.jaccard * s.support) / sum(CASE WHEN s.jaccard IS NOT NULL THEN s.support END)
        ELSE avg(s.jaccard) END AS jaccard_weighted,
    min(m.average_precision) AS average_precision_micro,
    min(m.roc_auc) AS roc_auc_micro,
    avg(s.average_precision) AS average_precision_macro,
    CASE WHEN count(s.roc_auc) = count(*) THEN avg(s.roc_auc) END AS roc_auc_macro,
    CASE WHEN sum(s.support) > 0
        THEN sum(s.average_precision * s.support) / sum(s.support)
        ELSE CAST(0 AS DOUBLE) END AS average_precision_weighted,
    CASE WHEN count(CASE WHEN s.support > 0 AND s.roc_auc IS NULL THEN 1 END) > 0 THEN NULL
        WHEN sum(s.support) > 0
        THEN sum(CASE WHEN s.support > 0 THEN s.roc_auc * s.support END) / sum(s.support)
        ELSE CAST(0 AS DOUBLE) END AS roc_auc_weighted,
    count(CASE WHEN s.predicted = 0 THEN 1 END) AS ill_defined_precision,
    count(CASE WHEN s.support = 0 THEN 1 END) AS ill_defined_recall,
    count(CASE WHEN s.support + s.predicted = 0 THEN 1 END) AS ill_defined_fbeta,
    count(CASE WHEN s.support + s.predicted = 0 THEN 1 END) AS ill_defined_jaccard,
    count(CASE WHEN s.support = 0 THEN 1 END) AS ill_defined_average_precision,
    count(CASE WHEN s.roc_auc IS NULL THEN 1 END) AS ill_defined_roc_auc
FROM rankmetrics_label_scores AS s
JOIN rankmetrics_set_scores AS t ON s.grp = t.grp AND t.level = 'micro'
JOIN rankmetrics_micro_curves AS m ON s.grp = m.grp
GROUP BY s.grp;
