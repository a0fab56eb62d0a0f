"""The checks on the long table, judged the same way for every engine (:mod:`.validation`)."""
