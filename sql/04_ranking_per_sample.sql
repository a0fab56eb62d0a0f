-- rankmetrics_positive_sums: one row per (grp, sample) with a positive: what the ranking view
-- reads of its positives' ranks (rankmetrics_positive_ranks), summed.
--   max_positive_rank  the largest rank of a positive (coverage error)
--   precision_sum      the positives' precisions, positive_rank / rank (lrap, average precision)
--   wrong_pairs        the (positive, negative) pairs ordered wrongly, rank - positive_rank summed
--                      (ranking loss)
--   rank_span_sum      block_start + rank summed (roc_auc)
CREATE OR REPLACE VIEW rankmetrics_positive_sums AS
SELECT
    p.grp, p.sample,
    max(p.rank) AS max_positive_rank,
    sum(CAST(p.positive_rank AS DOUBLE) / p.rank) AS precision_sum,
    sum(p.rank - p.positive_rank) AS wrong_pairs,
    sum(CAST(p.block_start + p.rank AS DOUBLE)) AS rank_span_sum
FROM rankmetrics_positive_ranks AS p
GROUP BY p.grp, p.sample;

-- rankmetrics_positive_sums_by_pairs: wrong_pairs and rank_span_sum of rankmetrics_positive_sums
-- from the pairs of rankmetrics_positive_ranks_by_pairs counted per sample, not per positive
-- (max_positive_rank and precision_sum, which need a count per positive, are NULL): for ranking
-- loss and roc_auc alone. Each scored positive is paired with the candidates of its sample
-- (rankmetrics_pair_candidates) scoring at least as high, itself included: its rank
-- summed is the pairs, its positive_rank the pairs with a positive, its block_start the pairs
-- with a row scoring higher, plus 1 (its pair with itself, the one whose label is its own). An
-- unscored positive (top-k tables) ranks at n_labels, its block starting after the scored
-- labels, its positive rank the sample's positives: n_positives less the scored ones each.
-- DuckDB reads it in place of rankmetrics_positive_sums where it ranks by pairs and no key reads
-- the other two sums (engines/duckdb/tuning.py, sums_by_pairs).
CREATE OR REPLACE VIEW rankmetrics_positive_sums_by_pairs AS
SELECT
    s.grp, s.sample,
    CAST(NULL AS BIGINT) AS max_positive_rank,
    CAST(NULL AS DOUBLE) AS precision_sum,
    coalesce(q.wrong_pairs, 0)
        + (s.n_positives - coalesce(q.scored_positives, 0)) * (s.n_labels - s.n_positives)
        AS wrong_pairs,
    coalesce(q.span_pairs, CAST(0 AS DOUBLE))
        + (s.n_positives - coalesce(q.scored_positives, 0))
        * CAST(s.n_scored + 1 + s.n_labels AS DOUBLE) AS rank_span_sum
FROM rankmetrics_sample_counts AS s
LEFT JOIN (
    SELECT
        p.grp, p.sample,
        count(CASE WHEN c.label = p.label THEN 1 END) AS scored_positives,
        count(CASE WHEN NOT c.truth > 0 THEN 1 END) AS wrong_pairs,
        CAST(
            count(*) + count(CASE WHEN c.score > p.score THEN 1 END)
            + count(CASE WHEN c.label = p.label THEN 1 END) AS DOUBLE
        ) AS span_pairs
    FROM rankmetrics_input AS p
    JOIN rankmetrics_pair_candidates AS c
        ON c.grp = p.grp AND c.sample = p.sample AND c.score >= p.score
    WHERE p.truth > 0
    GROUP BY p.grp, p.sample
) AS q ON q.grp = s.grp AND q.sample = s.sample
WHERE s.n_positives > 0;

-- rankmetrics_ranking_per_sample: one row per (grp, sample): the metrics that need only the ranks
-- of the positives (rankmetrics_positive_ranks, summed by rankmetrics_positive_sums; no cut-off).
-- average_precision is lrap's mean precision over the positives (a tied block is one threshold);
-- roc_auc is the share of (positive, negative) pairs the positive wins, a tie counting 1/2, from
-- the positives' ascending average ranks n_labels + 1 - (block_start + rank) / 2 (Mann-Whitney).
-- Degenerate cases follow scikit-learn:
--   no positive label:   coverage_error 0, lrap 1, ranking_loss 0, lwlrap NULL (weight 0),
--                        average_precision 0, roc_auc NULL (scikit-learn: NaN)
--   all labels positive: coverage_error = n_labels, lrap 1, ranking_loss 0, roc_auc NULL
-- A tie counts as a ranking error (<=) and takes the largest rank. On a top-k table n_labels is the
-- label space's size, and the unscored labels without a row (negatives) count through it.
CREATE OR REPLACE VIEW rankmetrics_ranking_per_sample AS
SELECT
    s.grp, s.sample, s.weight, s.n_labels, s.n_positives,
    CAST(coalesce(r.max_positive_rank, 0) AS DOUBLE) AS coverage_error,
    coalesce(r.precision_sum / nullif(s.n_positives, 0), CAST(1 AS DOUBLE)) AS lrap,
    coalesce(
        CAST(r.wrong_pairs AS DOUBLE) / nullif(s.n_positives * (s.n_labels - s.n_positives), 0),
        CAST(0 AS DOUBLE)
    ) AS ranking_loss,
    r.precision_sum / nullif(s.n_positives, 0) AS lwlrap,
    coalesce(r.precision_sum / nullif(s.n_positives, 0), CAST(0 AS DOUBLE)) AS average_precision,
    (s.n_positives * (s.n_labels + CAST(1 AS DOUBLE)) - r.rank_span_sum / 2
        - s.n_positives * (s.n_positives + CAST(1 AS DOUBLE)) / 2)
        / nullif(CAST(s.n_positives AS DOUBLE) * (s.n_labels - s.n_positives), 0) AS roc_auc
FROM rankmetrics_sample_counts AS s
LEFT JOIN rankmetrics_positive_sums AS r ON s.grp = r.grp AND s.sample = r.sample;

-- rankmetrics_coverage_per_sample: one row per (grp, sample): coverage_error alone, without a
-- sort or a window (the ranking view's column, from the sample counts joined back): the labels
-- scoring at least the sample's lowest-scoring positive (its tied peers included, as rank "max"
-- has them). 0 without a positive; on a top-k table, n_labels when a positive has no score (it
-- ranks with the unscored labels, last). Every row is joined to its sample's counts on the
-- sample alone and the rows counted are summed as 0/1: a comparison of the two sides in the
-- join (a WHERE on both) costs DuckDB, which evaluates it within its hash join, about twice the
-- conditional sums (benchmarks/speed.py, coverage_error). A sample with neither an unscored
-- positive nor a scored one (lowest_positive NULL) has none: the positives need no count here.
CREATE OR REPLACE VIEW rankmetrics_coverage_per_sample AS
SELECT
    s.grp, s.sample, s.weight,
    CAST(CASE
        WHEN c.unscored_positives > 0 THEN p.n_labels
        WHEN s.lowest_positive IS NULL THEN 0
        ELSE c.covered
    END AS DOUBLE) AS coverage_error
FROM rankmetrics_sample_counts AS s
CROSS JOIN rankmetrics_parameters AS p
LEFT JOIN (
    SELECT
        i.grp, i.sample,
        sum(CASE WHEN i.score >= s.lowest_positive THEN 1 ELSE 0 END) AS covered,
        sum(CASE WHEN i.truth > 0 AND i.score IS NULL THEN 1 ELSE 0 END) AS unscored_positives
    FROM rankmetrics_input AS i
    JOIN rankmetrics_sample_counts AS s ON i.grp = s.grp AND i.sample = s.sample
    GROUP BY i.grp, i.sample
) AS c ON c.grp = s.grp AND c.sample = s.sample;
