"""What every SQL engine shares: the session over the views of ``sql/`` (:mod:`.session`), the
row checks' queries (:mod:`.checks`), turning query rows into result frames (:mod:`.results`),
and the views in other dialects (:mod:`.export`)."""
