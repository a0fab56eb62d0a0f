"""The metrics: what each one is, and how it is computed from a sample's rows.

- :mod:`.registry`: one record per metric (name, truth kind, reduction, Polars expression, SQL
  view); parsing a key such as ``ndcg@10``. Adding a metric starts here.
- :mod:`.ranks`: the rank table, the one rank computation every ranking metric reads.
- one module per family: :mod:`.ranking` (coverage, lrap, ranking loss, lwlrap, dcg/ndcg),
  :mod:`.classification` (threshold metrics), :mod:`.retrieval` (top-k retrieval metrics),
  :mod:`.label_averages` (the averages over labels, from per-label counts).
- :mod:`.sums`: the additive sums that per-sample values reduce to, and their means.
"""
