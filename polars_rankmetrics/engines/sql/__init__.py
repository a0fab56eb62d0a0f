"""What every SQL engine shares: the session over the views of ``sql/`` (:mod:`.session`), the
row checks' queries (:mod:`.checks`), turning query rows into result frames (:mod:`.results`),
the views in other dialects (:mod:`.export`), and the evaluation state and its finalizing in
SQL alone (:mod:`.state`)."""
