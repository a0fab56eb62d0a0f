-- rankmetrics_label_scores: the per-label report, one row per (grp, label), with counts
-- weighted by the sample weights: support (positives), predicted, precision, recall, f1, fbeta,
-- jaccard (a 0/0 is rankmetrics_parameters.zero_division, NULL: undefined), average_precision,
-- roc_auc (NULL: one class only) and per-class lwlrap (NULL without positives).
CREATE OR REPLACE VIEW rankmetrics_label_scores AS
SELECT
    l.grp, l.label,
    l.tp + l.fn AS support,
    l.tp + l.fp AS predicted,
    CASE WHEN l.tp + l.fp > 0 THEN l.tp / (l.tp + l.fp) ELSE par.zero_division END AS precision,
    CASE WHEN l.tp + l.fn > 0 THEN l.tp / (l.tp + l.fn) ELSE par.zero_division END AS recall,
    CASE WHEN 2 * l.tp + l.fp + l.fn > 0 THEN 2 * l.tp / (2 * l.tp + l.fp + l.fn) ELSE par.zero_division END AS f1,
    CASE WHEN (1 + par.beta * par.beta) * l.tp + par.beta * par.beta * l.fn + l.fp > 0 THEN (1 + par.beta * par.beta) * l.tp / ((1 + par.beta * par.beta) * l.tp + par.beta * par.beta * l.fn + l.fp) ELSE par.zero_division END AS fbeta,
    CASE WHEN l.tp + l.fp + l.fn > 0 THEN l.tp / (l.tp + l.fp + l.fn) ELSE par.zero_division END AS jaccard,
    c.average_precision,
    c.roc_auc,
    p.precision_sum / nullif(l.tp + l.fn, 0) AS lwlrap
FROM rankmetrics_label_counts AS l
JOIN rankmetrics_label_curves AS c ON l.grp = c.grp AND l.label = c.label
JOIN rankmetrics_label_precisions AS p ON l.grp = p.grp AND l.label = p.label
CROSS JOIN rankmetrics_parameters AS par;
