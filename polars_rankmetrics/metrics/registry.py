"""The metric registry: one record per metric, the single place every other part reads from.

Parsing (``"ndcg@5"``), validation (binary or graded truth, a minimum label count), the CLI's
list, the Polars expressions and the SQL an engine selects all come from a :class:`Metric`
record. Adding a metric is adding a record with :func:`register`; no engine has a branch per
metric.

A record says how one sample's value is computed on each engine:

- ``polars``: a function of the key and the :class:`Context` giving a Polars expression over one
  sample's rank-table rows (:mod:`polars_rankmetrics.metrics.ranking`);
- ``sql_view`` and ``sql_value``: the per-sample view of ``sql/`` it reads, and a SQL expression
  over that view's columns (the view's own column for the built-in metrics). A view whose rows
  carry a cut-off ``k`` is read at the key's :attr:`MetricKey.sql_row`: its cut-off, or, for a
  TREC key, the row of its parameters.

and how the per-sample values reduce to one number per group: their mean weighted by the sample
weight (``weighting="sample"``), by the sample weight times the sample's positive count
(``weighting="positives"``: lwlrap, where samples without positives have no value and no weight),
or by the sample weight times a value of the sample's own (``weighting="ideal"``: ``ideal``, a
Polars expression, and ``sql_ideal``, a column of the view). A ratio of sums over samples,
``sum v_i / sum b_i``, is the mean of ``v_i / b_i`` weighted by ``b_i``: the propensity-scored
``_ratio`` keys (pyxclib's PSP@K) have per-sample values and merge as every weighted mean does.

A null per-sample value either drops the sample out of the mean (``undefined="skip"``: lwlrap
without positives, a 0/0 with ``zero_division`` NaN) or makes the mean NaN
(``undefined="nan"``: ROC AUC of a sample with one class only, as scikit-learn gives), unless the
sample's weight is 0.

A per-sample value can also be ill-defined (``ill_defined``: a precision without predicted labels,
an average precision without positives; :mod:`polars_rankmetrics.metrics.undefined`): it has a
value, and the engines count such samples so that the run can warn.

A metric averaged over labels has no per-sample value. ``reduction`` says which per-label table
every engine gives for it, additive over buckets of samples, and ``label_score = (score,
average)`` how :mod:`polars_rankmetrics.metrics.label_averages` turns that table into one number:

- ``reduction="labels"`` (``precision_macro``, ``f1_micro``, ...): per label, the weighted counts
  of true and false positives and false negatives (``sql_view`` ``rankmetrics_label_counts``);
- ``reduction="curves"`` (``average_precision_macro``, ``roc_auc_micro``, ...): per label and
  distinct score, the weighted counts of positive and negative cells
  (``rankmetrics_score_counts``), from which the curves are cumulative sums, and the
  probability losses (``log_loss_macro``, ``brier_micro``, ...) sums over the distinct scores,
  and the calibration errors (``ece_micro@10``: ``k`` is the number of bins) sums over bins of
  them;
- ``reduction="topk_labels"`` (``label_coverage@K``, ``macro_precision@K``, ...): per label,
  its true samples and at each cut-off K the weighted expected true and false predictions
  within the samples' top K (``rankmetrics_topk_label_counts``, a row per label and cut-off,
  kept as a row per label: :func:`~polars_rankmetrics.metrics.label_averages.topk_label_columns`).

A metric that reads its scores as probabilities (``probabilities``: the log loss and Brier keys,
:mod:`polars_rankmetrics.metrics.probabilities`) needs every score in [0, 1].
"""

from __future__ import annotations

import difflib
import hashlib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal

import polars as pl

from polars_rankmetrics.metrics import classification as cx
from polars_rankmetrics.metrics import probabilities as px
from polars_rankmetrics.metrics import ranking as rx
from polars_rankmetrics.metrics import trec as tx


@dataclass(frozen=True)
class Rows:
    """How the engine laid out the rows a metric's expression aggregates (plan state, set by the
    engine, never by the caller).

    ``ranks``: the rank columns they carry (a Polars engine plan: "none", "lowest", "window",
    "blocks" or "table", :mod:`polars_rankmetrics.engines.polars_plans`); a metric may read
    ranks where another metric needs them instead of computing without them.
    ``positives_only``: the rows are the samples' positive rows alone. ``carries_ranks``: the
    scored rows of a top-k table carry ``rm_rank`` and ``rm_block_start`` already (ranked by
    scans before the join: :meth:`~polars_rankmetrics.engines.topk.Piece.join`).
    ``sorted_samples``: the rows come as runs of samples, their one sample column flagged sorted
    (an aggregation per sample reads runs of rows instead of hashing the ids).
    ``unique_labels``: the row checks found that no sample repeats a label
    (:class:`~polars_rankmetrics.checks.validation.RowFacts`).
    """

    ranks: str = "none"
    positives_only: bool = False
    carries_ranks: bool = False
    sorted_samples: bool = False
    unique_labels: bool = False


@dataclass(frozen=True)
class Context:
    """What a metric's expression may depend on besides its key.

    The caller's parameters: ``truth``, ``score`` and ``pred`` are the columns (``pred`` None: a
    label is predicted when its score is at least ``threshold``); ``log_base`` is dcg's
    logarithm base; ``beta`` the F-beta weight of recall; ``zero_division`` the value of a 0/0
    precision, recall, F or Jaccard (NaN: the sample drops out of the mean);
    ``warn_zero_division`` whether such a 0/0 warns (``zero_division="warn"``, value 0).

    What the checks found of the table: ``binary_truth`` whether every truth value is 0 or 1;
    ``n_labels`` the size of the label space of a top-k table (None: a dense table, whose
    samples carry every label); ``top_k`` whether the table is a top-k table (predictions joined
    with a truth table).

    ``rows``: how the engine laid the rows out (:class:`Rows`).

    ``relevance_level``: the TREC keys' relevance level (trec_eval's ``-l``): a judged document
    of relevance at least this is relevant (:mod:`polars_rankmetrics.metrics.trec`).
    ``judged_only``: whether the run was stripped of the documents the qrels do not judge
    (``-J``), where a topic left with no document has trec_eval's NaN for ``iprec_at_recall``.
    """

    truth: str = "truth"
    log_base: float = 2
    binary_truth: bool = False
    score: str = "score"
    pred: str | None = None
    threshold: float = 0.5
    beta: float = 1.0
    zero_division: float = 0.0
    warn_zero_division: bool = False
    n_labels: int | None = None
    top_k: bool = False
    rows: Rows = Rows()
    relevance_level: int = 1
    judged_only: bool = False


@dataclass(frozen=True)
class Metric:
    """One metric family: ``ndcg`` stands for ``ndcg`` and every ``ndcg@K``."""

    name: str
    description: str
    better: Literal["higher", "lower"]
    polars: Callable[[MetricKey, Context], pl.Expr] | None
    sql_view: str
    sql_value: str
    family: str = "ranking"
    takes_k: bool = False
    binary_truth: bool = True
    weighting: Literal["sample", "positives", "ideal"] = "sample"
    min_labels: int = 1
    scales_with_log_base: bool = False
    # Whether the key needs a cut-off (precision@K); takes_k alone makes it optional.
    requires_k: bool = False
    # Whether, on a top-k table, the value depends on the unscored labels (their count, n_labels).
    needs_label_space: bool = False
    # Whether it reads the label propensities (PROPENSITY).
    needs_propensities: bool = False
    undefined: Literal["skip", "nan"] = "skip"
    # Where a per-sample value is a convention (metrics.undefined.CONDITIONS): counted, to warn.
    ill_defined: str | None = None
    reduction: Literal["samples", "labels", "curves", "topk_labels"] = "samples"
    label_score: tuple[str, str] | None = None
    # Whether it reads each score as a probability, which must then lie in [0, 1].
    probabilities: bool = False
    # Whether its per-sample value is a logarithm whose mean is exponentiated (trec_eval's gm_*).
    geometric: bool = False
    # Whether trec_eval sums it over topics instead of averaging (num_ret, num_rel, ...).
    summed: bool = False
    # With weighting="ideal": the sample's weight besides its sample weight (the best value of
    # a ratio of sums), as a Polars expression and as a column of the SQL view.
    ideal: Callable[[MetricKey, Context], pl.Expr] | None = None
    sql_ideal: str = ""


REGISTRY: dict[str, Metric] = {}

RANKING_VIEW = "rankmetrics_ranking_per_sample"
COVERAGE_VIEW = "rankmetrics_coverage_per_sample"
GAIN_VIEW = "rankmetrics_gain_per_sample"
SET_VIEW = "rankmetrics_set_per_sample"
LABEL_VIEW = "rankmetrics_label_counts"
SCORE_VIEW = "rankmetrics_score_counts"
HITS_VIEW = "rankmetrics_hits_per_sample"
MAP_VIEW = "rankmetrics_map_per_sample"
FIRST_HITS_VIEW = "rankmetrics_first_hits_per_sample"
R_PRECISION_VIEW = "rankmetrics_r_precision_per_sample"
PSPRECISION_VIEW = "rankmetrics_psprecision_per_sample"
PSNDCG_VIEW = "rankmetrics_psndcg_per_sample"
PROPENSITY_VIEW = "rankmetrics_propensity_per_sample"
PROBABILITY_VIEW = "rankmetrics_probability_per_sample"
TREC_VIEW = "rankmetrics_trec_per_sample"
TREC_ERR_VIEW = "rankmetrics_trec_err_per_sample"
TREC_GAIN_VIEW = "rankmetrics_trec_gain_per_sample"
TOPK_LABEL_VIEW = "rankmetrics_topk_label_counts"
VIEWS_WITH_K = frozenset(
    {GAIN_VIEW, HITS_VIEW, MAP_VIEW, FIRST_HITS_VIEW, R_PRECISION_VIEW, PSPRECISION_VIEW,
     PSNDCG_VIEW, PROPENSITY_VIEW, TREC_VIEW, TREC_ERR_VIEW, TREC_GAIN_VIEW, TOPK_LABEL_VIEW}
)  # fmt: skip


def register(metric: Metric) -> Metric:
    """Add ``metric`` to the registry (replacing one of the same name) and return it."""
    if not re.fullmatch(r"[a-z][a-z0-9_]*", metric.name):
        raise ValueError(f"metric name {metric.name!r} must be lowercase letters, digits and _")
    REGISTRY[metric.name] = metric
    return metric


def unregister(name: str) -> None:
    """Remove a metric added by :func:`register`."""
    del REGISTRY[name]


MAX_INT64 = 2**63 - 1
"""The largest cut-off K of a key and label space ``n_labels`` of a top-k table: the largest
64-bit integer, the type every engine stores them in."""


@dataclass(frozen=True)
class MetricKey:
    """One requested metric: its name, and the cut-off ``k`` of a metric that takes one.

    ``k=None`` means the whole ranking; a ``k`` is from 1 to :data:`MAX_INT64` (a larger one is
    refused, naming the key). ``str(key)`` is the result column name: ``alias``, the name the
    key was asked by (``P_5``, ``nDCG@10``), where given. ``params``: the parameters of a TREC
    key, as (name, value) pairs (``("rel", 2)``, ``("recall", 0.5)``, ``("gains", ((1, 3.0),
    (2, 9.0)))``).
    """

    name: str
    k: int | None = None
    params: tuple[tuple[str, object], ...] = ()
    alias: str | None = None

    def __post_init__(self) -> None:
        if self.name not in REGISTRY:
            raise ValueError(f"unknown metric {self.name!r}; valid metrics are {_valid()}")
        if self.k is not None:
            if not self.metric.takes_k:
                raise ValueError(f"metric {self.name!r} takes no cut-off @K")
            if isinstance(self.k, bool) or not isinstance(self.k, int) or self.k < 1:
                raise ValueError(f"k must be a positive integer, not {self.k!r}")
            if self.k > MAX_INT64:
                raise ValueError(
                    f"{self}: K must be at most 2**63 - 1 ({MAX_INT64}), the largest integer "
                    "every engine stores (a cut-off past a sample's labels cuts nothing)"
                )
        elif self.metric.requires_k:
            raise ValueError(f"metric {self.name!r} needs a cut-off: ask for {self.name}@K")

    def __str__(self) -> str:
        if self.alias is not None:
            return self.alias
        return self.name if self.k is None else f"{self.name}@{self.k}"

    def param(self, name: str, default: object = None) -> object:
        """The value of parameter ``name`` (``default`` where not given)."""
        return dict(self.params).get(name, default)

    @property
    def metric(self) -> Metric:
        return REGISTRY[self.name]

    @property
    def sql_row(self) -> int | None:
        """The ``k`` of the rows a view with a cut-off column gives this key's values in (and
        of its row of ``rankmetrics_cutoffs``): its cut-off, or, for a TREC key with a
        relevance level of its own (``rel``) or other parameters than trec_eval's defaults
        (:func:`trec_row`), a number from 2^61 on that names them (61 bits of their hash: two
        parameter sets of one evaluation share one with a chance below 2^-50)."""
        if self.metric.family != "trec":
            return self.k
        row = trec_row(self)
        if self.param("rel") is None and row == TrecRow(cut=self.k):
            return self.k
        digest = hashlib.blake2b(repr(row).encode(), digest_size=8).digest()
        return 2**61 + int.from_bytes(digest) % 2**61

    @property
    def is_binary(self) -> bool:
        """Whether the metric needs truth in {0, 1} (dcg/ndcg accept graded gains)."""
        return self.metric.binary_truth

    def expression(self, context: Context) -> pl.Expr:
        """The per-sample Polars expression, named by the key."""
        if self.metric.polars is None:
            raise ValueError(f"{self} has no per-sample value (it is averaged over labels)")
        return self.metric.polars(self, context).alias(str(self))

    def ideal_expression(self, context: Context) -> pl.Expr:
        """The per-sample weight of a key weighted by ``"ideal"``, named :func:`ideal_column`."""
        assert self.metric.ideal is not None  # weighting="ideal"
        return self.metric.ideal(self, context).cast(pl.Float64).alias(ideal_column(self))


IDEAL_PREFIX = "__ideal "


def ideal_column(key: MetricKey) -> str:
    """The per-sample column of ``key``'s own weight (``weighting="ideal"``)."""
    return f"{IDEAL_PREFIX}{key}"


def _valid() -> str:
    names = [
        f"{m.name}@K" if m.requires_k else f"{m.name}, {m.name}@K" if m.takes_k else m.name
        for m in REGISTRY.values()
        if m.family != "trec"
    ]
    trec = "and with truth_table=, trec_eval's and ir_measures' names (P_5, AP, nDCG@10, ...)"
    return f"{', '.join(names)}, {trec}"


_KEY = re.compile(r"^([a-z][a-z0-9_]*)(?:@([0-9]+))?$")


def parse_key(text: str) -> MetricKey:
    """Parse ``"lrap"``, ``"ndcg@5"``, or a TREC key by trec_eval's or ir_measures' name
    (``"P_5"``, ``"P@5"``, ``"nDCG@10"``: :func:`trec_key`); raise ``ValueError`` naming the
    closest known names and the valid keys otherwise."""
    match = _KEY.match(text)
    if match is None or match.group(1) not in REGISTRY:
        key = trec_key(text)
        if key is not None:
            return key
        close = difflib.get_close_matches(text, known_names(), n=3, cutoff=0.5)
        hint = f"; closest known names: {', '.join(close)}" if close else ""
        raise ValueError(f"unknown metric {text!r}{hint}; valid metrics are {_valid()}")
    k = match.group(2)
    return MetricKey(match.group(1), None if k is None else int(k))


def parse_keys(metrics: str | Iterable[str | MetricKey] | None) -> list[MetricKey]:
    """Parse a list of keys (or one string of comma-separated keys, or ``None`` for the default
    ranking set), each once; a :class:`MetricKey` is taken as it is.

    In a list that holds a TREC key (trec_eval's or ir_measures' name), the names that are
    both trec_eval's and the library's (``map``, ``ndcg``: :data:`SHARED_NAMES`) name
    trec_eval's measure; the library's other keys (``precision@5``, ``lrap``) keep theirs.
    Without a TREC key they are the library's."""
    if metrics is None:
        metrics = DEFAULT_METRICS
    elif isinstance(metrics, str):
        metrics = [m.strip() for m in metrics.split(",")]
    given = list(metrics)
    keys = [m if isinstance(m, MetricKey) else parse_key(m) for m in given]
    if not keys:
        raise ValueError("metrics is empty; ask for at least one metric")
    if any(key.metric.family == "trec" for key in keys):
        keys = [
            MetricKey(SHARED_NAMES[m], alias=m) if isinstance(m, str) and m in SHARED_NAMES
            else key
            for m, key in zip(given, keys, strict=True)
        ]  # fmt: skip
    return list(dict.fromkeys(keys))


def min_labels(keys: Iterable[MetricKey]) -> tuple[int, str]:
    """The largest minimum label count of ``keys`` and the metric that needs it."""
    needed = max(keys, key=lambda key: key.metric.min_labels)
    return needed.metric.min_labels, needed.name


_COVERAGE_INPUTS: dict[str, Literal["scores", "lowest", "ranks"]] = {
    "lowest": "lowest", "none": "scores",
}  # fmt: skip

register(Metric(
    "coverage_error", "largest rank of a positive label", "lower",
    lambda key, c: rx.coverage_error(
        c.truth, score=c.score, n_labels=c.n_labels,
        # Its own plan: "lowest", or "none" over runs of rows (polars_plans).
        using=_COVERAGE_INPUTS.get(c.rows.ranks, "ranks"),
    ),
    COVERAGE_VIEW, "coverage_error", needs_label_space=True,
))  # fmt: skip
register(Metric(
    "lrap", "label ranking average precision", "higher",
    lambda key, c: rx.lrap(c.truth), RANKING_VIEW, "lrap",
    needs_label_space=True,
))  # fmt: skip
register(Metric(
    "ranking_loss", "share of (positive, negative) pairs ordered wrongly; a tie is wrong", "lower",
    lambda key, c: rx.ranking_loss(
        c.truth, n_labels=c.n_labels, positives_only=c.rows.positives_only
    ),
    RANKING_VIEW, "ranking_loss", needs_label_space=True,
))  # fmt: skip
register(Metric(
    "lwlrap", "label-weighted LRAP: LRAP weighted by each sample's positives", "higher",
    lambda key, c: rx.lwlrap(c.truth), RANKING_VIEW, "lwlrap", weighting="positives",
    needs_label_space=True,
))  # fmt: skip


def _cut_off(key: MetricKey, c: Context) -> int | None:
    """The key's cut-off, None where it cuts nothing: a K at or past a top-k table's label space
    (``n_labels``), which holds every position a sample has."""
    return None if key.k is None or c.n_labels is not None and key.k >= c.n_labels else key.k


register(Metric(
    "dcg", "discounted cumulative gain, graded truth, tie-averaged", "higher",
    lambda key, c: rx.dcg(c.truth, k=_cut_off(key, c), log_base=c.log_base), GAIN_VIEW, "dcg",
    takes_k=True, binary_truth=False, scales_with_log_base=True, needs_label_space=True,
))  # fmt: skip
register(Metric(
    "ndcg", "dcg over the ideal dcg", "higher",
    lambda key, c: rx.ndcg(c.truth, k=_cut_off(key, c), binary_truth=c.binary_truth), GAIN_VIEW,
    "ndcg", takes_k=True, binary_truth=False, min_labels=2, needs_label_space=True,
))  # fmt: skip

RANKING_METRICS = tuple(REGISTRY)
DEFAULT_METRICS = RANKING_METRICS


def _predicted(c: Context) -> pl.Expr:
    return cx.predicted(c.score, pred=c.pred, threshold=c.threshold)


def _sample_score(kind: str, c: Context) -> pl.Expr:
    return cx.sample_score(kind, c.truth, _predicted(c), beta=c.beta, zero_division=c.zero_division)


def _set_metric(
    name: str,
    description: str,
    better: Literal["higher", "lower"],
    polars: Callable[[MetricKey, Context], pl.Expr],
    ill_defined: str | None = None,
) -> None:
    register(Metric(
        name, description, better, polars, SET_VIEW, name,
        family="classification", ill_defined=ill_defined,
    ))  # fmt: skip


_set_metric(
    "hamming_loss", "share of labels predicted wrongly", "lower",
    lambda key, c: cx.hamming_loss(c.truth, _predicted(c)),
)  # fmt: skip
_set_metric(
    "subset_accuracy", "share of samples whose predicted set is the true set", "higher",
    lambda key, c: cx.subset_accuracy(c.truth, _predicted(c)),
)  # fmt: skip
_set_metric(
    "zero_one_loss", "share of samples whose predicted set is not the true set", "lower",
    lambda key, c: cx.zero_one_loss(c.truth, _predicted(c)),
)  # fmt: skip
_set_metric(
    "precision_samples", "per sample |true and predicted| / |predicted|, averaged", "higher",
    lambda key, c: _sample_score("precision", c), "no_predicted",
)  # fmt: skip
_set_metric(
    "recall_samples", "per sample |true and predicted| / |true|, averaged", "higher",
    lambda key, c: _sample_score("recall", c), "no_true",
)  # fmt: skip
_set_metric(
    "f1_samples", "per sample F1 of the predicted and true sets, averaged", "higher",
    lambda key, c: _sample_score("f1", c), "neither",
)  # fmt: skip
_set_metric(
    "fbeta_samples", "per sample F-beta (beta=) of the predicted and true sets, averaged", "higher",
    lambda key, c: _sample_score("fbeta", c), "neither",
)  # fmt: skip
_set_metric(
    "jaccard_samples", "per sample |true and predicted| / |true or predicted|, averaged", "higher",
    lambda key, c: _sample_score("jaccard", c), "neither",
)  # fmt: skip


# The counts behind the _micro averages, per sample: their means are the average counts per
# sample, and their per-sample values are what a bootstrap of a _micro average resamples.
def _count(kind: str) -> Callable[[MetricKey, Context], pl.Expr]:
    return lambda key, c: cx.count(kind, c.truth, _predicted(c))


for _kind, _name, _text, _better in (
    ("tp", "true_positives", "true labels predicted, per sample", "higher"),
    ("fp", "false_positives", "false labels predicted, per sample", "lower"),
    ("fn", "false_negatives", "true labels not predicted, per sample", "lower"),
):
    register(Metric(
        _name, _text, _better, _count(_kind), SET_VIEW, _kind,  # type: ignore[arg-type]
        family="classification",
    ))  # fmt: skip
COUNT_KEYS = ("true_positives", "false_positives", "false_negatives")
_SCORES = {
    "precision": "|true and predicted| / |predicted|",
    "recall": "|true and predicted| / |true|",
    "f1": "F1",
    "fbeta": "F-beta (beta=)",
    "jaccard": "|true and predicted| / |true or predicted|",
}
_AVERAGES = {
    "micro": "of the counts pooled over all labels",
    "macro": "per label, averaged over the labels",
    "weighted": "per label, averaged weighted by the labels' support",
}
_CURVES = {
    "average_precision": "average precision (area under the precision-recall steps)",
    "roc_auc": "area under the ROC curve (NaN: a one-class label)",
}
# (names, the per-label table they reduce, its view): every score under every average.
_LABEL_FAMILIES: tuple[tuple[dict[str, str], Literal["labels", "curves"], str], ...] = (
    (_SCORES, "labels", LABEL_VIEW),
    (_CURVES, "curves", SCORE_VIEW),
)
for _scores, _reduction, _view in _LABEL_FAMILIES:
    for _name, _what in _scores.items():
        for _average, _how in _AVERAGES.items():
            register(Metric(
                f"{_name}_{_average}", f"{_what} {_how}", "higher", None, _view, "",
                family="classification", reduction=_reduction,
                label_score=(_name, _average),
            ))  # fmt: skip

register(Metric(
    "average_precision_samples", "per sample average precision over its labels, averaged",
    "higher", lambda key, c: rx.average_precision(c.truth), RANKING_VIEW, "average_precision",
    family="classification", needs_label_space=True, ill_defined="no_positives",
))  # fmt: skip
register(Metric(
    "roc_auc_samples", "per sample ROC AUC over its labels, averaged (NaN: a one-class sample)",
    "higher",
    lambda key, c: rx.roc_auc(c.truth, n_labels=c.n_labels, positives_only=c.rows.positives_only),
    RANKING_VIEW, "roc_auc", family="classification", undefined="nan", needs_label_space=True,
    ill_defined="one_class",
))  # fmt: skip
CLASSIFICATION_METRICS = tuple(m for m in REGISTRY if REGISTRY[m].family == "classification")

# The probability metrics (metrics.probabilities): a loss per cell, averaged per sample, over
# the pooled cells, or per label from the score counts.
_LOSSES = {
    "log_loss": "cross-entropy of each score read as a probability (clipped to [eps, 1 - eps])",
    "brier": "squared error of each score read as a probability",
}
_LOSS_AVERAGES = {
    "micro": "mean over all cells",
    "macro": "mean per label, averaged over the labels",
    "weighted": "mean per label, averaged weighted by the labels' support",
}


def _sample_loss(kind: str) -> Callable[[MetricKey, Context], pl.Expr]:
    return lambda key, c: px.sample_loss(kind, c.truth, c.score)


for _name, _what in _LOSSES.items():
    register(Metric(
        f"{_name}_samples", f"{_what}: mean per sample, averaged", "lower", _sample_loss(_name),
        PROBABILITY_VIEW, _name, family="classification", probabilities=True,
    ))  # fmt: skip
    for _average, _how in _LOSS_AVERAGES.items():
        register(Metric(
            f"{_name}_{_average}", f"{_what}: {_how}", "lower", None, SCORE_VIEW, "",
            family="classification", reduction="curves", label_score=(_name, _average),
            probabilities=True,
        ))  # fmt: skip
# Calibration: the score counts binned (metrics.probabilities); the key's @K is the number of
# bins, 15 without: equal-width (ece, mce) or equal-mass (ece_quantile, mce_quantile).
_CALIBRATION = {
    "ece": "expected calibration error: the weighted mean gap between a bin's mean score and "
    "its share of positives",
    "mce": "maximum calibration error: the largest gap between a bin's mean score and its "
    "share of positives",
}
_BINS = {"": "@K equal-width bins", "_quantile": "@K equal-mass bins (score quantiles)"}
for _name, _what in _CALIBRATION.items():
    for _strategy, _bins in _BINS.items():
        for _average, _how in _LOSS_AVERAGES.items():
            register(Metric(
                f"{_name}{_strategy}_{_average}",
                f"{_what}, over {_bins} (default 15); {_how.replace('mean', 'value', 1)}",
                "lower", None, SCORE_VIEW, "", family="classification", reduction="curves",
                label_score=(f"{_name}{_strategy}", _average), probabilities=True, takes_k=True,
            ))  # fmt: skip
PROBABILITY_METRICS = tuple(m for m in REGISTRY if REGISTRY[m].probabilities)


def _k(key: MetricKey) -> int:
    assert key.k is not None  # requires_k
    return key.k


# The retrieval family's records (metrics.retrieval_registry), registered at this point of the
# registry's order: after the probability metrics, before the TREC keys.
from polars_rankmetrics.metrics import retrieval_registry  # noqa: E402, F401


# trec_eval's measures (metrics.trec), over a run joined with its qrels by trec_eval's rules
# (engines.topk.trec_tables), each key asked for by trec_eval's or ir_measures' name
# (trec_key); each is a column of a view of sql/19_trec_per_sample.sql, so runs on every engine.
def _level(key: MetricKey, c: Context) -> int:
    level = key.param("rel", c.relevance_level)
    assert isinstance(level, int)
    return level


def _trec(
    name: str, description: str, polars: Callable[[MetricKey, Context, int], pl.Expr], *,
    takes_k: bool = False, requires_k: bool = False, geometric: bool = False,
    summed: bool = False, sql: str, view: str = TREC_VIEW,
    undefined: Literal["skip", "nan"] = "skip",
) -> None:  # fmt: skip
    """A TREC key; ``sql``: its column of the view ``view`` of sql/19_trec_per_sample.sql, read
    at the row of the key's parameters (:attr:`MetricKey.sql_row`); ``undefined="nan"``: a
    NULL there is trec_eval's NaN (0 / 0), which makes the mean NaN."""
    register(Metric(
        name, description, "higher",
        lambda key, c: polars(key, c, _level(key, c)), view, sql,
        family="trec",
        takes_k=takes_k, requires_k=requires_k, binary_truth=False, geometric=geometric,
        summed=summed, undefined=undefined,
    ))  # fmt: skip


def _counted(kind: str) -> Callable[[MetricKey, Context, int], pl.Expr]:
    return lambda key, c, level: tx.count(kind, c.truth, c.score, level)


def _cut(function: Callable[[str, str, int, int], pl.Expr]) -> Callable[..., pl.Expr]:
    return lambda key, c, level: function(c.truth, c.score, level, _k(key))


for _kind, _text in (
    ("num_q", "topics evaluated"),
    ("num_ret", "documents retrieved"),
    ("num_rel", "relevant documents (R)"),
    ("num_rel_ret", "relevant documents retrieved"),
    ("num_nonrel_judged_ret", "judged non-relevant documents retrieved"),
):
    _trec(
        f"trec_{_kind}", f"{_text}, per topic (summed over topics by trec_eval)",
        _counted(_kind), summed=True, sql=_kind,
    )  # fmt: skip
_trec(
    "trec_map", "average precision (map; map_cut_K with @K)",
    lambda key, c, level: tx.average_precision(c.truth, c.score, level, key.k), takes_k=True,
    sql="ap",
)  # fmt: skip
_trec(
    "trec_gm_map", "average precision, geometric mean over topics (floor 1e-5)",
    lambda key, c, level: tx.geometric(tx.average_precision(c.truth, c.score, level)),
    geometric=True, sql="gm_map",
)  # fmt: skip


def _plain(function: Callable[[str, str, int], pl.Expr]) -> Callable[..., pl.Expr]:
    return lambda key, c, level: function(c.truth, c.score, level)


for _name, _text, _plain_function in (
    ("trec_rprec", "precision after R documents", tx.r_precision),
    ("trec_bpref", "binary preference over judged documents", tx.bpref),
    ("trec_recip_rank", "reciprocal rank of the first relevant document", tx.reciprocal_rank),
    ("trec_infap", "inferred average precision over a sampled pool", tx.inferred_ap),
    ("trec_bing", "over R, 1 / log2(2 + non-relevant above) summed over the relevant retrieved",
     tx.binary_gain),
):  # fmt: skip
    _trec(_name, _text, _plain(_plain_function), sql=_name.removeprefix("trec_"))
_trec(
    "trec_gm_bpref", "bpref, geometric mean over topics (floor 1e-5)",
    lambda key, c, level: tx.geometric(tx.bpref(c.truth, c.score, level)), geometric=True,
    sql="gm_bpref",
)  # fmt: skip
_trec(
    "trec_11pt_avg", "interpolated precision averaged over recall 0, 0.1, ..., 1 (or recalls=)",
    lambda key, c, level: tx.eleven_point_average(
        c.truth, c.score, level, _points(key), empty_nan=c.judged_only
    ),
    sql="iprec", undefined="nan",
)  # fmt: skip


def _recall_point(key: MetricKey) -> float:
    recall = key.param("recall")
    assert isinstance(recall, float)
    return recall


_DEFAULTS: dict[str, float] = {"p": 0.9, "beta": 1.0}


def _points(key: MetricKey) -> tuple[float, ...]:
    points = key.param("recalls", tx.ELEVEN_POINTS)
    assert isinstance(points, tuple)
    return points


def _float(key: MetricKey, name: str) -> float:
    value = key.param(name, _DEFAULTS.get(name))
    assert isinstance(value, float)
    return value


def _coefficients(key: MetricKey) -> tuple[float, float, float, float]:
    value = key.param("coefficients", (1.0, -1.0, 0.0, 0.0))
    assert isinstance(value, tuple)
    return value


def _set(kind: str) -> Callable[[MetricKey, Context, int], pl.Expr]:
    return lambda key, c, level: tx.set_measure(kind, c.truth, c.score, level, _float(key, "beta"))


def _with_gains(
    function: Callable[[str, str, int, tuple[tuple[int, float], ...]], pl.Expr],
) -> Callable[[MetricKey, Context, int], pl.Expr]:
    return lambda key, c, level: function(c.truth, c.score, level, _gains(key))


def _gains(key: MetricKey) -> tuple[tuple[int, float], ...]:
    gains = key.param("gains", ())
    assert isinstance(gains, tuple)
    return gains


_trec(
    "trec_iprec_at_recall", "interpolated precision at a recall point (params recall=)",
    lambda key, c, level: tx.interpolated_precision(
        c.truth, c.score, level, _recall_point(key), empty_nan=c.judged_only
    ),
    sql="iprec", undefined="nan",
)  # fmt: skip
for _name, _text, _function in (
    ("trec_p", "relevant documents among the first K, over K", tx.precision),
    ("trec_recall", "relevant documents among the first K, over R", tx.recall),
    ("trec_success", "1 if a relevant document is among the first K", tx.success),
):
    _trec(
        _name, _text, _cut(_function), takes_k=True, requires_k=True,
        sql=_name.removeprefix("trec_"),
    )  # fmt: skip
_trec(
    "trec_ndcg", "nDCG with the relevance as gain (ndcg; ndcg_cut_K with @K)",
    lambda key, c, level: tx.ndcg(c.truth, c.score, level, key.k, _gains(key)), takes_k=True,
    sql="ndcg",
)  # fmt: skip
_trec(
    "trec_relative_p", "relevant documents among the first K, over min(K, R)",
    _cut(tx.relative_precision), takes_k=True, requires_k=True,
    sql="relative_p",
)  # fmt: skip
_trec(
    "trec_unj", "unjudged documents among the first K, over K", _cut(tx.unjudged),
    takes_k=True, requires_k=True, sql="unj",
)  # fmt: skip
_trec(
    "trec_judged", "judged documents (in the qrels) among the first K, over K",
    lambda key, c, level: tx.judged(c.truth, c.score, _k(key)), takes_k=True, requires_k=True,
    sql="judged",
)  # fmt: skip
_trec(
    "trec_rprec_mult", "precision after int(X R + 0.9) documents (params fraction=)",
    lambda key, c, level: tx.r_precision_multiple(c.truth, c.score, level, _float(key, "fraction")),
    sql="rprec_mult",
)  # fmt: skip
for _kind in ("set_P", "set_recall", "set_relative_P", "set_map", "set_F"):
    _trec(
        f"trec_{_kind.lower()}", f"trec_eval's {_kind} of the retrieved set, unranked",
        _set(_kind), sql=_kind.lower(),
    )  # fmt: skip
_trec(
    "trec_utility", "a rel_ret + b (ret - rel_ret) + c (R - rel_ret) + d (N + rel_ret - ret - R)",
    lambda key, c, level: tx.utility(c.truth, c.score, level, _coefficients(key)),
    sql="utility",
)  # fmt: skip
_trec(
    "trec_rbp", "rank-biased precision, gains scaled to [0, 1] (params p=, 0.9 by default)",
    lambda key, c, level: tx.rank_biased_precision(c.truth, c.score, level, _float(key, "p")),
    sql="rbp",
)  # fmt: skip
_trec(
    "trec_rbp_resid", "rank-biased precision's residual over unjudged documents (params p=)",
    lambda key, c, level: tx.rank_biased_residual(c.truth, c.score, level, _float(key, "p")),
    sql="rbp_resid",
)  # fmt: skip
_trec(
    "trec_err", "expected reciprocal rank within K (ir_measures' ERR@K, gdeval's gains)",
    lambda key, c, level: tx.expected_reciprocal_rank(c.truth, c.score, _k(key)),
    takes_k=True, requires_k=True, sql="err", view=TREC_ERR_VIEW,
)  # fmt: skip
for _name, _text, _gained in (
    ("trec_g", "trec_eval's experimental normalised gain G", tx.gain_measure),
    ("trec_ndcg_rel", "ndcg averaged over the documents of positive gain", tx.ndcg_over_relevant),
    ("trec_rndcg", "ndcg averaged over the ideal's gain-level boundaries", tx.ndcg_at_levels),
):
    _trec(
        _name, f"{_text} (params gains=)", _with_gains(_gained),
        sql=_name.removeprefix("trec_"), view=TREC_GAIN_VIEW,
        undefined="nan" if _name == "trec_rndcg" else "skip",
    )  # fmt: skip
TREC_METRICS = tuple(m for m in REGISTRY if REGISTRY[m].family == "trec")


@dataclass(frozen=True)
class TrecRow:
    """The parameters a TREC key's SQL value is computed with (one row of
    ``rankmetrics_trec_parameters`` and its points and gains, sql/19_trec_per_sample.sql):
    the cut-off (None: none), the relevance level, rbp's persistence ``p``, Rprec_mult's
    ``fraction``, set_F's ``beta``, utility's ``coefficients``, the recall ``points`` of
    iprec_at_recall and 11pt_avg, and ndcg's ``gains``; the defaults are trec_eval's."""

    cut: int | None = None
    level: int = 1
    p: float = 0.9
    fraction: float | None = None
    beta: float = 1.0
    coefficients: tuple[float, float, float, float] = (1.0, -1.0, 0.0, 0.0)
    points: tuple[float, ...] = ()
    gains: tuple[tuple[int, float], ...] = ()


def trec_row(key: MetricKey, relevance_level: int = 1) -> TrecRow:
    """The parameters of TREC key ``key`` in an evaluation at ``relevance_level`` (the level
    of a key without ``rel``)."""
    points: tuple[float, ...] = ()
    if key.name == "trec_iprec_at_recall":
        points = (_recall_point(key),)
    elif key.name == "trec_11pt_avg":
        points = _points(key)
    fraction = key.param("fraction")
    level = key.param("rel", relevance_level)
    assert isinstance(level, int) and (fraction is None or isinstance(fraction, float))
    return TrecRow(
        key.k, level, _float(key, "p"), fraction, _float(key, "beta"), _coefficients(key),
        points, _gains(key),
    )  # fmt: skip


# The names that ask for a TREC key: trec_eval's (as it prints them) and ir_measures'.
_TREC_NAMES = {
    "num_q": "trec_num_q", "num_ret": "trec_num_ret", "num_rel": "trec_num_rel",
    "num_rel_ret": "trec_num_rel_ret", "num_nonrel_judged_ret": "trec_num_nonrel_judged_ret",
    "gm_map": "trec_gm_map", "Rprec": "trec_rprec", "bpref": "trec_bpref",
    "gm_bpref": "trec_gm_bpref", "recip_rank": "trec_recip_rank", "infAP": "trec_infap",
    "11pt_avg": "trec_11pt_avg", "set_P": "trec_set_p", "set_recall": "trec_set_recall",
    "set_relative_P": "trec_set_relative_p", "set_map": "trec_set_map", "set_F": "trec_set_f",
    "utility": "trec_utility", "binG": "trec_bing", "rbp": "trec_rbp",
    "rbp_resid": "trec_rbp_resid", "G": "trec_g", "ndcg_rel": "trec_ndcg_rel",
    "Rndcg": "trec_rndcg", "SetP": "trec_set_p", "SetR": "trec_set_recall",
    "SetF": "trec_set_f", "SetAP": "trec_set_map",
    "NumQ": "trec_num_q", "NumRet": "trec_num_ret", "NumRel": "trec_num_rel",
    "NumRelRet": "trec_num_rel_ret", "AP": "trec_map", "RR": "trec_recip_rank",
    "Bpref": "trec_bpref", "nDCG": "trec_ndcg",
}  # fmt: skip
SHARED_NAMES = {"map": "trec_map", "ndcg": "trec_ndcg"}
"""trec_eval's names that are the library's keys too: trec_eval's measure in a list of keys
that holds a TREC key (:func:`parse_keys`), the library's otherwise."""
_TREC_CUTS = {
    "P": "trec_p", "recall": "trec_recall", "success": "trec_success", "map_cut": "trec_map",
    "ndcg_cut": "trec_ndcg", "relative_P": "trec_relative_p", "unj": "trec_unj",
}  # fmt: skip
_IR_MEASURES_CUTS = {
    "P": "trec_p", "R": "trec_recall", "Success": "trec_success", "AP": "trec_map",
    "nDCG": "trec_ndcg", "Judged": "trec_judged", "ERR": "trec_err",
}  # fmt: skip
# ir_measures' measures that read a relevance level (rel=).
_TAKES_REL = {"trec_p", "trec_recall", "trec_success", "trec_map", "trec_rprec",
              "trec_recip_rank", "trec_bpref", "trec_num_rel", "trec_num_rel_ret"}  # fmt: skip
_IR_MEASURES = re.compile(r"^([A-Za-z]+)(?:\(rel=([0-9]+)\))?(?:@([0-9.]+))?$")


def trec_key(text: str) -> MetricKey | None:
    """The TREC key that ``text`` names, None if none: trec_eval's printed names (``P_5``,
    ``recall_100``, ``map_cut_10``, ``ndcg_cut_10``, ``success_1``, ``iprec_at_recall_0.50``,
    ``gm_map``, ``Rprec``, ``bpref``, ``recip_rank``, ``infAP``, ``gm_bpref``, ``11pt_avg``,
    ``num_q``, ``num_ret``, ``num_rel``, ``num_rel_ret``, ``num_nonrel_judged_ret``) and
    ir_measures' (``P@5``, ``P(rel=2)@5``, ``R@100``, ``Success@1``, ``AP``, ``AP@10``,
    ``RR``, ``nDCG``, ``nDCG@10``, ``Bpref``, ``infAP``, ``Rprec``, ``IPrec@0.5``, ``NumQ``,
    ``NumRet``, ``NumRel``, ``NumRelRet``, ``ERR@20``). ``map`` and ``ndcg`` name the library's
    own keys here; :func:`parse_keys` reads them as trec_eval's beside a TREC key."""
    if text in _TREC_NAMES:
        return MetricKey(_TREC_NAMES[text], alias=text)
    cut = re.fullmatch(r"(P|recall|success|map_cut|ndcg_cut|relative_P|unj)_([0-9]+)", text)
    if cut is not None and int(cut.group(2)) > 0:
        return MetricKey(_TREC_CUTS[cut.group(1)], int(cut.group(2)), alias=text)
    point = re.fullmatch(r"iprec_at_recall_([0-9]*\.?[0-9]+)", text)
    if point is not None and float(point.group(1)) <= 1:
        return MetricKey("trec_iprec_at_recall", params=(("recall", float(point.group(1))),),
                         alias=text)  # fmt: skip
    multiple = re.fullmatch(r"Rprec_mult_([0-9]*\.?[0-9]+)", text)
    if multiple is not None:
        return MetricKey("trec_rprec_mult", params=(("fraction", float(multiple.group(1))),),
                         alias=text)  # fmt: skip
    persistence = re.fullmatch(r"(RBP|rbp|rbp_resid)\(p=(0?\.[0-9]+)\)", text)
    if persistence is not None:
        name = "trec_rbp_resid" if persistence.group(1) == "rbp_resid" else "trec_rbp"
        return MetricKey(name, params=(("p", float(persistence.group(2))),), alias=text)
    if text == "RBP":  # ir_measures' default persistence, 0.8 (trec_eval's is 0.9)
        return MetricKey("trec_rbp", params=(("p", 0.8),), alias=text)
    match = _IR_MEASURES.match(text)
    if match is None:
        return None
    name, rel, cutoff = match.groups()
    params: tuple[tuple[str, object], ...] = () if rel is None else (("rel", int(rel)),)
    if name == "IPrec" and rel is None and cutoff is not None and float(cutoff) <= 1:
        return MetricKey("trec_iprec_at_recall", params=(("recall", float(cutoff)),),
                         alias=text)  # fmt: skip
    internal = _IR_MEASURES_CUTS.get(name) if cutoff is not None else _TREC_NAMES.get(name)
    if internal is None or (rel is not None and internal not in _TAKES_REL):
        return None
    if cutoff is not None and not cutoff.isdigit() or cutoff is not None and int(cutoff) < 1:
        return None
    return MetricKey(internal, None if cutoff is None else int(cutoff), params, alias=text)


def known_names() -> list[str]:
    """Every metric name a key may start with: the registry's and the TREC names (what an
    unknown name is compared with)."""
    cuts = [f"{name}_10" for name in _TREC_CUTS] + [f"{name}@10" for name in _IR_MEASURES_CUTS]
    return [*REGISTRY, *_TREC_NAMES, *cuts, "iprec_at_recall_0.50", "IPrec@0.5"]
