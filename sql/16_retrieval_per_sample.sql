-- The retrieval metrics, one view per family of them so that a query reads only what it needs,
-- each with one row per (grp, sample) (and cut-off k of rankmetrics_cutoffs, NULL = the whole
-- list; the parts join on cut = coalesce(k, 0), as NULL equals nothing). Only scored labels are
-- retrieved (a true label of a top-k table without a prediction never is), as trec_eval and
-- ranx count. Every value is the expected one over all orders of tied blocks: a block spanning
-- positions a..b (n labels, p of them true) holds each true label at each of its positions with
-- probability p / n. Every value is 0 for a sample without a (scored) true label. Only the true
-- labels' ranks are read (rankmetrics_positive_ranks).

-- rankmetrics_retrieval_samples: each sample's weight and true labels (scored or not).
CREATE OR REPLACE VIEW rankmetrics_retrieval_samples AS
SELECT grp, sample, weight, n_positives
FROM rankmetrics_sample_counts;

-- rankmetrics_retrieval_hits: the scored true labels and, per cut-off, the share of their tied
-- block within the top k (the chance that the label is there).
CREATE OR REPLACE VIEW rankmetrics_retrieval_hits AS
SELECT
    r.grp, r.sample, coalesce(c.k, 0) AS cut, r.rank, r.block_start, r.positive_rank,
    r.propensity,
    least(r.rank, coalesce(c.k, r.rank)) AS last_within,
    CAST(greatest(least(r.rank, coalesce(c.k, r.rank)) - r.block_start + 1, 0) AS DOUBLE)
        / (r.rank - r.block_start + 1) AS share
FROM rankmetrics_positive_ranks AS r
CROSS JOIN rankmetrics_cutoffs AS c
WHERE r.score IS NOT NULL;

-- rankmetrics_hits_per_sample: precision (expected true labels within the top k, over k; NULL
-- without k), hits (those expected true labels) and recall (the same over the
-- sample's true labels).
CREATE OR REPLACE VIEW rankmetrics_hits_per_sample AS
SELECT
    s.grp, s.sample, c.k, s.weight, s.n_positives,
    coalesce(h.hits, 0) / c.k AS precision,
    coalesce(h.hits, 0) AS hits,
    CASE WHEN s.n_positives > 0 THEN coalesce(h.hits, 0) / s.n_positives ELSE 0 END AS recall
FROM rankmetrics_retrieval_samples AS s
CROSS JOIN rankmetrics_cutoffs AS c
LEFT JOIN (
    SELECT grp, sample, cut, sum(share) AS hits
    FROM rankmetrics_retrieval_hits
    GROUP BY grp, sample, cut
) AS h ON h.grp = s.grp AND h.sample = s.sample AND h.cut = coalesce(c.k, 0);

-- rankmetrics_map_per_sample: map, the sum over true labels of the expected precision at their
-- position, over the sample's true labels. A true label at position r of its block has the
-- positives above the block, itself, and (r - a)(p - 1) / (n - 1) expected positives of the
-- block before it: summed over r with harmonic numbers.
CREATE OR REPLACE VIEW rankmetrics_map_per_sample AS
SELECT
    s.grp, s.sample, c.k, s.weight, s.n_positives,
    CASE WHEN s.n_positives > 0 THEN coalesce(m.precision_sum, 0) / s.n_positives ELSE 0 END
        AS map
FROM rankmetrics_retrieval_samples AS s
CROSS JOIN rankmetrics_cutoffs AS c
LEFT JOIN (
    SELECT
        t.grp, t.sample, t.cut,
        sum(
            CASE WHEN t.last_within >= t.block_start THEN (
                (t.above + 1 - t.slope * t.block_start) * (hi.harmonic - lo.harmonic)
                + t.slope * (t.last_within - t.block_start + 1)
            ) / t.n ELSE CAST(0 AS DOUBLE) END
        ) AS precision_sum
    FROM (
        SELECT
            h.grp, h.sample, h.cut, h.block_start, h.last_within,
            CAST(h.rank - h.block_start + 1 AS DOUBLE) AS n,
            CAST(h.positive_rank - b.p AS DOUBLE) AS above,
            CASE
                WHEN h.rank > h.block_start
                    THEN CAST(b.p - 1 AS DOUBLE) / (h.rank - h.block_start)
                ELSE CAST(0 AS DOUBLE)
            END AS slope
        FROM rankmetrics_retrieval_hits AS h
        JOIN (
            -- the true labels of each block of scores (a block is one rank)
            SELECT grp, sample, rank, count(*) AS p
            FROM rankmetrics_positive_ranks
            WHERE score IS NOT NULL
            GROUP BY grp, sample, rank
        ) AS b ON b.grp = h.grp AND b.sample = h.sample AND b.rank = h.rank
    ) AS t
    JOIN rankmetrics_discounts AS hi ON hi.position = t.last_within
    JOIN rankmetrics_discounts AS lo ON lo.position = least(t.block_start - 1, t.last_within)
    GROUP BY t.grp, t.sample, t.cut
) AS m ON m.grp = s.grp AND m.sample = s.sample AND m.cut = coalesce(c.k, 0);

-- rankmetrics_first_hits_per_sample: hit_rate (1 - the chance that no true label is within k)
-- and mrr (the expected reciprocal rank of the first true label, 0 past k). Only the first block
-- holding a true label matters: with n labels, p of them true, from position a, the first true
-- label is at its j-th position with chance C(n - j, p - 1) / C(n, p) (log factorials).
CREATE OR REPLACE VIEW rankmetrics_first_hits_per_sample AS
WITH first_block AS (
    -- the first block holds the smallest rank, block start and positive rank of the true labels
    SELECT
        grp, sample, min(block_start) AS a, min(rank) - min(block_start) + 1 AS n,
        min(positive_rank) AS p
    FROM rankmetrics_positive_ranks
    WHERE score IS NOT NULL
    GROUP BY grp, sample
),
chances AS (
    SELECT
        f.grp, f.sample, f.a + j.position - 1 AS position,
        exp(
            nj.log_factorial - p1.log_factorial - njp.log_factorial
            - n0.log_factorial + p0.log_factorial + np0.log_factorial
        ) AS chance
    FROM first_block AS f
    JOIN rankmetrics_discounts AS j ON j.position >= 1 AND j.position <= f.n - f.p + 1
    JOIN rankmetrics_discounts AS nj ON nj.position = f.n - j.position
    JOIN rankmetrics_discounts AS p1 ON p1.position = f.p - 1
    JOIN rankmetrics_discounts AS njp ON njp.position = f.n - j.position - f.p + 1
    JOIN rankmetrics_discounts AS n0 ON n0.position = f.n
    JOIN rankmetrics_discounts AS p0 ON p0.position = f.p
    JOIN rankmetrics_discounts AS np0 ON np0.position = f.n - f.p
)
SELECT
    s.grp, s.sample, c.k, s.weight, s.n_positives,
    coalesce(h.hit_rate, 0) AS hit_rate,
    coalesce(h.mrr, 0) AS mrr
FROM rankmetrics_retrieval_samples AS s
CROSS JOIN rankmetrics_cutoffs AS c
LEFT JOIN (
    SELECT
        x.grp, x.sample, coalesce(c.k, 0) AS cut,
        sum(x.chance) AS hit_rate,
        sum(x.chance / x.position) AS mrr
    FROM chances AS x
    CROSS JOIN rankmetrics_cutoffs AS c
    WHERE c.k IS NULL OR x.position <= c.k
    GROUP BY x.grp, x.sample, coalesce(c.k, 0)
) AS h ON h.grp = s.grp AND h.sample = s.sample AND h.cut = coalesce(c.k, 0);

-- rankmetrics_r_precision_per_sample: r_precision, without k the expected true labels within the
-- top R (R the sample's true labels) over R; with k (LibMultiLabel's RP@k) those within the top
-- k over min(k, R).
CREATE OR REPLACE VIEW rankmetrics_r_precision_per_sample AS
SELECT
    s.grp, s.sample, c.k, s.weight, s.n_positives,
    CASE
        WHEN s.n_positives > 0
            THEN coalesce(r.hits, 0) / least(coalesce(c.k, s.n_positives), s.n_positives)
        ELSE 0
    END AS r_precision
FROM rankmetrics_retrieval_samples AS s
CROSS JOIN rankmetrics_cutoffs AS c
LEFT JOIN (
    SELECT
        t.grp, t.sample, coalesce(c.k, 0) AS cut,
        sum(
            CAST(greatest(least(t.rank, coalesce(c.k, s.n_positives)) - t.block_start + 1, 0)
                AS DOUBLE)
            / (t.rank - t.block_start + 1)
        ) AS hits
    FROM rankmetrics_positive_ranks AS t
    JOIN rankmetrics_retrieval_samples AS s ON t.grp = s.grp AND t.sample = s.sample
    CROSS JOIN rankmetrics_cutoffs AS c
    WHERE t.score IS NOT NULL
    GROUP BY t.grp, t.sample, coalesce(c.k, 0)
) AS r ON r.grp = s.grp AND r.sample = s.sample AND r.cut = coalesce(c.k, 0);

-- The propensity-scored metrics (gain 1 / propensity): psprecision (over k) and psndcg (over
-- the dcg of min(R, k) true labels of gain 1, Jain et al.), each in a view of its own, and their
-- _norm variants over the best achievable value (the true labels by gain), which alone sort the
-- true labels by propensity.

-- rankmetrics_propensity_hits: per (grp, sample, cut), the expected gain of the true labels
-- within the top k.
CREATE OR REPLACE VIEW rankmetrics_propensity_hits AS
SELECT grp, sample, cut, sum(share / propensity) AS ps_hits
FROM rankmetrics_retrieval_hits
GROUP BY grp, sample, cut;

-- rankmetrics_propensity_dcg: per (grp, sample, cut), the expected dcg of those gains.
CREATE OR REPLACE VIEW rankmetrics_propensity_dcg AS
SELECT
    h.grp, h.sample, h.cut,
    sum((hi.cumulative - lo.cumulative) / (h.rank - h.block_start + 1) / h.propensity) AS ps_dcg
FROM rankmetrics_retrieval_hits AS h
JOIN rankmetrics_discounts AS hi ON hi.position = h.last_within
JOIN rankmetrics_discounts AS lo ON lo.position = least(h.block_start - 1, h.last_within)
GROUP BY h.grp, h.sample, h.cut;

-- rankmetrics_psprecision_per_sample: psprecision, and the expected gain it is made of.
CREATE OR REPLACE VIEW rankmetrics_psprecision_per_sample AS
SELECT
    s.grp, s.sample, c.k, s.weight, s.n_positives, h.ps_hits,
    coalesce(h.ps_hits, 0) / c.k AS psprecision
FROM rankmetrics_retrieval_samples AS s
CROSS JOIN rankmetrics_cutoffs AS c
LEFT JOIN rankmetrics_propensity_hits AS h
    ON h.grp = s.grp AND h.sample = s.sample AND h.cut = coalesce(c.k, 0);

-- rankmetrics_psndcg_per_sample: psndcg, and the expected dcg it is made of.
CREATE OR REPLACE VIEW rankmetrics_psndcg_per_sample AS
SELECT
    s.grp, s.sample, c.k, s.weight, s.n_positives, d.ps_dcg, ideal.cumulative AS ideal_dcg,
    coalesce(d.ps_dcg / nullif(ideal.cumulative, 0), 0) AS psndcg
FROM rankmetrics_retrieval_samples AS s
CROSS JOIN rankmetrics_cutoffs AS c
LEFT JOIN rankmetrics_propensity_dcg AS d
    ON d.grp = s.grp AND d.sample = s.sample AND d.cut = coalesce(c.k, 0)
LEFT JOIN rankmetrics_discounts AS ideal ON ideal.position = least(s.n_positives, c.k);

-- rankmetrics_propensity_per_sample: the propensity-scored metrics, the _norm and _ratio ones
-- from the gain and dcg of the two views above and of the best ranking (the true labels by
-- descending 1 / propensity). A _ratio key (pyxclib's PSP@k, PSR@k, PSnDCG@k) is a ratio of sums
-- over samples: each sample's value over its best (NULL without a true label), weighted by that
-- best (best_psprecision, best_psrecall: over the true labels, best_psndcg: over the dcg of
-- min(k, R) gains of 1; 0 without a true label).
CREATE OR REPLACE VIEW rankmetrics_propensity_per_sample AS
WITH best_gains AS (
    SELECT
        grp, sample, 1 / propensity AS gain,
        row_number() OVER (PARTITION BY grp, sample ORDER BY propensity, label) AS position
    FROM rankmetrics_positive_ranks
),
best AS (
    SELECT
        b.grp, b.sample, coalesce(c.k, 0) AS cut,
        sum(CASE WHEN b.position <= c.k THEN b.gain END) AS ps_hits,
        sum(CASE WHEN b.position <= c.k THEN b.gain * (d.cumulative - e.cumulative) END)
            AS ps_dcg
    FROM best_gains AS b
    CROSS JOIN rankmetrics_cutoffs AS c
    JOIN rankmetrics_discounts AS d ON d.position = b.position
    JOIN rankmetrics_discounts AS e ON e.position = b.position - 1
    GROUP BY b.grp, b.sample, coalesce(c.k, 0)
)
SELECT
    p.grp, p.sample, p.k, p.weight, p.n_positives, p.psprecision,
    coalesce(p.ps_hits / nullif(b.ps_hits, 0), 0) AS psprecision_norm,
    n.psndcg,
    coalesce(n.ps_dcg / nullif(b.ps_dcg, 0), 0) AS psndcg_norm,
    coalesce(p.ps_hits, 0) / nullif(b.ps_hits, 0) AS psprecision_ratio,
    coalesce(p.ps_hits, 0) / nullif(b.ps_hits, 0) AS psrecall_ratio,
    coalesce(n.ps_dcg, 0) / nullif(b.ps_dcg, 0) AS psndcg_ratio,
    coalesce(b.ps_hits, 0) / p.k AS best_psprecision,
    coalesce(b.ps_hits / nullif(p.n_positives, 0), 0) AS best_psrecall,
    coalesce(b.ps_dcg / nullif(n.ideal_dcg, 0), 0) AS best_psndcg
FROM rankmetrics_psprecision_per_sample AS p
JOIN rankmetrics_psndcg_per_sample AS n
    ON n.grp = p.grp AND n.sample = p.sample AND coalesce(n.k, 0) = coalesce(p.k, 0)
LEFT JOIN best AS b ON b.grp = p.grp AND b.sample = p.sample AND b.cut = coalesce(p.k, 0);

-- rankmetrics_retrieval_per_sample: every retrieval metric, one row per (grp, sample, k).
CREATE OR REPLACE VIEW rankmetrics_retrieval_per_sample AS
SELECT
    h.grp, h.sample, h.k, h.weight, h.n_positives,
    h.precision, h.hits, h.recall, f.hit_rate, f.mrr, m.map, r.r_precision,
    p.psprecision, p.psprecision_norm, p.psndcg, p.psndcg_norm
FROM rankmetrics_hits_per_sample AS h
JOIN rankmetrics_map_per_sample AS m
    ON m.grp = h.grp AND m.sample = h.sample AND coalesce(m.k, 0) = coalesce(h.k, 0)
JOIN rankmetrics_first_hits_per_sample AS f
    ON f.grp = h.grp AND f.sample = h.sample AND coalesce(f.k, 0) = coalesce(h.k, 0)
JOIN rankmetrics_propensity_per_sample AS p
    ON p.grp = h.grp AND p.sample = h.sample AND coalesce(p.k, 0) = coalesce(h.k, 0)
JOIN rankmetrics_r_precision_per_sample AS r
    ON r.grp = h.grp AND r.sample = h.sample AND coalesce(r.k, 0) = coalesce(h.k, 0);
