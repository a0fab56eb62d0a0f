-- rankmetrics_gain_per_sample: one row per (grp, sample, k) for every cut-off k in
-- rankmetrics_cutoffs(k) (NULL = no cut): dcg (base 2) and ndcg.
-- dcg gives a tied block its mean gain times the discounts of the positions it spans
-- (D(rank) - D(block_start - 1)), also when the block straddles k: each row adds its gain times
-- that span over the block's size. ndcg is 0 when the ideal dcg is 0 (no positive gain).
-- The unscored block of a top-k table spans positions block_start .. n_labels, past the positions
-- of rankmetrics_discounts: its discount D(min(n_labels, k)) is rankmetrics_cutoffs' unscored.
CREATE OR REPLACE VIEW rankmetrics_gain_per_sample AS
SELECT
    s.grp, s.sample, c.k, s.weight, s.n_labels, s.n_positives,
    coalesce(r.dcg, CAST(0 AS DOUBLE)) AS dcg,
    CASE WHEN i.ideal_dcg > 0 THEN r.dcg / i.ideal_dcg ELSE CAST(0 AS DOUBLE) END AS ndcg
FROM rankmetrics_sample_counts AS s
CROSS JOIN rankmetrics_cutoffs AS c
LEFT JOIN (
    SELECT
        t.grp, t.sample, c.k,
        sum(
            t.truth
            * (CASE WHEN t.score IS NULL THEN c.unscored ELSE hi.cumulative END - lo.cumulative)
            / (t.rank - t.block_start + 1)
        ) AS dcg
    FROM rankmetrics_positive_ranks AS t
    CROSS JOIN rankmetrics_cutoffs AS c
    LEFT JOIN rankmetrics_discounts AS hi
        ON hi.position = least(t.rank, coalesce(c.k, t.rank)) AND t.score IS NOT NULL
    JOIN rankmetrics_discounts AS lo ON lo.position = least(t.block_start - 1, coalesce(c.k, t.rank))
    GROUP BY t.grp, t.sample, c.k
) AS r
    ON r.grp = s.grp AND r.sample = s.sample AND (r.k = c.k OR (r.k IS NULL AND c.k IS NULL))
LEFT JOIN (
    SELECT
        t.grp, t.sample, c.k,
        sum(t.truth * (hi.cumulative - lo.cumulative)) AS ideal_dcg
    FROM rankmetrics_ideal_table AS t
    CROSS JOIN rankmetrics_cutoffs AS c
    JOIN rankmetrics_discounts AS hi ON hi.position = least(t.truth_rank, coalesce(c.k, t.truth_rank))
    JOIN rankmetrics_discounts AS lo
        ON lo.position = least(t.truth_rank - t.n, coalesce(c.k, t.truth_rank))
    GROUP BY t.grp, t.sample, c.k
) AS i
    ON i.grp = s.grp AND i.sample = s.sample AND (i.k = c.k OR (i.k IS NULL AND c.k IS NULL));
