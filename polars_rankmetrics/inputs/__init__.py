"""What users pass in: column roles (:mod:`.columns`), opening sources of every kind
(:mod:`.sources`), converting dense and list shapes (:mod:`.convert`), and explaining a failure
to read a file or write a temporary one (:mod:`.media`). Adding an input kind starts in
:mod:`.sources`."""
