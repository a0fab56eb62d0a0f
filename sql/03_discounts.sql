-- rankmetrics_discounts: cumulative dcg discounts, cumulative = sum over r = 1..position of
-- 1 / log2(r + 1), for positions 0 up to the number of distinct labels (no sample has more).
-- A block spanning positions a..b, cut at k, sums the discounts D(min(b, k)) - D(min(a - 1, k)).
CREATE OR REPLACE VIEW rankmetrics_discounts AS
SELECT
    position,
    sum(CASE WHEN position > 0 THEN ln(2) / ln(position + 1) ELSE 0 END)
        OVER (ORDER BY position ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS cumulative
FROM range(0, (SELECT count(DISTINCT label) FROM rankmetrics_input) + 1) AS positions(position);
