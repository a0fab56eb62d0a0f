-- The TREC keys (polars_rankmetrics/metrics/trec.py) over a run joined with its qrels as
-- engines/topk.py's trec_tables prepares them: score is minus the document's position in
-- trec_eval's order (positions 1, 2, ... without ties; NULL where not retrieved) and truth a
-- code: 0 not in the qrels, 1 in the pool but unjudged (a negative relevance), relevance + 2
-- where judged. Each value is trec_eval's (metrics/trec.py documents each measure and its
-- degenerate cases).
--
-- The keys' parameters come as rows of three relations (engines/sql/export.py writes them
-- from the keys asked for, as rankmetrics_cutoffs carries the cut-offs):
--   rankmetrics_trec_parameters(k, cut, level, p, fraction, beta, ua, ub, uc, ud): one row per
--       parameter set k: the cut-off (NULL: none), the relevance level (trec_eval's -l: a
--       judged relevance at least this is relevant), rbp's persistence p, Rprec_mult's
--       fraction, set_F's beta and utility's coefficients;
--   rankmetrics_trec_points(k, point, recall): the recall points of iprec_at_recall (one) and
--       11pt_avg (several, numbered by point);
--   rankmetrics_trec_gains(k, relevance, gain): ndcg's gain of a relevance value where a key
--       gives one (ndcg.1=3,2=9); the relevance itself otherwise.
-- rankmetrics_trec_per_sample has one row per (grp, sample, k), and a key reads the row of its
-- k; the views it reads join on slot, k where not NULL (0 for the NULL k of the keys without
-- a cut-off or parameters), a key that is never NULL. ERR@K, and G, ndcg_rel and Rndcg, have
-- views of their own (the last ones below), which only a query for them computes.
--
-- A document outside the qrels (code 0) adds to no sum but the count of documents retrieved
-- (rankmetrics_sample_counts' n_scored): the views below read the qrels' documents alone,
-- a few per topic where the run retrieves many, and the positions place them.

-- rankmetrics_trec_judged: the documents the qrels name (code >= 1), at each relevance level
-- asked for, with the topic's counts at that level: R (num_rel), judged non-relevant
-- documents (num_nonrel), relevant documents retrieved (num_rel_ret), and, in position order
-- up to the row, the relevant (hits_to), judged non-relevant (nonrel_to) and pooled unjudged
-- (pooled_to) documents retrieved.
CREATE OR REPLACE VIEW rankmetrics_trec_judged AS
SELECT
    grp, sample, level, position, code, relevance, relevant, hit,
    sum(relevant) OVER (PARTITION BY grp, sample, level) AS num_rel,
    sum(nonrelevant) OVER (PARTITION BY grp, sample, level) AS num_nonrel,
    sum(hit) OVER (PARTITION BY grp, sample, level) AS num_rel_ret,
    sum(hit) OVER (
        PARTITION BY grp, sample, level ORDER BY position ASC NULLS LAST ROWS UNBOUNDED PRECEDING
    ) AS hits_to,
    sum(CASE WHEN position IS NOT NULL THEN nonrelevant ELSE 0 END) OVER (
        PARTITION BY grp, sample, level ORDER BY position ASC NULLS LAST ROWS UNBOUNDED PRECEDING
    ) AS nonrel_to,
    sum(CASE WHEN position IS NOT NULL AND code = 1 THEN 1 ELSE 0 END) OVER (
        PARTITION BY grp, sample, level ORDER BY position ASC NULLS LAST ROWS UNBOUNDED PRECEDING
    ) AS pooled_to
FROM (
    SELECT
        j.grp, j.sample, l.level, j.position, j.code, j.relevance,
        CASE WHEN j.code >= l.level + 2 THEN 1 ELSE 0 END AS relevant,
        CASE WHEN j.code >= 2 AND j.code < l.level + 2 THEN 1 ELSE 0 END AS nonrelevant,
        CASE WHEN j.position IS NOT NULL AND j.code >= l.level + 2 THEN 1 ELSE 0 END AS hit
    FROM (
        SELECT
            grp, sample, -score AS position, truth AS code,
            CASE WHEN truth >= 2 THEN truth - 2 ELSE 0 END AS relevance
        FROM rankmetrics_input
        WHERE truth >= 1
    ) AS j
    CROSS JOIN (SELECT DISTINCT level FROM rankmetrics_trec_parameters) AS l
) AS r;

-- rankmetrics_trec_gained: the rows of rankmetrics_trec_judged for each parameter set (slot) of
-- their level, with the document's ndcg gain (0 unless judged) and, for a positive gain, its place
-- in the ideal ranking (gain descending).
CREATE OR REPLACE VIEW rankmetrics_trec_gained AS
SELECT
    grp, sample, slot, cut, p, fraction, position, code, relevance, relevant, hit, num_rel,
    num_nonrel, num_rel_ret, hits_to, nonrel_to, pooled_to, gain,
    CASE WHEN gain > 0 THEN row_number() OVER (
        PARTITION BY grp, sample, slot ORDER BY gain DESC
    ) END AS ideal_position
FROM (
    SELECT
        j.grp, j.sample, coalesce(p.k, 0) AS slot, p.cut, p.p, p.fraction, j.position, j.code,
        j.relevance, j.relevant, j.hit, j.num_rel, j.num_nonrel, j.num_rel_ret, j.hits_to,
        j.nonrel_to, j.pooled_to,
        CASE WHEN j.code >= 2 THEN coalesce(g.gain, j.relevance) ELSE 0 END AS gain
    FROM rankmetrics_trec_judged AS j
    JOIN rankmetrics_trec_parameters AS p ON p.level = j.level
    LEFT JOIN rankmetrics_trec_gains AS g ON g.k = p.k AND g.relevance = j.relevance
) AS r;

-- rankmetrics_trec_sums: per (grp, sample, slot), the sums the measures divide; "within" is
-- within the cut-off (everywhere without one).
--   hits, ap_sum      relevant documents retrieved within, and their precisions
--   dcg, ideal        the run's and the ideal ranking's discounted gains within
--   judged_within     judged documents retrieved within; named_within: any the qrels name
--   rprec_hits        relevant documents among the first R; mult_hits: among the first
--                     int(fraction R + 0.9) (Rprec_mult, as trec_eval truncates)
--   ap_all            the precisions of every relevant document retrieved (gm_map)
--   bpref_sum         over the relevant retrieved, 1 - min(n, R) / min(N, R) (1 where n = 0), n
--                     the judged non-relevant ones above, N the topic's
--   infap_sum         Yilmaz and Aslam's inferred precisions (trec_eval's INFAP_EPSILON 1e-5)
--   bing_sum          over the relevant retrieved, 1 / log2(2 + documents above not relevant)
--   largest, rbp_sum  the largest relevance judged; the judged relevances retrieved times
--                     p^(position - 1)
--   judged_weight     p^(position - 1) summed over the judged documents retrieved
CREATE OR REPLACE VIEW rankmetrics_trec_sums AS
SELECT
    grp, sample, slot,
    max(num_rel) AS num_rel,
    max(num_nonrel) AS num_nonrel,
    max(num_rel_ret) AS num_rel_ret,
    sum(CASE WHEN position IS NOT NULL AND code >= 2 AND relevant = 0 THEN 1 ELSE 0 END)
        AS num_nonrel_ret,
    sum(CASE WHEN position IS NOT NULL AND code >= 2 THEN 1 ELSE 0 END) AS judged_ret,
    sum(CASE WHEN hit = 1 AND position <= coalesce(cut, position) THEN 1.0 ELSE 0 END) AS hits,
    sum(CASE WHEN hit = 1 AND position <= coalesce(cut, position)
        THEN hits_to / position ELSE 0 END) AS ap_sum,
    sum(CASE WHEN position <= coalesce(cut, position) AND gain <> 0
        THEN gain * ln(2) / ln(position + 1) ELSE 0 END) AS dcg,
    sum(CASE WHEN ideal_position <= coalesce(cut, ideal_position)
        THEN gain * ln(2) / ln(ideal_position + 1.0) ELSE 0 END) AS ideal,
    sum(CASE WHEN position <= cut AND code >= 2 THEN 1.0 ELSE 0 END) AS judged_within,
    sum(CASE WHEN position <= cut THEN 1.0 ELSE 0 END) AS named_within,
    sum(CASE WHEN hit = 1 AND position <= num_rel THEN 1.0 ELSE 0 END) AS rprec_hits,
    sum(CASE WHEN hit = 1 AND position <= floor(fraction * num_rel + 0.9) THEN 1.0 ELSE 0 END)
        AS mult_hits,
    min(CASE WHEN hit = 1 THEN position END) AS first_hit,
    sum(CASE WHEN hit = 1 THEN hits_to / position ELSE 0 END) AS ap_all,
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
    sum(CASE WHEN hit = 1 THEN ln(2) / ln(2 + position - hits_to) ELSE 0 END) AS bing_sum,
    max(relevance) AS largest,
    sum(CASE WHEN position IS NOT NULL AND relevance > 0
        THEN relevance * power(p, position - 1) ELSE 0 END) AS rbp_sum,
    sum(CASE WHEN position IS NOT NULL AND code >= 2 THEN power(p, position - 1) ELSE 0 END)
        AS judged_weight
FROM rankmetrics_trec_gained
GROUP BY grp, sample, slot;

-- rankmetrics_trec_interpolated: per (grp, sample, slot), the mean over k's recall points x of
-- the interpolated precision: the largest precision at the relevant documents retrieved from
-- the lround(x R)-th on (from the first where that is 0); 0 where the run retrieves fewer.
-- A topic without a relevant document retrieved has no row (its value is 0).
CREATE OR REPLACE VIEW rankmetrics_trec_interpolated AS
SELECT grp, sample, slot, avg(CASE WHEN wanted > found THEN 0 ELSE best END) AS iprec
FROM (
    SELECT
        j.grp, j.sample, pt.k AS slot, pt.point,
        max(floor(pt.recall * j.num_rel + 0.5)) AS wanted,
        max(j.num_rel_ret) AS found,
        max(CASE WHEN j.hits_to >= greatest(floor(pt.recall * j.num_rel + 0.5), 1)
            THEN j.hits_to / j.position END) AS best
    FROM rankmetrics_trec_judged AS j
    JOIN rankmetrics_trec_parameters AS p ON p.level = j.level
    JOIN rankmetrics_trec_points AS pt ON pt.k = p.k
    WHERE j.hit = 1
    GROUP BY j.grp, j.sample, pt.k, pt.point
) AS points
GROUP BY grp, sample, slot;

-- rankmetrics_trec_per_sample: one row per (grp, sample, k): the TREC keys.
--   num_q 1; num_ret, num_rel, num_rel_ret, num_nonrel_judged_ret the counts
--   p, recall, success, relative_p: relevant documents within the cut over the cut, over R,
--              1 if any, over min(cut, R)
--   ap         precisions of the relevant documents within the cut, over R (map, map_cut)
--   ndcg       dcg within the cut over the ideal's (ndcg, ndcg_cut)
--   unj        documents the qrels do not judge among the first cut ones, over cut
--   judged     documents the qrels name among the first cut ones, over cut (Judged@K)
--   rprec, rprec_mult: precision after R documents, after int(fraction R + 0.9)
--   recip_rank 1 over the first relevant document's position
--   bpref, infap, bing: their sums over R; gm_map, gm_bpref: the logarithm of AP and bpref
--              floored at 1e-5 (their means are exponentiated, metrics.registry's geometric
--              keys)
--   iprec      interpolated precision at the recall point (iprec_at_recall), or its mean over
--              the points (11pt_avg); NULL, trec_eval's 0 / 0, on a topic that judged_only
--              leaves nothing where a point's lround(x R) is 0
--   set_p, set_recall, set_relative_p, set_map, set_f: the retrieved set's, unranked
--   utility    ua rel_ret + ub (ret - rel_ret) + uc (R - rel_ret) + ud (rel_ret - ret - R)
--   rbp        (1 - p) sum of gain p^(position - 1), the gains over the largest relevance
--              judged where that exceeds 1; rbp_resid: 1 - (1 - p) sum of p^(position - 1)
--              over the judged documents retrieved (positions run 1, 2, ... ret, so this is
--              p^ret plus the weight of the unjudged ones), 0 where every one is judged
CREATE OR REPLACE VIEW rankmetrics_trec_per_sample AS
SELECT
    grp, sample, k, weight, n_positives,
    CAST(1 AS DOUBLE) AS num_q,
    ret AS num_ret,
    r AS num_rel,
    found AS num_rel_ret,
    num_nonrel_ret AS num_nonrel_judged_ret,
    hits / cut AS p,
    CASE WHEN r > 0 THEN hits / r ELSE 0 END AS recall,
    CASE WHEN hits > 0 THEN 1.0 ELSE 0 END AS success,
    CASE WHEN r > 0 THEN hits / least(cut, r) ELSE 0 END AS relative_p,
    CASE WHEN r > 0 THEN ap_sum / r ELSE 0 END AS ap,
    CASE WHEN ideal > 0 THEN dcg / ideal ELSE 0 END AS ndcg,
    (least(cut, ret) - judged_within) / cut AS unj,
    named_within / cut AS judged,
    CASE WHEN r > 0 THEN rprec_hits / r ELSE 0 END AS rprec,
    CASE WHEN mult_cut > 0 THEN mult_hits / mult_cut ELSE 0 END AS rprec_mult,
    coalesce(1.0 / first_hit, 0) AS recip_rank,
    CASE WHEN r > 0 THEN bpref_sum / r ELSE 0 END AS bpref,
    ln(greatest(CASE WHEN r > 0 THEN bpref_sum / r ELSE 0 END, 1e-5)) AS gm_bpref,
    ln(greatest(CASE WHEN r > 0 THEN ap_all / r ELSE 0 END, 1e-5)) AS gm_map,
    CASE WHEN r > 0 THEN infap_sum / r ELSE 0 END AS infap,
    CASE WHEN r > 0 THEN bing_sum / r ELSE 0 END AS bing,
    CASE WHEN judged_only = 1 AND ret = 0 AND floor(first_point * r + 0.5) = 0 THEN NULL
        ELSE iprec END AS iprec,
    CASE WHEN ret > 0 THEN found / ret ELSE 0 END AS set_p,
    CASE WHEN r > 0 THEN found / r ELSE 0 END AS set_recall,
    CASE WHEN ret > 0 AND r > 0 THEN found / least(ret, r) ELSE 0 END AS set_relative_p,
    CASE WHEN ret > 0 AND r > 0 THEN found * found / (ret * r) ELSE 0 END AS set_map,
    CASE WHEN found > 0
        THEN (beta + 1) * (found / ret) * (found / r) / (beta * (found / ret) + found / r)
        ELSE 0 END AS set_f,
    ua * found + ub * (ret - found) + uc * (r - found) + ud * (found - ret - r) AS utility,
    (1 - p) * rbp_sum / (CASE WHEN largest > 1 THEN largest ELSE 1 END) AS rbp,
    CASE WHEN ret > judged_ret THEN 1 - (1 - p) * judged_weight ELSE 0 END AS rbp_resid
FROM (
    SELECT
        s.grp, s.sample, p.k, s.weight, s.n_positives,
        CAST(p.cut AS DOUBLE) AS cut, p.p, p.beta, p.ua, p.ub, p.uc, p.ud, p.judged_only,
        CAST(s.n_scored AS DOUBLE) AS ret,
        CAST(coalesce(t.num_rel, 0) AS DOUBLE) AS r,
        CAST(coalesce(t.num_rel_ret, 0) AS DOUBLE) AS found,
        CAST(coalesce(t.num_nonrel_ret, 0) AS DOUBLE) AS num_nonrel_ret,
        CAST(coalesce(t.judged_ret, 0) AS DOUBLE) AS judged_ret,
        coalesce(t.hits, 0) AS hits, coalesce(t.ap_sum, 0) AS ap_sum,
        coalesce(t.dcg, 0) AS dcg, coalesce(t.ideal, 0) AS ideal,
        coalesce(t.judged_within, 0) AS judged_within,
        coalesce(t.named_within, 0) AS named_within,
        coalesce(t.rprec_hits, 0) AS rprec_hits, coalesce(t.mult_hits, 0) AS mult_hits,
        floor(p.fraction * coalesce(t.num_rel, 0) + 0.9) AS mult_cut,
        t.first_hit, coalesce(t.ap_all, 0) AS ap_all, coalesce(t.bpref_sum, 0) AS bpref_sum,
        coalesce(t.infap_sum, 0) AS infap_sum, coalesce(t.bing_sum, 0) AS bing_sum,
        coalesce(i.iprec, 0) AS iprec, pts.first_point, coalesce(t.largest, 0) AS largest,
        coalesce(t.rbp_sum, 0) AS rbp_sum, coalesce(t.judged_weight, 0) AS judged_weight
    FROM rankmetrics_sample_counts AS s
    CROSS JOIN rankmetrics_trec_parameters AS p
    LEFT JOIN rankmetrics_trec_sums AS t
        ON t.grp = s.grp AND t.sample = s.sample AND t.slot = coalesce(p.k, 0)
    LEFT JOIN rankmetrics_trec_interpolated AS i
        ON i.grp = s.grp AND i.sample = s.sample AND i.slot = coalesce(p.k, 0)
    LEFT JOIN (
        SELECT k, min(recall) AS first_point FROM rankmetrics_trec_points GROUP BY k
    ) AS pts ON pts.k = p.k
) AS v;

-- rankmetrics_trec_err_per_sample: one row per (grp, sample, k): ir_measures' ERR@K (gdeval's
-- expected reciprocal rank, metrics/trec.py) at the cut-off of k (0 for a k without one). A
-- user stops at a document of grade g with chance R = (2^g - 1) / 2^4, the grade being the
-- judged relevance capped at 4 (0 for a document not judged or judged below 0); err sums over
-- the documents retrieved within the cut-off R / position times the chance of reaching the
-- document, the product of (1 - R) over the documents above it. Since R <= 15/16 < 1, each
-- 1 - R is at least 1/16 and that product is exp(sum of ln(1 - R)) over the documents above
-- (a window sum); a document of grade 0 (R = 0, ln(1 - R) = 0) adds to neither, so the view
-- reads the documents of relevance above 0 alone. It reads no relevance level.
CREATE OR REPLACE VIEW rankmetrics_trec_err_per_sample AS
SELECT s.grp, s.sample, p.k, s.weight, s.n_positives, coalesce(e.err, 0) AS err
FROM rankmetrics_sample_counts AS s
CROSS JOIN rankmetrics_trec_parameters AS p
LEFT JOIN (
    SELECT grp, sample, slot, sum(stop * exp(coalesce(above, 0)) / position) AS err
    FROM (
        SELECT
            grp, sample, slot, position, stop,
            sum(ln(1 - stop)) OVER (
                PARTITION BY grp, sample, slot ORDER BY position ASC
                ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING
            ) AS above
        FROM (
            SELECT
                i.grp, i.sample, coalesce(p.k, 0) AS slot, -i.score AS position,
                (power(2.0, least(i.truth - 2, 4)) - 1) / 16.0 AS stop
            FROM rankmetrics_input AS i
            JOIN rankmetrics_trec_parameters AS p ON -i.score <= p.cut
            WHERE i.truth > 2
        ) AS stops
    ) AS reached
    GROUP BY grp, sample, slot
) AS e ON e.grp = s.grp AND e.sample = s.sample AND e.slot = coalesce(p.k, 0);

-- rankmetrics_trec_gains_judged: the judged documents (code >= 2) for each parameter set
-- without a cut-off (slot), with their position (NULL where not retrieved), ndcg's gain (the
-- relevance, or the slot's gain for it) and whether relevant at the slot's level.
CREATE OR REPLACE VIEW rankmetrics_trec_gains_judged AS
SELECT
    i.grp, i.sample, coalesce(p.k, 0) AS slot, -i.score AS position,
    coalesce(g.gain, i.truth - 2) AS gain,
    CASE WHEN i.truth >= p.level + 2 THEN 1 ELSE 0 END AS relevant
FROM rankmetrics_input AS i
JOIN rankmetrics_trec_parameters AS p ON p.cut IS NULL
LEFT JOIN rankmetrics_trec_gains AS g ON g.k = p.k AND g.relevance = i.truth - 2
WHERE i.truth >= 2;

-- rankmetrics_trec_gain_steps: what trec_eval's G, ndcg_rel and Rndcg read, for each parameter
-- set without a cut-off (slot; they take none), per (grp, sample, slot): the run's documents
-- retrieved with a gain other than 0 (ideal 0, place: the position) and the ideal ranking's
-- documents (ideal 1, place: 1, 2, ... over the judged documents of positive gain in
-- descending gain), merged in order of place, with the sums up to each place, both kinds at
-- that place included (a RANGE frame: a place holds at most one document of each kind):
--   ideal_cost     the sum of max(gain, 1) over the ideal's first places (G's cost)
--   ideal_dcg      the ideal's dcg to the place
--   got, run_dcg   the run's gains and dcg to the place
-- and over the slot: n, the ideal's documents, and any_relevant, 1 where a document is
-- relevant at the slot's level. An ideal row is a boundary where it is the last of its gain value (the place
-- at which count(*) in a RANGE frame over gain descending, its peers included, arrives).
-- The relevant documents retrieved with a gain of 0 or not retrieved come as run rows of
-- gain 0 without a place: they add to no sum but any_relevant, which a topic without a document
-- of positive gain still reads.
CREATE OR REPLACE VIEW rankmetrics_trec_gain_steps AS
SELECT
    grp, sample, slot, place, ideal, gain, boundary,
    sum(ideal) OVER (PARTITION BY grp, sample, slot) AS n,
    max(relevant) OVER (PARTITION BY grp, sample, slot) AS any_relevant,
    sum(CASE WHEN ideal = 1 THEN greatest(gain, 1.0) ELSE 0 END) OVER (
        PARTITION BY grp, sample, slot ORDER BY place ASC NULLS LAST
        RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
    ) AS ideal_cost,
    sum(CASE WHEN ideal = 1 THEN gain * ln(2) / ln(place + 1) ELSE 0 END) OVER (
        PARTITION BY grp, sample, slot ORDER BY place ASC NULLS LAST
        RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
    ) AS ideal_dcg,
    sum(CASE WHEN ideal = 0 THEN gain ELSE 0 END) OVER (
        PARTITION BY grp, sample, slot ORDER BY place ASC NULLS LAST
        RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
    ) AS got,
    sum(CASE WHEN ideal = 0 AND gain <> 0 THEN gain * ln(2) / ln(place + 1) ELSE 0 END) OVER (
        PARTITION BY grp, sample, slot ORDER BY place ASC NULLS LAST
        RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
    ) AS run_dcg
FROM (
    SELECT
        grp, sample, slot,
        CASE WHEN position IS NOT NULL AND gain <> 0 THEN position END AS place, 0 AS ideal,
        CASE WHEN position IS NOT NULL THEN gain ELSE 0 END AS gain, 0 AS boundary,
        relevant
    FROM rankmetrics_trec_gains_judged
    WHERE position IS NOT NULL AND gain <> 0 OR relevant = 1
    UNION ALL
    SELECT
        grp, sample, slot, CAST(place AS DOUBLE) AS place, 1 AS ideal, gain,
        CASE WHEN place = last_place THEN 1 ELSE 0 END AS boundary, relevant
    FROM (
        SELECT
            grp, sample, slot, gain, relevant,
            row_number() OVER (PARTITION BY grp, sample, slot ORDER BY gain DESC) AS place,
            count(*) OVER (
                PARTITION BY grp, sample, slot ORDER BY gain DESC
                RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
            ) AS last_place
        FROM rankmetrics_trec_gains_judged
        WHERE gain > 0
    ) AS best
) AS merged;

-- rankmetrics_trec_gain_per_sample: one row per (grp, sample, k): trec_eval's G, ndcg_rel and
-- Rndcg (metrics/trec.py) at the parameters of k (0 for a k with a cut-off).
--   g          over the ideal's gains' sum, the sum over the documents retrieved of
--              gain / log2(2 + cost - got) at their place; 0 where the ideal sums to 0
--   ndcg_rel   the mean over the ideal's n documents of run_dcg / ideal_dcg at each one's
--              position where retrieved, the whole run's dcg over the whole ideal's for each
--              one not retrieved; 0 where that sum is not positive (or n = 0)
--   rndcg      the mean of run_dcg / ideal_dcg at the ideal's boundaries, and once more the
--              whole run's over the whole ideal's where the run retrieved more than n + 1
--              documents (trec_eval reads that point after position n + 1); 0 without a
--              relevant document, NULL (trec_eval's 0 / 0, NaN) where one is relevant but no
--              document has a positive gain (n = 0)
CREATE OR REPLACE VIEW rankmetrics_trec_gain_per_sample AS
SELECT
    grp, sample, k, weight, n_positives,
    CASE WHEN ideal_gain > 0 THEN g_sum / ideal_gain ELSE 0 END AS g,
    CASE
        WHEN n = 0 THEN 0
        WHEN rel_sum + (n - rel_ret) * dcg_total / ideal_total > 0
            THEN (rel_sum + (n - rel_ret) * dcg_total / ideal_total) / n
        ELSE 0
    END AS ndcg_rel,
    CASE
        WHEN any_relevant = 0 THEN 0
        WHEN n = 0 THEN NULL
        WHEN ret > n + 1 THEN (boundary_sum + dcg_total / ideal_total) / (boundaries + 1)
        ELSE boundary_sum / boundaries
    END AS rndcg
FROM (
    SELECT
        s.grp, s.sample, p.k, s.weight, s.n_positives, CAST(s.n_scored AS DOUBLE) AS ret,
        CAST(coalesce(t.n, 0) AS DOUBLE) AS n, coalesce(t.any_relevant, 0) AS any_relevant,
        coalesce(t.ideal_gain, 0) AS ideal_gain, coalesce(t.ideal_total, 0) AS ideal_total,
        coalesce(t.dcg_total, 0) AS dcg_total, coalesce(t.g_sum, 0) AS g_sum,
        coalesce(t.rel_sum, 0) AS rel_sum, CAST(coalesce(t.rel_ret, 0) AS DOUBLE) AS rel_ret,
        coalesce(t.boundary_sum, 0) AS boundary_sum,
        CAST(coalesce(t.boundaries, 0) AS DOUBLE) AS boundaries
    FROM rankmetrics_sample_counts AS s
    CROSS JOIN rankmetrics_trec_parameters AS p
    LEFT JOIN (
        SELECT
            grp, sample, slot, max(n) AS n, max(any_relevant) AS any_relevant,
            sum(CASE WHEN ideal = 1 THEN gain ELSE 0 END) AS ideal_gain,
            sum(CASE WHEN ideal = 1 THEN gain * ln(2) / ln(place + 1) ELSE 0 END) AS ideal_total,
            sum(CASE WHEN ideal = 0 AND gain <> 0 THEN gain * ln(2) / ln(place + 1) ELSE 0 END)
                AS dcg_total,
            sum(CASE WHEN ideal = 0 AND gain <> 0
                THEN gain * ln(2) / ln(2 + ideal_cost + greatest(place - n, 0) - got)
                ELSE 0 END) AS g_sum,
            sum(CASE WHEN ideal = 0 AND gain > 0 THEN run_dcg / ideal_dcg ELSE 0 END) AS rel_sum,
            sum(CASE WHEN ideal = 0 AND gain > 0 THEN 1 ELSE 0 END) AS rel_ret,
            sum(CASE WHEN boundary = 1 THEN run_dcg / ideal_dcg ELSE 0 END) AS boundary_sum,
            sum(boundary) AS boundaries
        FROM rankmetrics_trec_gain_steps
        GROUP BY grp, sample, slot
    ) AS t ON t.grp = s.grp AND t.sample = s.sample AND t.slot = coalesce(p.k, 0)
) AS v;
