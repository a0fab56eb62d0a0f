"""What the HTML page holds of a table (:class:`Shape`): the keys of its summary, those drawn
at each cut-off, and the rule its numbers follow, as the page states it.

Without ``metrics=`` the page's keys are its own: a dense table's ranking and classification
keys, a top-k table's retrieval keys, or, under ``ties="trec_eval"``, trec_eval's measures. With
``metrics=`` they are the keys asked for, which may mix trec_eval's and ir_measures' names with
the library's keys (:func:`~polars_rankmetrics.engines.key_rules.key_parts`: each key read by
its own rules), and the page states each rule its keys follow.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from polars_rankmetrics.engines.key_rules import TrecOptions
from polars_rankmetrics.metrics.registry import MetricKey, parse_keys

# The summary of a dense table: keys averaged over samples (intervals and tests apply), then
# keys averaged over labels.
SAMPLE_KEYS = ("lrap", "lwlrap", "coverage_error", "ranking_loss", "ndcg", "ndcg@10",
               "hamming_loss", "f1_samples")  # fmt: skip
LABEL_KEYS = ("f1_micro", "f1_macro", "average_precision_micro", "average_precision_macro",
              "roc_auc_micro", "roc_auc_macro")  # fmt: skip
# The summary's keys where the scores are probabilities (every score in [0, 1]).
PROBABILITY_KEYS = ("log_loss_macro", "brier_macro", "ece_micro")
# The tie rule each kind of page follows, as the page states it.
DENSE_TIES = (
    "Tied scores: the ranking metrics count ties as scikit-learn does, and ndcg takes its expected "
    "value over the orders of each tied block."
)
TOP_K_TIES = (
    "Tied scores (ties='average'): the retrieval metrics take their expected value over the "
    "orders of each tied block."
)
TOP_K_TREC_TIES = (
    "Tied scores (ties='trec_eval'): each sample's labels ordered by score descending, then by "
    "label descending as text."
)


def trec_rule(trec: TrecOptions) -> str:
    """What a page of trec_eval's measures states of its numbers: the tie rule and the options
    (``-l``, ``-M``, ``-J``, ``-c``) they were computed under."""
    level = trec.relevance_level
    read = [f"a relevance of {level} or more is relevant (trec_eval's -l {level})"]
    if trec.max_docs is not None:
        read.append(f"the first {trec.max_docs} documents of each topic are read (-M)")
    if trec.judged_only:
        read.append("the documents the qrels do not judge are removed first (-J)")
    topics = (
        "every topic of the qrels is evaluated, one a run lacks scoring 0 (trec_eval's -c)"
        if trec.complete
        else "the topics of both the run and the qrels are evaluated (trec_eval without -c)"
    )
    return (
        "trec_eval's measures under its tie rule (ties='trec_eval'): each topic's documents "
        "ordered by score descending, then by document id descending as text; AP is trec_eval's "
        f"map. {_sentence('; '.join(read))}, and ndcg_cut_K takes the relevance as gain. "
        f"{_sentence(topics)}. The per-label sections (curves, table, score distributions) "
        "are for a dense table of 0/1 truth; a run holds none of them."
    )


def mixed_rule(
    trec_keys: Sequence[MetricKey], library: Sequence[MetricKey], trec: TrecOptions,
    ties: str | None,
) -> str:  # fmt: skip
    """What a page of TREC keys beside the library's states: each kind's keys and rule, and
    how the library's keys read graded qrels."""
    library_ties = TOP_K_TREC_TIES if ties == "trec_eval" else TOP_K_TIES
    return (
        f"The TREC keys ({', '.join(map(str, trec_keys))}): {trec_rule(trec)} The library's "
        f"keys ({', '.join(map(str, library))}), on the topics of either table: "
        f"{library_ties[:1].lower()}{library_ties[1:-1]}; their binary keys read a relevance of "
        f"{trec.relevance_level} or more as relevant, their graded keys a relevance above 0 as "
        "gain."
    )


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


@dataclass(frozen=True)
class Shape:
    """What the page holds of a table: the keys averaged over samples (the summary's
    intervals and the comparison apply to them) and those averaged over labels (a dense table
    only); the keys of the summary and the comparison (``shown``); the tie rule its numbers
    follow, as the page states it (``ties``); whether it holds the per-label sections of a
    dense table (``per_label``) and adds the probability keys where the scores are
    probabilities (``probabilities``); for a top-k table, the names of the keys drawn at each
    cut-off K = 1 .. k (``cuts``: the precision's, then the recall's; empty for a dense table,
    drawn by its labels, and for the keys asked for)."""

    sample_keys: list[MetricKey]
    label_keys: list[MetricKey]
    shown: list[MetricKey]
    ties: str
    per_label: bool = False
    probabilities: bool = False
    cuts: tuple[list[str], list[str]] = ([], [])

    @classmethod
    def of(
        cls, metrics: str | Sequence[str] | None, truth_table: Any, n_labels: int | None,
        k: int, *, ties: str | None, trec: TrecOptions,
    ) -> Shape:  # fmt: skip
        """The page's shape of :func:`~polars_rankmetrics.html_report`'s arguments: the keys
        asked for (:meth:`chosen`), else the page's own keys of the table and tie rule."""
        if metrics is not None:
            if ties == "trec_eval" and truth_table is None:
                raise ValueError(
                    "ties='trec_eval' orders a run's documents against its qrels: give "
                    "truth_table= (the per-label sections of a dense table read its scores as "
                    "they are)"
                )
            return cls.chosen(metrics, truth_table, ties=ties, trec=trec)
        if ties == "trec_eval":
            if truth_table is None or n_labels is not None:
                raise ValueError(
                    "ties='trec_eval' reports trec_eval's measures of a run against qrels: give "
                    "truth_table= (the qrels), without n_labels= (trec_eval's ndcg needs none)"
                )
            return cls.trec(k, trec)
        if trec != TrecOptions():
            raise ValueError(
                "relevance_level, max_docs, judged_only and complete are trec_eval's options: "
                "they go with ties='trec_eval' (a run against qrels) or with TREC keys in "
                "metrics="
            )
        return cls.dense() if truth_table is None else cls.top_k(n_labels, k)

    @classmethod
    def dense(cls) -> Shape:
        sample_keys = parse_keys(list(SAMPLE_KEYS))
        return cls(sample_keys, parse_keys(list(LABEL_KEYS)), sample_keys, DENSE_TIES,
                   per_label=True, probabilities=True)  # fmt: skip

    @classmethod
    def top_k(cls, n_labels: int | None, k: int) -> Shape:
        """The retrieval metrics at every cut-off 1 .. ``k`` (drawn), the summary showing the
        mean reciprocal rank, average precision, ndcg@``k`` (with ``n_labels``) and the
        precision and recall at ``k``."""
        cuts = _cuts(k, "precision@{}", "recall@{}")
        whole = ["mrr", "map", *([f"ndcg@{k}"] if n_labels is not None else [])]
        shown = parse_keys([*whole, cuts[0][-1], cuts[1][-1]])
        keys = parse_keys([*cuts[0], *cuts[1], *whole])
        return cls(keys, [], shown, TOP_K_TIES, cuts=cuts)

    @classmethod
    def trec(cls, k: int, trec: TrecOptions) -> Shape:
        """trec_eval's measures at every cut-off 1 .. ``k`` (drawn), the summary showing ``AP``
        (trec_eval's map), ``recip_rank``, ``ndcg_cut_k``, ``P_k`` and ``recall_k``, under
        ``trec``'s options."""
        cuts = _cuts(k, "P_{}", "recall_{}")
        whole = ["AP", "recip_rank", f"ndcg_cut_{k}"]
        shown = parse_keys([*whole, cuts[0][-1], cuts[1][-1]])
        keys = parse_keys([*cuts[0], *cuts[1], *whole])
        return cls(keys, [], shown, trec_rule(trec), cuts=cuts)

    @classmethod
    def chosen(
        cls, metrics: str | Sequence[str], truth_table: Any, *, ties: str | None,
        trec: TrecOptions,
    ) -> Shape:  # fmt: skip
        """The keys of ``metrics``, as :func:`~polars_rankmetrics.evaluate` reads them (TREC
        keys beside the library's each by its own rules): those averaged over samples with
        intervals and in the comparison; of a dense table those averaged over labels too,
        beside its per-label sections. A top-k table's keys must be averaged over samples,
        and no key may be a geometric mean (the comparison reads arithmetic means)."""
        keys = parse_keys(metrics)
        for key in keys:
            if key.metric.geometric:
                raise ValueError(
                    f"{key} is a geometric mean, which the report's intervals and comparison "
                    "do not read: report AP or Bpref"
                )
            if truth_table is not None and key.metric.reduction != "samples":
                raise ValueError(
                    f"{key} is averaged over labels: the report of a top-k table holds keys "
                    "averaged over samples (its intervals and comparison read them); "
                    "evaluate it with rm.evaluate"
                )
        sample_keys = [key for key in keys if key.metric.reduction == "samples"]
        label_keys = [key for key in keys if key.metric.reduction != "samples"]
        trec_keys = [key for key in keys if key.metric.family == "trec"]
        library = [key for key in keys if key.metric.family != "trec"]
        if truth_table is None:
            rule = DENSE_TIES
        elif trec_keys and library:
            rule = mixed_rule(trec_keys, library, trec, ties)
        elif trec_keys:
            rule = trec_rule(trec)
        else:
            rule = TOP_K_TREC_TIES if ties == "trec_eval" else TOP_K_TIES
        return cls(sample_keys, label_keys, sample_keys, rule, per_label=truth_table is None)


def _cuts(k: int, precision: str, recall: str) -> tuple[list[str], list[str]]:
    """The names of the precision and the recall keys at K = 1 .. ``k``."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a positive integer, not {k!r}")
    cuts = range(1, k + 1)
    return [precision.format(c) for c in cuts], [recall.format(c) for c in cuts]
