-- rankmetrics_per_sample: one row per (grp, sample, k) with every metric; the metrics without a
-- cut-off repeat on each k. (The Python engines read the two views it joins directly, and only
-- the one a metric needs.)
CREATE OR REPLACE VIEW rankmetrics_per_sample AS
SELECT
    g.grp, g.sample, g.k, g.weight, g.n_labels, g.n_positives,
    r.coverage_error, r.lrap, r.ranking_loss, r.lwlrap, g.dcg, g.ndcg
FROM rankmetrics_gain_per_sample AS g
JOIN rankmetrics_ranking_per_sample AS r ON g.grp = r.grp AND g.sample = r.sample;
