-- rankmetrics_topk_label_counts: one row per (grp, label, cut) for the label-level top-k keys
-- (label_coverage@k, macro_precision@k, macro_recall@k), cut a cut-off k of rankmetrics_cutoffs:
-- tp, the label's expected true predictions within its samples' top k; fp, its expected false
-- ones; support, its true samples (scored or not); each summed with the sample weights. A scored
-- row of a tied block spanning positions a..b lies within the top k with chance
-- (min(b, k) - a + 1) / (b - a + 1); an unscored true label is never predicted. Only the true
-- rows and the rows whose block starts within k are counted at k (the others' share is 0): a
-- label predicted only below k has no row at k. Counts of
-- disjoint sets of samples add up; the averages over labels are the Python side's
-- (polars_rankmetrics.metrics.label_averages), or rankmetrics_topk_label_summary's.
CREATE OR REPLACE VIEW rankmetrics_topk_label_counts AS
SELECT
    r.grp, r.label, r.k AS cut,
    sum(CASE WHEN r.truth > 0 THEN s.weight * r.share ELSE CAST(0 AS DOUBLE) END) AS tp,
    sum(CASE WHEN r.truth > 0 THEN CAST(0 AS DOUBLE) ELSE s.weight * r.share END) AS fp,
    sum(CASE WHEN r.truth > 0 THEN s.weight ELSE CAST(0 AS DOUBLE) END) AS support
FROM (
    SELECT
        t.grp, t.sample, t.label, t.truth, k.k,
        CASE
            WHEN t.score IS NULL THEN CAST(0 AS DOUBLE)
            ELSE CAST(greatest(least(t.rank, k.k) - t.block_start + 1, 0) AS DOUBLE)
                / (t.rank - t.block_start + 1)
        END AS share
    FROM rankmetrics_rank_table AS t
    CROSS JOIN rankmetrics_cutoffs AS k
    WHERE k.k IS NOT NULL AND (t.truth > 0 OR t.block_start <= k.k)
) AS r
JOIN rankmetrics_sample_counts AS s ON s.grp = r.grp AND s.sample = r.sample
GROUP BY r.grp, r.label, r.k;

-- rankmetrics_topk_label_summary: per (grp, cut) the label-level top-k keys: label_coverage (the
-- labels with an expected true prediction within the top k, over the labels with a true sample;
-- NULL without any), macro_precision (tp / (tp + fp) averaged over the labels predicted within
-- the top k) and macro_recall (tp / support averaged over the labels with a true sample), as
-- napkinXC's coverage@k and macro averages count their labels.
CREATE OR REPLACE VIEW rankmetrics_topk_label_summary AS
SELECT
    grp, cut AS k,
    CAST(count(CASE WHEN tp > 0 THEN 1 END) AS DOUBLE)
        / nullif(count(CASE WHEN support > 0 THEN 1 END), 0) AS label_coverage,
    avg(CASE WHEN tp + fp > 0 THEN tp / (tp + fp) END) AS macro_precision,
    avg(CASE WHEN support > 0 THEN tp / support END) AS macro_recall
FROM rankmetrics_topk_label_counts
GROUP BY grp, cut;
