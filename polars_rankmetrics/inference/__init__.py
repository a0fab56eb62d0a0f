"""From per-sample values to decisions: bootstrap intervals, paired tests and multiple-testing
corrections (:mod:`.resampling`, :mod:`.corrections`). Numbers in, numbers out: the engines
compute the per-sample values, these modules never read the input table."""
