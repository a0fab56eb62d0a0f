-- rankmetrics_probability_sums: per (grp, label) the sums the probability losses of the label
-- averages are made of, from rankmetrics_score_counts (each score read as the probability that
-- the label is true): support (the weighted positives), cells (the weighted cells), log_loss_sum
-- (their weighted cross-entropy, the probability of the outcome clipped to [eps, 1 - eps],
-- eps = 2.220446049250313e-16 as in rankmetrics_probability_per_sample) and brier_sum (their
-- weighted (truth - p)^2).
CREATE OR REPLACE VIEW rankmetrics_probability_sums AS
SELECT
    grp, label, sum(pos) AS support, sum(pos + neg) AS cells,
    sum(pos * -ln(CASE WHEN p < eps THEN eps WHEN p > one - eps THEN one - eps ELSE p END)
        + neg * -ln(CASE WHEN q < eps THEN eps WHEN q > one - eps THEN one - eps ELSE q END)
    ) AS log_loss_sum,
    sum(pos * q * q + neg * p * p) AS brier_sum
FROM (
    SELECT grp, label, pos, neg, eps, one, score AS p, one - score AS q
    FROM rankmetrics_score_counts
    CROSS JOIN (
        SELECT CAST(2.220446049250313e-16 AS DOUBLE) AS eps, CAST(1 AS DOUBLE) AS one
    ) AS constants
) AS cells
GROUP BY grp, label;

-- rankmetrics_probability_bins: per (grp, label, bin) the non-empty bins of ece_* and mce_* at
-- their default 15 equal-width bins of [0, 1], from rankmetrics_score_counts: weight (the
-- weighted cells), score_sum (their weighted scores), positives (their weighted positives). A
-- cell's bin is the number of inner edges i * (1 / 15), i = 1..14 (numpy.linspace's values),
-- strictly below its score, as scikit-learn's calibration_curve: with f = floor(15 * score),
-- the edges 1..f-1 lie below it, f and f + 1 are compared, and those above f + 1 do not.
CREATE OR REPLACE VIEW rankmetrics_probability_bins AS
SELECT
    grp, label, bin,
    sum(pos + neg) AS weight, sum(score * (pos + neg)) AS score_sum, sum(pos) AS positives
FROM (
    SELECT
        grp, label, score, pos, neg,
        CASE WHEN f - 1 < 0 THEN 0 WHEN f - 1 > 14 THEN 14 ELSE f - 1 END
        + CASE WHEN f >= 1 AND f <= 14 AND f * step < score THEN 1 ELSE 0 END
        + CASE WHEN f >= 0 AND f <= 13 AND (f + 1) * step < score THEN 1 ELSE 0 END AS bin
    FROM (
        SELECT
            grp, label, score, pos, neg, step,
            CAST(floor(score * CAST(15 AS DOUBLE)) AS DOUBLE) AS f
        FROM rankmetrics_score_counts
        CROSS JOIN (SELECT CAST(1 AS DOUBLE) / CAST(15 AS DOUBLE) AS step) AS constants
    ) AS floored
) AS binned
GROUP BY grp, label, bin
HAVING sum(pos + neg) > 0;

-- rankmetrics_quantile_cells: the cells of the equal-mass bins (ece_quantile_*, mce_quantile_*
-- at 15 bins) per unit, a unit being a (grp, label) or, label NULL, every cell of a grp pooled:
-- per distinct score its weight (the weighted cells, > 0) and positives, start (the weight of
-- the unit's lower scores: the score holds the order statistics start <= t < start + weight, a
-- weight counting as repetitions) and total (the unit's weight).
CREATE OR REPLACE VIEW rankmetrics_quantile_cells AS
SELECT
    grp, label, score, weight, positives,
    sum(weight) OVER (PARTITION BY grp, label ORDER BY score
        ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) - weight AS start,
    sum(weight) OVER (PARTITION BY grp, label) AS total
FROM (
    SELECT grp, label, score, sum(pos + neg) AS weight, sum(pos) AS positives
    FROM rankmetrics_score_counts
    GROUP BY grp, label, score
    UNION ALL
    SELECT grp, NULL AS label, score, sum(pos + neg) AS weight, sum(pos) AS positives
    FROM rankmetrics_score_counts
    GROUP BY grp, score
) AS units
WHERE weight > 0;

-- rankmetrics_quantile_edges: per unit the inner edges 1..14 of 15 equal-mass bins, as
-- numpy.percentile(p, linspace(0, 1, 16) * 100) (calibration_curve(strategy="quantile")): the
-- order statistic h = (total - 1) * q, q = e * (1 / 15) * 100 / 100 as numpy computes it,
-- interpolated between those at floor(h) and floor(h) + 1 (both the first before the first,
-- both the last at or past the last), from b backwards where the fraction is at least 1/2, as
-- numpy's lerp. The order statistic t is the highest score whose start is at most t.
CREATE OR REPLACE VIEW rankmetrics_quantile_edges AS
SELECT
    grp, label, edge,
    CASE WHEN gamma >= 0.5 THEN b - (b - a) * (CAST(1 AS DOUBLE) - gamma)
        ELSE a + (b - a) * gamma END AS value
FROM (
    SELECT
        u.grp, u.label, u.edge, u.gamma,
        max(CASE WHEN c.start <= u.lower_t THEN c.score END) AS a,
        max(CASE WHEN c.start <= u.upper_t THEN c.score END) AS b
    FROM (
        SELECT
            grp, label, edge, h - floor(h) AS gamma,
            CASE WHEN h < 0 THEN CAST(0 AS DOUBLE) WHEN h >= total - 1 THEN total
                ELSE floor(h) END AS lower_t,
            CASE WHEN h < 0 THEN CAST(0 AS DOUBLE) WHEN h >= total - 1 THEN total
                ELSE floor(h) + 1 END AS upper_t
        FROM (
            SELECT
                t.grp, t.label, e.edge,
                (t.total - 1) * ((CAST(e.edge AS DOUBLE) * (CAST(1 AS DOUBLE) / 15)) * 100 / 100)
                    AS h,
                t.total
            FROM (SELECT DISTINCT grp, label, total FROM rankmetrics_quantile_cells) AS t
            CROSS JOIN (
                SELECT d1.d + 2 * d2.d + 4 * d3.d + 8 * d4.d AS edge
                FROM (SELECT 0 AS d UNION ALL SELECT 1) AS d1
                CROSS JOIN (SELECT 0 AS d UNION ALL SELECT 1) AS d2
                CROSS JOIN (SELECT 0 AS d UNION ALL SELECT 1) AS d3
                CROSS JOIN (SELECT 0 AS d UNION ALL SELECT 1) AS d4
            ) AS e
            WHERE e.edge BETWEEN 1 AND 14
        ) AS positions
    ) AS u
    JOIN rankmetrics_quantile_cells AS c
        ON u.grp = c.grp AND (u.label = c.label OR (u.label IS NULL AND c.label IS NULL))
    GROUP BY u.grp, u.label, u.edge, u.gamma
) AS neighbours;

-- rankmetrics_quantile_errors: per unit the expected and maximum calibration errors over its
-- equal-mass bins, a cell's bin the number of edges strictly below its score (as
-- numpy.searchsorted); as rankmetrics_label_probabilities' ece and mce otherwise.
CREATE OR REPLACE VIEW rankmetrics_quantile_errors AS
SELECT
    grp, label,
    sum(abs(score_sum - positives)) / sum(weight) AS ece_quantile,
    max(abs(score_sum - positives) / weight) AS mce_quantile
FROM (
    SELECT grp, label, bin, sum(weight) AS weight, sum(score * weight) AS score_sum,
        sum(positives) AS positives
    FROM (
        SELECT
            c.grp, c.label, c.score, c.weight, c.positives,
            sum(CASE WHEN e.value < c.score THEN 1 ELSE 0 END) AS bin
        FROM rankmetrics_quantile_cells AS c
        JOIN rankmetrics_quantile_edges AS e
            ON c.grp = e.grp AND (c.label = e.label OR (c.label IS NULL AND e.label IS NULL))
        GROUP BY c.grp, c.label, c.score, c.weight, c.positives
    ) AS binned
    GROUP BY grp, label, bin
) AS bins
GROUP BY grp, label;

-- rankmetrics_label_probabilities: per (grp, label) what the probability keys average over
-- labels, as scikit-learn's binary calls on the label's column:
--   support   the weighted positives
--   log_loss  log_loss(y[:, j], p[:, j], labels=[0, 1]): the weighted mean cross-entropy
--   brier     brier_score_loss(y[:, j], p[:, j]): the weighted mean squared error
--   ece       the sum over the bins of |score_sum - positives| over the weight of every bin
--             (each bin's share of the weight times its gap |mean score - share of positives|)
--   mce       the largest gap |score_sum - positives| / weight over the bins
--   ece_quantile, mce_quantile  the same over the equal-mass bins (rankmetrics_quantile_errors)
-- NULL where the label's cells weigh nothing. rankmetrics_micro_probabilities: the same per
-- grp, every cell of the group pooled (the _micro keys).
CREATE OR REPLACE VIEW rankmetrics_label_probabilities AS
SELECT
    s.grp, s.label, s.support,
    CASE WHEN s.cells > 0 THEN s.log_loss_sum / s.cells END AS log_loss,
    CASE WHEN s.cells > 0 THEN s.brier_sum / s.cells END AS brier,
    b.ece, b.mce, q.ece_quantile, q.mce_quantile
FROM rankmetrics_probability_sums AS s
LEFT JOIN rankmetrics_quantile_errors AS q ON s.grp = q.grp AND s.label = q.label
LEFT JOIN (
    SELECT
        grp, label,
        sum(abs(score_sum - positives)) / sum(weight) AS ece,
        max(abs(score_sum - positives) / weight) AS mce
    FROM rankmetrics_probability_bins
    GROUP BY grp, label
) AS b ON s.grp = b.grp AND s.label = b.label;

CREATE OR REPLACE VIEW rankmetrics_micro_probabilities AS
SELECT
    s.grp,
    CASE WHEN s.cells > 0 THEN s.log_loss_sum / s.cells END AS log_loss,
    CASE WHEN s.cells > 0 THEN s.brier_sum / s.cells END AS brier,
    b.ece, b.mce, q.ece_quantile, q.mce_quantile
FROM (
    SELECT grp, sum(cells) AS cells, sum(log_loss_sum) AS log_loss_sum, sum(brier_sum) AS brier_sum
    FROM rankmetrics_probability_sums
    GROUP BY grp
) AS s
LEFT JOIN (
    SELECT
        grp,
        sum(abs(score_sum - positives)) / sum(weight) AS ece,
        max(abs(score_sum - positives) / weight) AS mce
    FROM (
        SELECT
            grp, bin, sum(weight) AS weight, sum(score_sum) AS score_sum,
            sum(positives) AS positives
        FROM rankmetrics_probability_bins
        GROUP BY grp, bin
    ) AS pooled
    GROUP BY grp
) AS b ON s.grp = b.grp
LEFT JOIN (
    SELECT grp, ece_quantile, mce_quantile FROM rankmetrics_quantile_errors WHERE label IS NULL
) AS q ON s.grp = q.grp;

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
-- labels. The probability keys (log_loss_*, brier_*, and ece_* and mce_* at 15 equal-width bins,
-- ece_quantile_* and mce_quantile_* at 15 equal-mass bins)
-- from rankmetrics_label_probabilities and rankmetrics_micro_probabilities, averaged as the set
-- scores (where no label has support, the plain mean); NULL for a group of one label whose cells
-- weigh nothing.
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
    count(CASE WHEN s.roc_auc IS NULL THEN 1 END) AS ill_defined_roc_auc,
    min(pm.log_loss) AS log_loss_micro,
    avg(pp.log_loss) AS log_loss_macro,
    CASE WHEN sum(CASE WHEN pp.log_loss IS NOT NULL AND pp.support > 0 THEN pp.support END) > 0
        THEN sum(CASE WHEN pp.log_loss IS NOT NULL AND pp.support > 0 THEN pp.log_loss * pp.support END)
            / sum(CASE WHEN pp.log_loss IS NOT NULL AND pp.support > 0 THEN pp.support END)
        ELSE avg(pp.log_loss) END AS log_loss_weighted,
    min(pm.brier) AS brier_micro,
    avg(pp.brier) AS brier_macro,
    CASE WHEN sum(CASE WHEN pp.brier IS NOT NULL AND pp.support > 0 THEN pp.support END) > 0
        THEN sum(CASE WHEN pp.brier IS NOT NULL AND pp.support > 0 THEN pp.brier * pp.support END)
            / sum(CASE WHEN pp.brier IS NOT NULL AND pp.support > 0 THEN pp.support END)
        ELSE avg(pp.brier) END AS brier_weighted,
    min(pm.ece) AS ece_micro,
    avg(pp.ece) AS ece_macro,
    CASE WHEN sum(CASE WHEN pp.ece IS NOT NULL AND pp.support > 0 THEN pp.support END) > 0
        THEN sum(CASE WHEN pp.ece IS NOT NULL AND pp.support > 0 THEN pp.ece * pp.support END)
            / sum(CASE WHEN pp.ece IS NOT NULL AND pp.support > 0 THEN pp.support END)
        ELSE avg(pp.ece) END AS ece_weighted,
    min(pm.mce) AS mce_micro,
    avg(pp.mce) AS mce_macro,
    CASE WHEN sum(CASE WHEN pp.mce IS NOT NULL AND pp.support > 0 THEN pp.support END) > 0
        THEN sum(CASE WHEN pp.mce IS NOT NULL AND pp.support > 0 THEN pp.mce * pp.support END)
            / sum(CASE WHEN pp.mce IS NOT NULL AND pp.support > 0 THEN pp.support END)
        ELSE avg(pp.mce) END AS mce_weighted,
    min(pm.ece_quantile) AS ece_quantile_micro,
    avg(pp.ece_quantile) AS ece_quantile_macro,
    CASE WHEN sum(CASE WHEN pp.ece_quantile IS NOT NULL AND pp.support > 0 THEN pp.support END) > 0
        THEN sum(CASE WHEN pp.ece_quantile IS NOT NULL AND pp.support > 0 THEN pp.ece_quantile * pp.support END)
            / sum(CASE WHEN pp.ece_quantile IS NOT NULL AND pp.support > 0 THEN pp.support END)
        ELSE avg(pp.ece_quantile) END AS ece_quantile_weighted,
    min(pm.mce_quantile) AS mce_quantile_micro,
    avg(pp.mce_quantile) AS mce_quantile_macro,
    CASE WHEN sum(CASE WHEN pp.mce_quantile IS NOT NULL AND pp.support > 0 THEN pp.support END) > 0
        THEN sum(CASE WHEN pp.mce_quantile IS NOT NULL AND pp.support > 0 THEN pp.mce_quantile * pp.support END)
            / sum(CASE WHEN pp.mce_quantile IS NOT NULL AND pp.support > 0 THEN pp.support END)
        ELSE avg(pp.mce_quantile) END AS mce_quantile_weighted
FROM rankmetrics_label_scores AS s
JOIN rankmetrics_set_scores AS t ON s.grp = t.grp AND t.level = 'micro'
JOIN rankmetrics_micro_curves AS m ON s.grp = m.grp
LEFT JOIN rankmetrics_label_probabilities AS pp ON s.grp = pp.grp AND s.label = pp.label
LEFT JOIN rankmetrics_micro_probabilities AS pm ON s.grp = pm.grp
GROUP BY s.grp;
