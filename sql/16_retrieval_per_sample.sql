-- rankmetrics_retrieval_rows: the scored true labels, each with its tied block (a block of the
-- scores of one sample): start block_start, end rank, size n, positives p within it and positives
-- above it. Only scored labels are retrieved (a true label of a top-k table without a prediction
-- never is), as trec_eval and ranx count.
CREATE OR REPLACE VIEW rankmetrics_retrieval_rows AS
SELECT
    grp, sample, label, truth, propensity, rank, block_start,
    CAST(rank - block_start + 1 AS DOUBLE) AS n,
    CAST(block_positives AS DOUBLE) AS p,
    CAST(positive_rank - block_positives AS DOUBLE) AS above
FROM (
    SELECT
        grp, sample, label, score, truth, propensity, rank, block_start, positive_rank,
        count(CASE WHEN truth > 0 THEN 1 END)
            OVER (PARTITION BY grp, sample, score) AS block_positives
    FROM rankmetrics_rank_table
    WHERE score IS NOT NULL
) AS blocks
WHERE truth > 0;

-- rankmetrics_retrieval_per_sample: one row per (grp, sample, k) for every cut-off k of
-- rankmetrics_cutoffs (NULL = the whole list; the parts join on cut = coalesce(k, 0), as NULL
-- equals nothing): the retrieval metrics, each the expected value
-- over all orders of tied blocks (a block spanning positions a..b holds each of its p positives
-- at each position with probability p / n):
--   precision   expected true labels within the top k, over k (NULL without k)
--   recall      the same over the sample's true labels (scored or not)
--   hit_rate    1 - P(no true label within k): only the first block holding one matters, and
--               P = C(n - p, m) / C(n, m) for its m positions within k (log factorials)
--   mrr         sum over the first block's positions j of P(first true label at j) / position
--   map         sum over true labels of the expected precision at their position (harmonic
--               numbers: a positive at position r of its block has above + 1 + (r - a)(p - 1) /
--               (n - 1) true labels up to r), over the sample's true labels
--   r_precision expected true labels within the top R (R the sample's true labels), over R
--   psprecision, psprecision_norm, psndcg, psndcg_norm: propensity-scored precision and nDCG
--               (gain 1 / propensity), over k and over the best achievable value; psndcg over
--               the dcg of R true labels of gain 1 (Jain et al.)
-- Every value is 0 for a sample without a true label (or a scored one, for those that need it).
CREATE OR REPLACE VIEW rankmetrics_retrieval_per_sample AS
WITH samples AS (
    SELECT
        grp, sample, max(weight) AS weight,
        count(CASE WHEN truth > 0 THEN 1 END) AS n_positives
    FROM rankmetrics_rank_table
    GROUP BY grp, sample
),
cut AS (
    SELECT
        r.grp, r.sample, coalesce(c.k, 0) AS cut, r.rank, r.block_start, r.n, r.p, r.above,
        r.propensity,
        least(r.rank, coalesce(c.k, r.rank)) AS last_within,
        CAST(greatest(least(r.rank, coalesce(c.k, r.rank)) - r.block_start + 1, 0) AS DOUBLE)
            / r.n AS share
    FROM rankmetrics_retrieval_rows AS r
    CROSS JOIN rankmetrics_cutoffs AS c
),
hits AS (
    SELECT
        t.grp, t.sample, t.cut,
        sum(t.share) AS hits,
        sum(t.share / t.propensity) AS ps_hits,
        sum((hi.cumulative - lo.cumulative) / t.n / t.propensity) AS ps_dcg,
        sum(
            CASE WHEN t.last_within >= t.block_start THEN (
                (t.above + 1 - t.slope * t.block_start) * (hi.harmonic - lo.harmonic)
                + t.slope * (t.last_within - t.block_start + 1)
            ) / t.n ELSE CAST(0 AS DOUBLE) END
        ) AS precision_sum
    FROM (
        SELECT
            cut.*,
            CASE WHEN n > 1 THEN (p - 1) / (n - 1) ELSE CAST(0 AS DOUBLE) END AS slope
        FROM cut
    ) AS t
    JOIN rankmetrics_discounts AS hi ON hi.position = t.last_within
    JOIN rankmetrics_discounts AS lo ON lo.position = least(t.block_start - 1, t.last_within)
    GROUP BY t.grp, t.sample, t.cut
),
r_hits AS (
    SELECT
        r.grp, r.sample,
        sum(CAST(greatest(least(r.rank, s.n_positives) - r.block_start + 1, 0) AS DOUBLE) / r.n)
            AS hits
    FROM rankmetrics_retrieval_rows AS r
    JOIN samples AS s ON r.grp = s.grp AND r.sample = s.sample
    GROUP BY r.grp, r.sample
),
first_block AS (
    SELECT grp, sample, max(block_start) AS a, max(n) AS n, max(p) AS p
    FROM rankmetrics_retrieval_rows
    WHERE above = 0
    GROUP BY grp, sample
),
first_cut AS (
    SELECT
        f.grp, f.sample, coalesce(c.k, 0) AS cut, f.a, f.n, f.p,
        CAST(least(f.n, coalesce(c.k - f.a + 1, f.n)) AS BIGINT) AS m
    FROM first_block AS f
    CROSS JOIN rankmetrics_cutoffs AS c
),
hit_rates AS (
    -- P(no true label within the block's first m positions) = C(n - p, m) / C(n, m).
    SELECT
        f.grp, f.sample, f.cut,
        CASE
            WHEN f.m <= 0 THEN CAST(0 AS DOUBLE)
            WHEN f.m > f.n - f.p THEN CAST(1 AS DOUBLE)
            ELSE 1 - exp(a.log_factorial - b.log_factorial - c.log_factorial + d.log_factorial)
        END AS hit_rate
    FROM first_cut AS f
    LEFT JOIN rankmetrics_discounts AS a ON a.position = f.n - f.p
    LEFT JOIN rankmetrics_discounts AS b ON b.position = f.n - f.p - f.m
    LEFT JOIN rankmetrics_discounts AS c ON c.position = f.n
    LEFT JOIN rankmetrics_discounts AS d ON d.position = f.n - f.m
),
reciprocal_ranks AS (
    -- P(first true label at the block's position j) = C(n - j, p - 1) / C(n, p).
    SELECT
        f.grp, f.sample, f.cut,
        sum(
            exp(
                nj.log_factorial - p1.log_factorial - njp.log_factorial
                - n0.log_factorial + p0.log_factorial + np0.log_factorial
            ) / (f.a - 1 + j.position)
        ) AS mrr
    FROM first_cut AS f
    JOIN rankmetrics_discounts AS j
        ON j.position >= 1 AND j.position <= least(f.m, f.n - f.p + 1)
    JOIN rankmetrics_discounts AS nj ON nj.position = f.n - j.position
    JOIN rankmetrics_discounts AS p1 ON p1.position = f.p - 1
    JOIN rankmetrics_discounts AS njp ON njp.position = f.n - j.position - f.p + 1
    JOIN rankmetrics_discounts AS n0 ON n0.position = f.n
    JOIN rankmetrics_discounts AS p0 ON p0.position = f.p
    JOIN rankmetrics_discounts AS np0 ON np0.position = f.n - f.p
    GROUP BY f.grp, f.sample, f.cut
),
best_gains AS (
    -- The true labels by gain 1 / propensity, best first: the best achievable ranking.
    SELECT
        grp, sample, 1 / propensity AS gain,
        row_number() OVER (PARTITION BY grp, sample ORDER BY propensity, label) AS position
    FROM rankmetrics_rank_table
    WHERE truth > 0
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
    s.grp, s.sample, c.k, s.weight, s.n_positives,
    coalesce(h.hits, 0) / c.k AS precision,
    CASE WHEN s.n_positives > 0 THEN coalesce(h.hits, 0) / s.n_positives ELSE 0 END AS recall,
    coalesce(hr.hit_rate, 0) AS hit_rate,
    coalesce(rr.mrr, 0) AS mrr,
    CASE WHEN s.n_positives > 0 THEN coalesce(h.precision_sum, 0) / s.n_positives ELSE 0 END
        AS map,
    CASE WHEN s.n_positives > 0 THEN coalesce(r.hits, 0) / s.n_positives ELSE 0 END
        AS r_precision,
    coalesce(h.ps_hits, 0) / c.k AS psprecision,
    coalesce(h.ps_hits / nullif(b.ps_hits, 0), 0) AS psprecision_norm,
    coalesce(h.ps_dcg / nullif(ideal.cumulative, 0), 0) AS psndcg,
    coalesce(h.ps_dcg / nullif(b.ps_dcg, 0), 0) AS psndcg_norm
FROM samples AS s
CROSS JOIN rankmetrics_cutoffs AS c
LEFT JOIN hits AS h ON h.grp = s.grp AND h.sample = s.sample AND h.cut = coalesce(c.k, 0)
LEFT JOIN hit_rates AS hr
    ON hr.grp = s.grp AND hr.sample = s.sample AND hr.cut = coalesce(c.k, 0)
LEFT JOIN reciprocal_ranks AS rr
    ON rr.grp = s.grp AND rr.sample = s.sample AND rr.cut = coalesce(c.k, 0)
LEFT JOIN r_hits AS r ON r.grp = s.grp AND r.sample = s.sample
LEFT JOIN best AS b ON b.grp = s.grp AND b.sample = s.sample AND b.cut = coalesce(c.k, 0)
LEFT JOIN rankmetrics_discounts AS ideal ON ideal.position = least(s.n_positives, c.k);
