-- The parts of an evaluation state (the spec: polars_rankmetrics/states/format.py), rows that add
-- up over any split of the samples. rankmetrics_state_unit_sums(grp, rm_unit, rm_name, rm_value,
-- resampled) holds, per group and resampling unit, the sums of each requested key averaged over
-- samples (rm_name K: weight x value; K/w: the weights of the defined values; K/x: the null
-- values of positive weight; K/i: the ill-defined samples, where counted, which only warn and
-- are never resampled: resampled = 0), written by the exporter from the metric registry over the
-- per-sample views.

-- rankmetrics_state_units: part units, per (grp, unit): the sums that intervals resample, and
-- the samples.
CREATE OR REPLACE VIEW rankmetrics_state_units AS
SELECT grp, rm_unit, rm_name, rm_value
FROM rankmetrics_state_unit_sums
WHERE resampled = 1
UNION ALL
SELECT grp, unit AS rm_unit, 'samples' AS rm_name, CAST(count(*) AS DOUBLE) AS rm_value
FROM rankmetrics_sample_hashes
GROUP BY grp, unit;

-- rankmetrics_state_sums: part sums, per grp: every unit's sums summed, and the samples.
CREATE OR REPLACE VIEW rankmetrics_state_sums AS
SELECT grp, rm_name, sum(rm_value) AS rm_value
FROM (
    SELECT grp, rm_name, rm_value FROM rankmetrics_state_unit_sums
    UNION ALL
    SELECT grp, 'samples' AS rm_name, CAST(1 AS DOUBLE) AS rm_value FROM rankmetrics_sample_hashes
) AS unit_rows
GROUP BY grp, rm_name;

-- rankmetrics_state_labels: part labels, per (grp, label): the weighted tp, fp and fn of
-- rankmetrics_label_counts.
CREATE OR REPLACE VIEW rankmetrics_state_labels AS
SELECT
    c.grp, c.label, n.rm_name,
    CASE n.rm_name WHEN 'tp' THEN c.tp WHEN 'fp' THEN c.fp ELSE c.fn END AS rm_value
FROM rankmetrics_label_counts AS c
CROSS JOIN (VALUES ('tp'), ('fp'), ('fn')) AS n(rm_name);

-- rankmetrics_state_curves: part curves, per (grp, label, distinct score): the weighted pos and
-- neg of rankmetrics_score_counts (-0.0 already counted as 0.0).
CREATE OR REPLACE VIEW rankmetrics_state_curves AS
SELECT
    c.grp, c.label, c.score, n.rm_name,
    CASE n.rm_name WHEN 'pos' THEN c.pos ELSE c.neg END AS rm_value
FROM rankmetrics_score_counts AS c
CROSS JOIN (VALUES ('pos'), ('neg')) AS n(rm_name);
