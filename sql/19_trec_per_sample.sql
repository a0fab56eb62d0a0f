-- The TREC keys (polars_rankmetrics/metrics/trec.py) over a run joined with its qrels as
-- engines/topk.py's trec_tables prepares them: score is minus the document's position in
-- trec_eval's order (positions 1, 2, ... without ties; NULL where not retrieved) and truth a
-- code: 0 not in the qrels, 1 in the pool but unjudged (a negative relevance), relevance + 2
-- where judged. The relevance level is trec_eval's default, 1: a relevant document has a code
-- of 3 or more, a judged non-relevant one the code 2 (the engines refuse any other level
-- here). Each value is trec_eval's (metrics/trec.py documents each measure and its
-- degenerate cases).

-- rankmetrics_trec_rows: every row with its position and the topic's counts: R (num_rel),
-- judged non-relevant documents (num_nonrel), and, in position order up to the row, the
-- relevant (hits_to), judged non-relevant (nonrel_to) and pooled unjudged (pooled_to)
-- documents retrieved; ideal_position: a judged relevant document's place in the ideal
-- ranking (relevance descending).
CREATE OR REPLACE VIEW rankmetrics_trec_rows AS
SELECT
    grp, sample, -score AS position, truth AS code,
    CASE WHEN score IS NOT NULL AND truth >= 3 THEN 1 ELSE 0 END AS hit,
    CASE WHEN truth >= 3 THEN truth - 2 ELSE 0 END AS gain,
    sum(CASE WHEN truth >= 3 THEN 1 ELSE 0 END) OVER (PARTITION BY grp, sample) AS num_rel,
    sum(CASE WHEN truth = 2 THEN 1 ELSE 0 END) OVER (PARTITION BY grp, sample) AS num_nonrel,
    sum(CASE WHEN truth >= 3 THEN 1 ELSE 0 END) OVER (
        PARTITION BY grp, sample ORDER BY -score ASC NULLS LAST ROWS UNBOUNDED PRECEDING
    ) AS hits_to,
    sum(CASE WHEN truth = 2 THEN 1 ELSE 0 END) OVER (
        PARTITION BY grp, sample ORDER BY -score ASC NULLS LAST ROWS UNBOUNDED PRECEDING
    ) AS nonrel_to,
    sum(CASE WHEN truth = 1 THEN 1 ELSE 0 END) OVER (
        PARTITION BY grp, sample ORDER BY -score ASC NULLS LAST ROWS UNBOUNDED PRECEDING
    ) AS pooled_to,
    CASE WHEN truth >= 3 THEN row_number() OVER (
        PARTITION BY grp, sample ORDER BY truth DESC
    ) END AS ideal_position
FROM rankmetrics_input;

-- rankmetrics_trec_per_sample: one row per (grp, sample): the TREC keys without a cut-off.
--   num_q 1; num_ret, num_rel, num_rel_ret, num_nonrel_judged_ret the counts
--   rprec      relevant documents among the first R, over R
--   recip_rank 1 over the first relevant document's position
--   bpref      sum over the relevant retrieved of 1 - min(n, R) / min(N, R) (1 where n = 0),
--              n the judged non-relevant ones above, N the topic's; over R
--   infap      Yilmaz and Aslam's inferred AP (trec_eval's INFAP_EPSILON 1e-5)
--   bing       sum over the relevant retrieved of 1 / log2(2 + non-relevant above), over R
--   set_p, set_recall, set_relative_p, set_map, set_f: the retrieved set's, unranked
--   utility    rel_ret - (ret - rel_ret), trec_eval's default coefficients
--   gm_map, gm_bpref: the logarithm of AP and bpref floored at 1e-5 (their means are
--              exponentiated, metrics.registry's geometric keys)
CREATE OR REPLACE VIEW rankmetrics_trec_per_sample AS
SELECT
    s.grp, s.sample, s.weight, s.n_positives,
    CAST(1 AS DOUBLE) AS num_q,
    CAST(t.num_ret AS DOUBLE) AS num_ret,
    CAST(t.num_rel AS DOUBLE) AS num_rel,
    CAST(t.num_rel_ret AS DOUBLE) AS num_rel_ret,
    CAST(t.num_nonrel_ret AS DOUBLE) AS num_nonrel_judged_ret,
    CASE WHEN t.num_rel > 0 THEN t.rprec_hits / t.num_rel ELSE 0 END AS rprec,
    coalesce(1.0 / t.first_hit, 0) AS recip_rank,
    CASE WHEN t.num_rel > 0 THEN t.bpref_sum / t.num_rel ELSE 0 END AS bpref,
    ln(greatest(CASE WHEN t.num_rel > 0 THEN t.bpref_sum / t.num_rel ELSE 0 END, 1e-5))
        AS gm_bpref,
    ln(greatest(CASE WHEN t.num_rel > 0 THEN t.ap_sum / t.num_rel ELSE 0 END, 1e-5)) AS gm_map,
    CASE WHEN t.num_rel > 0 THEN t.infap_sum / t.num_rel ELSE 0 END AS infap,
    CASE WHEN t.num_rel > 0 THEN t.bing_sum / t.num_rel ELSE 0 END AS bing,
    CASE WHEN t.num_ret > 0 THEN CAST(t.num_rel_ret AS DOUBLE) / t.num_ret ELSE 0 END AS set_p,
    CASE WHEN t.num_rel > 0 THEN CAST(t.num_rel_ret AS DOUBLE) / t.num_rel ELSE 0 END
        AS set_recall,
    CASE WHEN t.num_ret > 0 AND t.num_rel > 0
        THEN CAST(t.num_rel_ret AS DOUBLE) / least(t.num_ret, t.num_rel) ELSE 0 END
        AS set_relative_p,
    CASE WHEN t.num_ret > 0 AND t.num_rel > 0
        THEN CAST(t.num_rel_ret AS DOUBLE) * t.num_rel_ret / (CAST(t.num_ret AS DOUBLE) * t.num_rel)
        ELSE 0 END AS set_map,
    CASE WHEN t.num_rel_ret > 0
        THEN 2.0 * t.num_rel_ret / (t.num_ret + t.num_rel) ELSE 0 END AS set_f,
    CAST(2 * t.num_rel_ret - t.num_ret AS DOUBLE) AS utility
FROM rankmetrics_sample_counts AS s
JOIN (
    SELECT
        grp, sample,
        count(position) AS num_ret,
        max(num_rel) AS num_rel,
        sum(hit) AS num_rel_ret,
        sum(CASE WHEN position IS NOT NULL AND code = 2 THEN 1 ELSE 0 END) AS num_nonrel_ret,
        sum(CASE WHEN hit = 1 AND position <= num_rel THEN 1.0 ELSE 0 END) AS rprec_hits,
        min(CASE WHEN hit = 1 THEN position END) AS first_hit,
        sum(CASE WHEN hit = 1 THEN CAST(hits_to AS DOUBLE) / position ELSE 0 END) AS ap_sum,
        sum(CASE
            WHEN hit = 0 THEN 0
            WHEN nonrel_to = 0 THEN 1.0
            ELSE 1.0 - CAST(least(nonrel_to, num_rel) AS DOUBLE) / least(num_nonrel, num_rel)
        END) AS bpref_sum,
        sum(CASE
            WHEN hit = 0 THEN 0
            WHEN position = 1 THEN 1.0
            ELSE 1.0 / position + ((position - 1.0) / position)
                * ((hits_to - 1 + nonrel_to + pooled_to) / (position - 1.0))
                * ((hits_to - 1 + 1e-5) / (hits_to - 1 + nonrel_to + 2e-5))
        END) AS infap_sum,
        sum(CASE WHEN hit = 1 THEN ln(2) / ln(2 + position - hits_to) ELSE 0 END) AS bing_sum
    FROM rankmetrics_trec_rows
    GROUP BY grp, sample
) AS t ON t.grp = s.grp AND t.sample = s.sample;

-- rankmetrics_trec_cut_per_sample: one row per (grp, sample, k of rankmetrics_cutoffs; NULL:
-- no cut): the TREC keys with a cut-off.
--   p           relevant documents among the first k, over k
--   recall      the same over R;  success  1 if any;  relative_p  over min(k, R)
--   ap          precisions at the relevant documents within k, over R (map, map_cut)
--   ndcg        dcg within k (gain = relevance) over the ideal's dcg within k (ndcg, ndcg_cut)
--   unj         documents the qrels do not judge among the first k, over k
CREATE OR REPLACE VIEW rankmetrics_trec_cut_per_sample AS
SELECT
    s.grp, s.sample, c.k, s.weight, s.n_positives,
    coalesce(t.hits, 0) / c.k AS p,
    CASE WHEN t.num_rel > 0 THEN t.hits / t.num_rel ELSE 0 END AS recall,
    CASE WHEN t.hits > 0 THEN 1.0 ELSE 0 END AS success,
    CASE WHEN t.num_rel > 0 THEN t.hits / least(c.k, t.num_rel) ELSE 0 END AS relative_p,
    CASE WHEN t.num_rel > 0 THEN t.ap_sum / t.num_rel ELSE 0 END AS ap,
    CASE WHEN t.ideal > 0 THEN t.dcg / t.ideal ELSE 0 END AS ndcg,
    coalesce(t.unjudged, 0) / c.k AS unj
FROM rankmetrics_sample_counts AS s
CROSS JOIN rankmetrics_cutoffs AS c
LEFT JOIN (
    SELECT
        r.grp, r.sample, coalesce(c.k, 0) AS cut,
        max(r.num_rel) AS num_rel,
        sum(CASE WHEN r.hit = 1 AND r.position <= coalesce(c.k, r.position) THEN 1.0 ELSE 0 END)
            AS hits,
        sum(CASE WHEN r.hit = 1 AND r.position <= coalesce(c.k, r.position)
            THEN CAST(r.hits_to AS DOUBLE) / r.position ELSE 0 END) AS ap_sum,
        sum(CASE WHEN r.position <= coalesce(c.k, r.position) AND r.gain > 0
            THEN r.gain * ln(2) / ln(r.position + 1) ELSE 0 END) AS dcg,
        sum(CASE WHEN r.ideal_position <= coalesce(c.k, r.ideal_position)
            THEN r.gain * ln(2) / ln(r.ideal_position + 1) ELSE 0 END) AS ideal,
        sum(CASE WHEN r.position <= coalesce(c.k, r.position) AND r.code < 2 THEN 1.0 ELSE 0 END)
            AS unjudged
    FROM rankmetrics_trec_rows AS r
    CROSS JOIN rankmetrics_cutoffs AS c
    GROUP BY r.grp, r.sample, coalesce(c.k, 0)
) AS t ON t.grp = s.grp AND t.sample = s.sample AND t.cut = coalesce(c.k, 0);
