-- Finalizing evaluation states: from rankmetrics_states, a table (or view) of states with the
-- columns of rankmetrics_state, per group: each key's mean and its Poisson bootstrap interval,
-- whatever the split of the samples into states. The exporter defines, from the finalize's
-- parameters:
--   rankmetrics_state_groups(grp, rm_part, rm_label, rm_score, rm_unit, rm_name, rm_value,
--     rm_params): the states' rows, grp made of the by columns to finalize per (any other is
--     merged over);
--   rankmetrics_finalize_keys(metric, weight_name, null_name, ill_name, nan_if_null): per key
--     averaged over samples, the rm_name of its sums (K, K/w, K/x, K/i), and 1 where a null
--     value of positive weight makes its mean undefined;
--   rankmetrics_finalize_parameters(n_boot, seed, lo_quantile, hi_quantile): the bootstrap
--     replicates (0: no interval), the seed modulo 2^31 - 1, and the quantiles of the replicate
--     means that bound the interval, (1 - level) / 2 and (1 + level) / 2.

-- rankmetrics_merged_state: the merge rule: rm_value summed per group and identity; a group's
-- sketch cut to its 128 smallest hashes (exact: a hash among the 128 smallest of a union is among
-- the 128 smallest of every state holding it).
CREATE OR REPLACE VIEW rankmetrics_merged_state AS
WITH summed AS (
    SELECT grp, rm_part, rm_label, rm_score, rm_unit, rm_name, sum(rm_value) AS rm_value
    FROM rankmetrics_state_groups
    GROUP BY grp, rm_part, rm_label, rm_score, rm_unit, rm_name
)
SELECT grp, rm_part, rm_label, rm_score, rm_unit, rm_name, rm_value
FROM summed
WHERE rm_part <> 'sketch'
UNION ALL
SELECT grp, rm_part, rm_label, rm_score, rm_unit, rm_name, rm_value
FROM (
    SELECT
        grp, rm_part, rm_label, rm_score, rm_unit, rm_name, rm_value,
        row_number() OVER (PARTITION BY grp ORDER BY rm_unit) AS position
    FROM summed
    WHERE rm_part = 'sketch'
) AS sketch
WHERE position <= 128;

-- rankmetrics_state_checks: per grp, what must hold before its states are merged. parameters:
-- how many different rm_params its states hold (states computed with different keys, columns
-- or metric parameters do not merge: 1 where they may). sketch: its merged sketch's hashes;
-- shared: how many of them more than one merged state holds, whose share (overlap) estimates the
-- share of the group's samples counted twice. The states of one group must hold disjoint
-- samples (overlap 0); states of different groups (models) over the same samples are finalized
-- apart and never overlap. differing_labels: how many labels some of the group's label sets
-- (the labelset rows' fingerprints) hold and others do not, and differing_label the smallest
-- of them: evaluate refuses the union of states whose label sets differ (0 where they may
-- merge; label sets equal label for label count as one, whatever their fingerprints).
CREATE OR REPLACE VIEW rankmetrics_state_checks AS
SELECT
    p.grp, p.parameters,
    coalesce(s.sketch, 0) AS sketch, coalesce(s.shared, 0) AS shared, s.overlap,
    coalesce(l.differing_labels, 0) AS differing_labels, l.differing_label
FROM (
    SELECT grp, count(DISTINCT rm_params) AS parameters
    FROM rankmetrics_state_groups
    GROUP BY grp
) AS p
LEFT JOIN (
    SELECT
        grp,
        count(*) AS sketch,
        count(CASE WHEN rm_value > 1 THEN 1 END) AS shared,
        count(CASE WHEN rm_value > 1 THEN 1 END) / CAST(count(*) AS DOUBLE) AS overlap
    FROM rankmetrics_merged_state
    WHERE rm_part = 'sketch'
    GROUP BY grp
) AS s ON s.grp = p.grp
LEFT JOIN (
    SELECT h.grp, count(*) AS differing_labels, min(h.rm_label) AS differing_label
    FROM (
        SELECT grp, rm_label, count(DISTINCT rm_unit) AS held
        FROM rankmetrics_state_groups
        WHERE rm_part = 'labelset'
        GROUP BY grp, rm_label
    ) AS h
    JOIN (
        SELECT grp, count(DISTINCT rm_unit) AS label_sets
        FROM rankmetrics_state_groups
        WHERE rm_part = 'labelset'
        GROUP BY grp
    ) AS t ON t.grp = h.grp
    WHERE h.held < t.label_sets
    GROUP BY h.grp
) AS l ON l.grp = p.grp;

-- rankmetrics_state_means: per (grp, metric): the weighted mean K / K/w of the merged sums, NULL
-- where no value has weight (lwlrap without any positive) or where a null value of positive
-- weight makes the mean undefined (nan_if_null); and the ill-defined samples (K/i), NULL where
-- the states do not count them.
CREATE OR REPLACE VIEW rankmetrics_state_means AS
SELECT
    m.grp, k.metric,
    CASE
        WHEN k.nan_if_null = 1 AND sum(CASE WHEN m.rm_name = k.null_name THEN m.rm_value END) > 0
            THEN NULL
        ELSE sum(CASE WHEN m.rm_name = k.metric THEN m.rm_value END)
            / nullif(sum(CASE WHEN m.rm_name = k.weight_name THEN m.rm_value END), 0)
    END AS value,
    sum(CASE WHEN m.rm_name = k.ill_name THEN m.rm_value END) AS ill_defined
FROM rankmetrics_merged_state AS m
JOIN rankmetrics_finalize_keys AS k
    ON m.rm_name IN (k.metric, k.weight_name, k.null_name, k.ill_name)
WHERE m.rm_part = 'sums'
GROUP BY m.grp, k.metric, k.nan_if_null;

-- rankmetrics_replicates: the bootstrap replicates 0 .. n_boot - 1 (at most 100,000), numbered
-- from five digits: no table function needed.
CREATE OR REPLACE VIEW rankmetrics_replicates AS
WITH digits AS (
    SELECT digit FROM (VALUES (0), (1), (2), (3), (4), (5), (6), (7), (8), (9)) AS v(digit)
)
SELECT r.replicate
FROM (
    SELECT
        a.digit + 10 * b.digit + 100 * c.digit + 1000 * d.digit + 10000 * e.digit AS replicate
    FROM digits AS a
    CROSS JOIN digits AS b
    CROSS JOIN digits AS c
    CROSS JOIN digits AS d
    CROSS JOIN digits AS e
) AS r
CROSS JOIN rankmetrics_finalize_parameters AS p
WHERE r.replicate < p.n_boot;

-- rankmetrics_unit_draws: per (unit, replicate), how many times the Poisson bootstrap draws the
-- unit, for the units the merged states hold (the rows of units drawn at least once):
-- polars_rankmetrics/inference/hashing.py's draws, in BIGINT arithmetic modulo the prime
-- P = 2^31 - 1 (every product below 2^62). A step of z with an input x and a multiplier m is
-- y = (z + x + 1) mod P * m mod P, then (y * y + 12345) mod P * 48271 mod P. The key of an index
-- i in a stream (key_stream) is three steps from 0: with the seed (multiplier 16807), the stream
-- (69621), then i (39373); units are stream 0, replicates stream 1. The value of (unit u,
-- replicate r) is two steps from key(u): with key(r) (48271), then with 0 (16807). The count is
-- rankmetrics_poisson_count(value): how many of hashing.POISSON_THRESHOLDS are at or below it
-- (Poisson(1) by its inverse distribution function), written out by the exporter.
CREATE OR REPLACE VIEW rankmetrics_unit_draws AS
WITH seeded AS (
    SELECT (y * y + 12345) % 2147483647 * 48271 % 2147483647 AS z
    FROM (
        SELECT (seed + 1) % 2147483647 * 16807 % 2147483647 AS y
        FROM rankmetrics_finalize_parameters
    ) AS seed_step
), indices AS (
    SELECT 0 AS key_stream, rm_unit AS i
    FROM rankmetrics_merged_state
    WHERE rm_part = 'units'
    GROUP BY rm_unit
    UNION ALL
    SELECT 1 AS key_stream, CAST(replicate AS BIGINT) AS i
    FROM rankmetrics_replicates
), streamed AS (
    SELECT key_stream, i, (y * y + 12345) % 2147483647 * 48271 % 2147483647 AS z
    FROM (
        SELECT
            x.key_stream, x.i,
            (s.z + x.key_stream + 1) % 2147483647 * 69621 % 2147483647 AS y
        FROM indices AS x
        CROSS JOIN seeded AS s
    ) AS stream_step
), keyed AS (
    SELECT key_stream, i, (y * y + 12345) % 2147483647 * 48271 % 2147483647 AS z
    FROM (
        SELECT key_stream, i, (z + i + 1) % 2147483647 * 39373 % 2147483647 AS y
        FROM streamed
    ) AS index_step
), mixed AS (
    SELECT unit, replicate, (y * y + 12345) % 2147483647 * 48271 % 2147483647 AS z
    FROM (
        SELECT
            u.i AS unit, r.i AS replicate,
            (u.z + r.z + 1) % 2147483647 * 48271 % 2147483647 AS y
        FROM (SELECT i, z FROM keyed WHERE key_stream = 0) AS u
        CROSS JOIN (SELECT i, z FROM keyed WHERE key_stream = 1) AS r
    ) AS replicate_step
), valued AS (
    SELECT unit, replicate, (y * y + 12345) % 2147483647 * 48271 % 2147483647 AS z
    FROM (
        SELECT unit, replicate, (z + 1) % 2147483647 * 16807 % 2147483647 AS y
        FROM mixed
    ) AS last_step
)
SELECT unit, replicate, draws
FROM (
    SELECT unit, replicate, rankmetrics_poisson_count(z) AS draws
    FROM valued
) AS counted
WHERE draws > 0;

-- rankmetrics_replicate_means: per (grp, metric, replicate): the mean of the merged units' sums,
-- each counted as many times as the replicate draws its unit; NULL where it draws no weight. A
-- replicate that draws none of the group's units has no row.
CREATE OR REPLACE VIEW rankmetrics_replicate_means AS
SELECT
    m.grp, k.metric, d.replicate,
    sum(CASE WHEN m.rm_name = k.metric THEN d.draws * m.rm_value END)
        / nullif(sum(CASE WHEN m.rm_name = k.weight_name THEN d.draws * m.rm_value END), 0) AS value
FROM rankmetrics_merged_state AS m
JOIN rankmetrics_finalize_keys AS k ON m.rm_name IN (k.metric, k.weight_name)
JOIN rankmetrics_unit_draws AS d ON d.unit = m.rm_unit
WHERE m.rm_part = 'units'
GROUP BY m.grp, k.metric, d.replicate;
