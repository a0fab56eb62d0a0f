-- rankmetrics_rank_table: the rank table every ranking metric is an aggregation of.
--
-- Input: a relation rankmetrics_input(grp, sample, label, score DOUBLE, truth DOUBLE, weight DOUBLE,
-- pred DOUBLE, predicted INT, propensity DOUBLE), one row per (sample, label); grp identifies an
-- independent evaluation (a model, a slice) and is never NULL; pred is the 0/1 decision the
-- threshold metrics read; propensity the label's propensity (NULL without one).
-- A top-k table (predictions joined with a truth table) has rows only for scored and true labels:
-- a true label without a prediction has a NULL score (predicted = 0), and ranks below every scored
-- label, tied with all the sample's other unscored labels: rank = n_labels of
-- rankmetrics_parameters, the size of the label space (NULL for a dense table).
--
-- Every input row, with where it stands in its sample's ranking (1-based, highest score first):
--   rank           #labels of the sample scoring >= score: rank "max" (a tie takes the largest rank)
--   positive_rank  #positive labels (truth > 0) scoring >= score
--   block_start    1 + #labels scoring > score: the first position of the row's tied block
-- The default window frame (RANGE ... CURRENT ROW) includes the tied peers, which is what makes
-- count(*) rank "max". The Polars engine's rank_table() adds the same columns.
CREATE OR REPLACE VIEW rankmetrics_rank_table AS
SELECT
    i.grp, i.sample, i.label, i.score, i.truth, i.weight, i.propensity,
    p.n_labels AS label_space,
    CASE
        WHEN i.score IS NULL THEN p.n_labels
        ELSE count(*) OVER (PARTITION BY i.grp, i.sample ORDER BY i.score DESC NULLS LAST)
    END AS rank,
    count(CASE WHEN i.truth > 0 THEN 1 END)
        OVER (PARTITION BY i.grp, i.sample ORDER BY i.score DESC NULLS LAST) AS positive_rank,
    rank() OVER (PARTITION BY i.grp, i.sample ORDER BY i.score DESC NULLS LAST) AS block_start
FROM rankmetrics_input AS i
CROSS JOIN rankmetrics_parameters AS p;

-- rankmetrics_sample_counts: one row per (grp, sample): what the checks and the per-sample views
-- read of a sample, in one aggregation:
--   weight           its weight (the largest: a top-k table's rows without a prediction have none)
--   n_rows           its rows
--   distinct_labels  its distinct labels (fewer than n_rows: a label repeats)
--   varying_weight   1 when its weight is not constant (smallest below largest: the same answer as
--                    count(DISTINCT weight) > 1 without a second distinct aggregate)
--   n_labels         its rows, or the label space of a top-k table
--   n_positives      its positive labels (truth > 0)
--   n_scored         its labels with a score
--   lowest_positive  its lowest scored positive score (NULL without one)
--   n_predicted      its predicted labels (pred is 0 or 1)
--   true_predicted   its truth summed over its predicted labels: its predicted positives for the
--                    0/1 truth the threshold metrics read (a sum, cheaper than a count of a CASE)
-- An engine that computes it once for the checks and the metrics (DuckDB) computes only the
-- columns its queries read.
CREATE OR REPLACE VIEW rankmetrics_sample_counts AS
SELECT
    c.grp, c.sample, c.weight, c.n_rows, c.distinct_labels, c.varying_weight,
    coalesce(p.n_labels, c.n_rows) AS n_labels,
    c.n_positives, c.n_scored, c.lowest_positive, c.n_predicted, c.true_predicted
FROM (
    SELECT
        grp, sample,
        max(weight) AS weight,
        count(*) AS n_rows,
        count(DISTINCT label) AS distinct_labels,
        CASE WHEN min(weight) < max(weight) THEN 1 ELSE 0 END AS varying_weight,
        count(CASE WHEN truth > 0 THEN 1 END) AS n_positives,
        count(score) AS n_scored,
        min(CASE WHEN truth > 0 THEN score END) AS lowest_positive,
        sum(pred) AS n_predicted,
        sum(truth * pred) AS true_predicted
    FROM rankmetrics_input
    GROUP BY grp, sample
) AS c
CROSS JOIN rankmetrics_parameters AS p;

-- rankmetrics_positive_ranks: the positive rows of the rank table alone, with its rank,
-- block_start and positive_rank: what every per-sample ranking and retrieval view reads. A row
-- scoring below every scored positive of its sample changes no positive's ranks, so the windows
-- run over the rows scoring at least the sample's lowest scored positive only, and the positive
-- ranks over the positives. An
-- unscored positive (top-k tables) ranks at n_labels, its block starting after the scored labels.
CREATE OR REPLACE VIEW rankmetrics_positive_ranks AS
SELECT
    grp, sample, label, score, truth, weight, propensity, rank, block_start,
    count(*) OVER (PARTITION BY grp, sample ORDER BY score DESC NULLS LAST) AS positive_rank
FROM (
    SELECT grp, sample, label, score, truth, weight, propensity, rank, block_start
    FROM (
        SELECT
            i.grp, i.sample, i.label, i.score, i.truth, i.weight, i.propensity,
            count(*) OVER (PARTITION BY i.grp, i.sample ORDER BY i.score DESC NULLS LAST)
                AS rank,
            rank() OVER (PARTITION BY i.grp, i.sample ORDER BY i.score DESC NULLS LAST)
                AS block_start
        FROM rankmetrics_input AS i
        JOIN rankmetrics_sample_counts AS s ON i.grp = s.grp AND i.sample = s.sample
        WHERE i.score >= s.lowest_positive
    ) AS above_lowest
    WHERE truth > 0
    UNION ALL
    SELECT
        i.grp, i.sample, i.label, i.score, i.truth, i.weight, i.propensity, p.n_labels AS rank,
        s.n_scored + 1 AS block_start
    FROM rankmetrics_input AS i
    JOIN rankmetrics_sample_counts AS s ON i.grp = s.grp AND i.sample = s.sample
    CROSS JOIN rankmetrics_parameters AS p
    WHERE i.truth > 0 AND i.score IS NULL
) AS positives;

-- rankmetrics_pair_candidates: the rows the plans by pairs pair a positive with, those scoring at
-- least their sample's lowest positive (no other row scores at least as high as a positive). A
-- row is a candidate by a flag its join with the sample counts selects, not by a condition of
-- the join: DuckDB tests a condition comparing both sides within its hash join, which costs it
-- more than the flag where the join has one key (its one-group variant joins on the sample
-- alone).
CREATE OR REPLACE VIEW rankmetrics_pair_candidates AS
SELECT grp, sample, label, score, truth
FROM (
    SELECT
        i.grp, i.sample, i.label, i.score, i.truth,
        CASE WHEN i.score >= s.lowest_positive THEN 1 ELSE 0 END AS candidate
    FROM rankmetrics_input AS i
    JOIN rankmetrics_sample_counts AS s ON i.grp = s.grp AND i.sample = s.sample
) AS flagged
WHERE candidate = 1;

-- rankmetrics_positive_ranks_by_pairs: rankmetrics_positive_ranks without a window: each scored
-- positive joined with the rows of its sample scoring at least as high, which are counted (its
-- rank), those scoring higher (its block start) and the positives (its positive rank). Only the
-- candidates (rankmetrics_pair_candidates) are joined, streamed into the join; the positives are
-- read from the input again rather than from the candidates, which DuckDB would then hold (a CTE
-- read twice) for no less work. The pairs are grouped by the positive's key (grp, sample, label),
-- which the sample checks make unique (a repeated label is refused before any metric), and its
-- other columns carried as max() of their one value: fewer keys to hash and compare per pair than
-- grouping by every column. Its cost follows the pairs (the positives' ranks summed) where the
-- windows' follows the rows they sort (the candidates): a pair costs less than a row sorted, but a
-- sample whose many positives rank low has about as many pairs as positives times labels. DuckDB
-- chooses per table (engines/duckdb/tuning.py, ranks_by_pairs); the other engines rank by the
-- windows.
CREATE OR REPLACE VIEW rankmetrics_positive_ranks_by_pairs AS
SELECT
    p.grp, p.sample, p.label,
    max(p.score) AS score, max(p.truth) AS truth, max(p.weight) AS weight,
    max(p.propensity) AS propensity,
    count(*) AS rank,
    count(CASE WHEN c.score > p.score THEN 1 END) + 1 AS block_start,
    count(CASE WHEN c.truth > 0 THEN 1 END) AS positive_rank
FROM rankmetrics_input AS p
JOIN rankmetrics_pair_candidates AS c
    ON c.grp = p.grp AND c.sample = p.sample AND c.score >= p.score
WHERE p.truth > 0
GROUP BY p.grp, p.sample, p.label
UNION ALL
SELECT
    i.grp, i.sample, i.label, i.score, i.truth, i.weight, i.propensity, p.n_labels AS rank,
    s.n_scored + 1 AS block_start, s.n_positives AS positive_rank
FROM rankmetrics_input AS i
JOIN rankmetrics_sample_counts AS s ON i.grp = s.grp AND i.sample = s.sample
CROSS JOIN rankmetrics_parameters AS p
WHERE i.truth > 0 AND i.score IS NULL;
