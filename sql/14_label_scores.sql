-- rankmetrics_label_scores: the per-label report, one row per (grp, label), with counts
-- weighted by the sample weights: support (positives), predicted, precision, recall, f1, fbeta,
-- jaccard (rankmetrics_set_scores: a 0/0 is rankmetrics_parameters.zero_division),
-- average_precision, roc_auc (NULL: one class only) and per-class lwlrap (NULL without
-- positives).
CREATE OR REPLACE VIEW rankmetrics_label_scores AS
SELECT
    l.grp, l.label,
    l.tp + l.fn AS support,
    l.tp + l.fp AS predicted,
    l.precision, l.recall, l.f1, l.fbeta, l.jaccard,
    c.average_precision,
    c.roc_auc,
    p.precision_sum / nullif(l.tp + l.fn, 0) AS lwlrap
FROM rankmetrics_set_scores AS l
JOIN rankmetrics_label_curves AS c ON l.grp = c.grp AND l.label = c.label
JOIN rankmetrics_label_precisions AS p ON l.grp = p.grp AND l.label = p.label
WHERE l.level = 'label';
