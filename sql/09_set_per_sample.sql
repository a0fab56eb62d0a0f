-- rankmetrics_set_per_sample: one row per (grp, sample): the threshold metrics of the sample's
-- predicted label set (pred = 1) against its true one (truth = 1; both 0 or 1, as the checks
-- require).
--   tp  true labels predicted;  fp  false labels predicted;  fn  true labels missed
-- Parameters: rankmetrics_parameters(beta DOUBLE, zero_division DOUBLE), one row; zero_division is
-- the value of a 0/0 precision, recall, F or Jaccard, NULL for "drop the sample from the mean".
-- Degenerate cases follow scikit-learn (average="samples"): subset accuracy counts an empty
-- prediction of an empty set as right; precision is 0/0 when nothing is predicted, recall when
-- nothing is true, F-beta and Jaccard when neither.
CREATE OR REPLACE VIEW rankmetrics_set_per_sample AS
SELECT
    s.grp, s.sample, s.weight, s.n_labels, s.n_positives, s.tp, s.fp, s.fn,
    CAST(s.fp + s.fn AS DOUBLE) / s.n_labels AS hamming_loss,
    CASE WHEN s.fp + s.fn = 0 THEN CAST(1 AS DOUBLE) ELSE CAST(0 AS DOUBLE) END AS subset_accuracy,
    CASE WHEN s.fp + s.fn = 0 THEN CAST(0 AS DOUBLE) ELSE CAST(1 AS DOUBLE) END AS zero_one_loss,
    CASE WHEN s.tp + s.fp > 0 THEN CAST(s.tp AS DOUBLE) / (s.tp + s.fp) ELSE p.zero_division END
        AS precision_samples,
    CASE WHEN s.tp + s.fn > 0 THEN CAST(s.tp AS DOUBLE) / (s.tp + s.fn) ELSE p.zero_division END
        AS recall_samples,
    CASE WHEN s.tp + s.fp + s.fn > 0
        THEN CAST(2 * s.tp AS DOUBLE) / (2 * s.tp + s.fp + s.fn) ELSE p.zero_division END
        AS f1_samples,
    CASE WHEN s.tp + s.fp + s.fn > 0
        THEN (1 + p.beta * p.beta) * s.tp / ((1 + p.beta * p.beta) * s.tp + p.beta * p.beta * s.fn + s.fp)
        ELSE p.zero_division END
        AS fbeta_samples,
    CASE WHEN s.tp + s.fp + s.fn > 0
        THEN CAST(s.tp AS DOUBLE) / (s.tp + s.fp + s.fn) ELSE p.zero_division END
        AS jaccard_samples
FROM (
    SELECT
        grp, sample, weight, n_rows AS n_labels, n_positives,
        true_predicted AS tp,
        n_predicted - true_predicted AS fp,
        n_positives - true_predicted AS fn
    FROM rankmetrics_sample_counts
) AS s
CROSS JOIN rankmetrics_parameters AS p;

-- rankmetrics_set_summary: one row per grp: the weighted means of rankmetrics_set_per_sample; a
-- sample whose value is NULL (zero_division NULL) drops out of that metric's mean.
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
        / nullif(sum(CASE WHEN jaccard_samples IS NOT NULL THEN weight END), 0) AS jaccard_samples
FROM rankmetrics_set_per_sample
GROUP BY grp;
