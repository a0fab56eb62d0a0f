-- rankmetrics_set_counts: every set the threshold metrics score, as its true positives (tp: true
-- labels predicted), false positives (fp: false labels predicted) and false negatives (fn: true
-- labels missed), one row per
--   level 'sample'  (grp, sample): the sample's predicted label set (pred = 1) against its true
--                   one (truth = 1; both 0 or 1, as the checks require), with its weight and
--                   label count;
--   level 'label'   (grp, label): the label's cells, counts weighted by the sample weights
--                   (rankmetrics_label_counts);
--   level 'micro'   (grp): the label counts pooled.
-- The columns a level has no use for are NULL.
CREATE OR REPLACE VIEW rankmetrics_set_counts AS
SELECT
    grp, 'sample' AS level, sample, NULL AS label, weight, n_rows AS n_labels,
    true_predicted AS tp,
    n_predicted - true_predicted AS fp,
    n_positives - true_predicted AS fn
FROM rankmetrics_sample_counts
UNION ALL
SELECT grp, 'label' AS level, NULL AS sample, label, NULL AS weight, NULL AS n_labels, tp, fp, fn
FROM rankmetrics_label_counts
UNION ALL
SELECT
    grp, 'micro' AS level, NULL AS sample, NULL AS label, NULL AS weight, NULL AS n_labels,
    sum(tp) AS tp, sum(fp) AS fp, sum(fn) AS fn
FROM rankmetrics_label_counts
GROUP BY grp;

-- rankmetrics_set_scores: rankmetrics_set_counts with the set scores, the one place their
-- formulas are written:
--   precision  tp / (tp + fp)        recall  tp / (tp + fn)
--   f1         2 tp / (2 tp + fp + fn)
--   fbeta      (1 + b^2) tp / ((1 + b^2) tp + b^2 fn + fp)
--   jaccard    tp / (tp + fp + fn)
-- Parameters: rankmetrics_parameters(beta DOUBLE, zero_division DOUBLE), one row; zero_division
-- is the value of a 0/0, NULL for "undefined" (the sample or label drops out of a mean). As
-- scikit-learn: precision is 0/0 when nothing is predicted, recall when nothing is true, F-beta
-- and Jaccard when neither.
CREATE OR REPLACE VIEW rankmetrics_set_scores AS
SELECT
    c.grp, c.level, c.sample, c.label, c.weight, c.n_labels, c.tp, c.fp, c.fn,
    CASE WHEN c.tp + c.fp > 0 THEN CAST(c.tp AS DOUBLE) / (c.tp + c.fp) ELSE p.zero_division END
        AS precision,
    CASE WHEN c.tp + c.fn > 0 THEN CAST(c.tp AS DOUBLE) / (c.tp + c.fn) ELSE p.zero_division END
        AS recall,
    CASE WHEN 2 * c.tp + c.fp + c.fn > 0
        THEN CAST(2 * c.tp AS DOUBLE) / (2 * c.tp + c.fp + c.fn) ELSE p.zero_division END
        AS f1,
    CASE WHEN (1 + p.beta * p.beta) * c.tp + p.beta * p.beta * c.fn + c.fp > 0
        THEN (1 + p.beta * p.beta) * c.tp
            / ((1 + p.beta * p.beta) * c.tp + p.beta * p.beta * c.fn + c.fp)
        ELSE p.zero_division END
        AS fbeta,
    CASE WHEN c.tp + c.fp + c.fn > 0
        THEN CAST(c.tp AS DOUBLE) / (c.tp + c.fp + c.fn) ELSE p.zero_division END
        AS jaccard
FROM rankmetrics_set_counts AS c
CROSS JOIN rankmetrics_parameters AS p;

-- rankmetrics_set_per_sample: one row per (grp, sample): the threshold metrics of the sample's
-- predicted label set against its true one (rankmetrics_set_scores, level 'sample'). Subset
-- accuracy counts an empty prediction of an empty set as right (scikit-learn's
-- average="samples").
CREATE OR REPLACE VIEW rankmetrics_set_per_sample AS
SELECT
    grp, sample, weight, n_labels, tp + fn AS n_positives, tp, fp, fn,
    CAST(fp + fn AS DOUBLE) / n_labels AS hamming_loss,
    CASE WHEN fp + fn = 0 THEN CAST(1 AS DOUBLE) ELSE CAST(0 AS DOUBLE) END AS subset_accuracy,
    CASE WHEN fp + fn = 0 THEN CAST(0 AS DOUBLE) ELSE CAST(1 AS DOUBLE) END AS zero_one_loss,
    precision AS precision_samples,
    recall AS recall_samples,
    f1 AS f1_samples,
    fbeta AS fbeta_samples,
    jaccard AS jaccard_samples
FROM rankmetrics_set_scores
WHERE level = 'sample';

-- rankmetrics_set_summary: one row per grp: the weighted means of rankmetrics_set_per_sample; a
-- sample whose value is NULL (zero_division NULL) drops out of that metric's mean. The
-- ill_defined_* columns count the samples whose score is a 0/0 (given zero_division), where
-- the library warns: precision without predicted labels, recall without true ones, F-beta and
-- Jaccard without either; a sample of weight 0, whose weighted counts are all 0, in each.
CREATE OR REPLACE VIEW rankmetrics_set_summary AS
SELECT
    grp,
    sum(weight * hamming_loss) / nullif(sum(weight), 0) AS hamming_loss,
    sum(weight * subset_accuracy) / nullif(sum(weight), 0) AS subset_accuracy,
    sum(weight * zero_one_loss) / nullif(sum(weight), 0) AS zero_one_loss,
    sum(weight * precision_samples)
        / nullif(sum(CASE WHEN precision_samples IS NOT NULL THEN weight END), 0)
        AS precision_samples,
    sum(weight * recall_samples)
        / nullif(sum(CASE WHEN recall_samples IS NOT NULL THEN weight END), 0) AS recall_samples,
    sum(weight * f1_samples) / nullif(sum(CASE WHEN f1_samples IS NOT NULL THEN weight END), 0)
        AS f1_samples,
    sum(weight * fbeta_samples)
        / nullif(sum(CASE WHEN fbeta_samples IS NOT NULL THEN weight END), 0) AS fbeta_samples,
    sum(weight * jaccard_samples)
        / nullif(sum(CASE WHEN jaccard_samples IS NOT NULL THEN weight END), 0) AS jaccard_samples,
    count(CASE WHEN tp + fp = 0 OR weight = 0 THEN 1 END) AS ill_defined_precision,
    count(CASE WHEN tp + fn = 0 OR weight = 0 THEN 1 END) AS ill_defined_recall,
    count(CASE WHEN tp + fp + fn = 0 OR weight = 0 THEN 1 END) AS ill_defined_fbeta,
    count(CASE WHEN tp + fp + fn = 0 OR weight = 0 THEN 1 END) AS ill_defined_jaccard
FROM rankmetrics_set_per_sample
GROUP BY grp;
