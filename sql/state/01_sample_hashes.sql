-- The samples' hashes, which place them in resampling units and in a group's sketch, as
-- polars_rankmetrics/inference/hashing.py defines them: the md5 of the id's text (an integer id
-- in decimal, a string as it is, UTF-8), whose first two groups of 8 hex digits are the integers
-- a and b; h = (a div 2) * 2^31 + (b div 2), a 62-bit integer; the sample's unit is h mod 4096.
-- rankmetrics_hex_integer(digits) stands for the integer of 8 hex digits, which no two dialects
-- write alike: the exporter writes each dialect's own (polars_rankmetrics/engines/sql/export.py).
-- Only integer and string ids hash alike on every engine (the text of a float or a date differs).

-- rankmetrics_sample_hashes: one row per (grp, sample): its hash h and its unit.
CREATE OR REPLACE VIEW rankmetrics_sample_hashes AS
SELECT grp, sample, h, h % 4096 AS unit
FROM (
    SELECT
        grp, sample,
        CAST((a - a % 2) / 2 AS BIGINT) * 2147483648 + CAST((b - b % 2) / 2 AS BIGINT) AS h
    FROM (
        SELECT
            grp, sample,
            rankmetrics_hex_integer(substr(md5(CAST(sample AS VARCHAR)), 1, 8)) AS a,
            rankmetrics_hex_integer(substr(md5(CAST(sample AS VARCHAR)), 9, 8)) AS b
        FROM (SELECT DISTINCT grp, sample FROM rankmetrics_input) AS ids
    ) AS words
) AS hashes;

-- rankmetrics_state_sketch: one row per grp and each of its 128 smallest distinct hashes, which
-- finalizing compares across states to find samples held by more than one.
CREATE OR REPLACE VIEW rankmetrics_state_sketch AS
SELECT grp, h
FROM (
    SELECT grp, h, row_number() OVER (PARTITION BY grp ORDER BY h) AS position
    FROM (SELECT DISTINCT grp, h FROM rankmetrics_sample_hashes) AS distinct_hashes
) AS ranked
WHERE position <= 128;

-- rankmetrics_label_hashes: one row per (grp, label): the sample hash of the label's text (an
-- integer label in decimal, a string as it is), hi = a div 2 and lo = b div 2, so that
-- h = hi * 2^31 + lo.
CREATE OR REPLACE VIEW rankmetrics_label_hashes AS
SELECT
    grp, label,
    CAST((a - a % 2) / 2 AS BIGINT) AS hi,
    CAST((b - b % 2) / 2 AS BIGINT) AS lo
FROM (
    SELECT
        grp, label,
        rankmetrics_hex_integer(substr(md5(CAST(label AS VARCHAR)), 1, 8)) AS a,
        rankmetrics_hex_integer(substr(md5(CAST(label AS VARCHAR)), 9, 8)) AS b
    FROM (SELECT DISTINCT grp, label FROM rankmetrics_input) AS labels
) AS words;

-- rankmetrics_state_label_sets: one row per (grp, label) of a dense table, with the fingerprint
-- of the group's label set, (sum(hi) mod P) * 2^31 + (sum(lo) mod P) with P = 2^31 - 1
-- (hashing.set_fingerprint): the same whatever the order of the labels, each sum below 2^63
-- for fewer than 2^32 labels. Finalizing refuses a group whose states' label sets differ.
CREATE OR REPLACE VIEW rankmetrics_state_label_sets AS
SELECT l.grp, l.label, f.fingerprint
FROM rankmetrics_label_hashes AS l
JOIN (
    SELECT
        grp,
        CAST(sum(hi) % 2147483647 AS BIGINT) * 2147483648
            + CAST(sum(lo) % 2147483647 AS BIGINT) AS fingerprint
    FROM rankmetrics_label_hashes
    GROUP BY grp
) AS f ON f.grp = l.grp;
