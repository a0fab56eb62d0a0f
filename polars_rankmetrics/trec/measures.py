"""trec_eval's ``-m`` syntax (``official``, ``all_trec``, ``P``, ``P.5,10``, ``ndcg_cut.10,20``,
``ndcg.1=3,2=9``, ``iprec_at_recall.0,.5``) read into the measures to compute, in trec_eval's
print order, each with the name trec_eval prints (``P_5``), the TREC key that computes it
(:mod:`polars_rankmetrics.metrics.trec`) and how its topics' values summarise (mean,
geometric mean, sum, or none).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from polars_rankmetrics.metrics.registry import MetricKey

Summary = Literal["mean", "geometric", "sum", "text"]

_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
_RECALLS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


@dataclass(frozen=True)
class Family:
    """One trec_eval measure family: the TREC metric computing it (None: ``runid``, text),
    its parameters (``"cutoffs"``: integer cut-offs, ``"recalls"``: recall points,
    ``"gains"``: ``level=gain`` pairs, ``"none"``), their defaults, how its topics' values
    summarise, and whether trec_eval prints a value per topic (``-q``)."""

    metric: str | None
    params: Literal[
        "cutoffs",
        "recalls",
        "points",
        "fractions",
        "gains",
        "p",
        "coefficients",
        "beta",
        "length",
        "none",
    ] = "none"
    defaults: tuple[float, ...] = ()
    summary: Summary = "mean"
    per_topic: bool = True


# In trec_eval's print order (measures.c, te_trec_measures).
FAMILIES: dict[str, Family] = {
    "runid": Family(None, summary="text", per_topic=False),
    "num_q": Family("trec_num_q", summary="sum", per_topic=False),
    "num_ret": Family("trec_num_ret", summary="sum"),
    "num_rel": Family("trec_num_rel", summary="sum"),
    "num_rel_ret": Family("trec_num_rel_ret", summary="sum"),
    "map": Family("trec_map"),
    "gm_map": Family("trec_gm_map", summary="geometric", per_topic=False),
    "Rprec": Family("trec_rprec"),
    "bpref": Family("trec_bpref"),
    "recip_rank": Family("trec_recip_rank"),
    "iprec_at_recall": Family("trec_iprec_at_recall", "recalls", _RECALLS),
    "P": Family("trec_p", "cutoffs", _CUTOFFS),
    "relstring": Family(None, "length", (10,), summary="text"),
    "recall": Family("trec_recall", "cutoffs", _CUTOFFS),
    "infAP": Family("trec_infap"),
    "gm_bpref": Family("trec_gm_bpref", summary="geometric", per_topic=False),
    "Rprec_mult": Family("trec_rprec_mult", "fractions", tuple(i / 5 for i in range(1, 11))),
    "utility": Family("trec_utility", "coefficients"),
    "11pt_avg": Family("trec_11pt_avg", "points"),
    "binG": Family("trec_bing"),
    "G": Family("trec_g", "gains"),
    "ndcg": Family("trec_ndcg", "gains"),
    "ndcg_rel": Family("trec_ndcg_rel", "gains"),
    "Rndcg": Family("trec_rndcg", "gains"),
    "ndcg_cut": Family("trec_ndcg", "cutoffs", _CUTOFFS),
    "map_cut": Family("trec_map", "cutoffs", _CUTOFFS),
    "relative_P": Family("trec_relative_p", "cutoffs", _CUTOFFS),
    "success": Family("trec_success", "cutoffs", (1, 5, 10)),
    "set_P": Family("trec_set_p"),
    "set_relative_P": Family("trec_set_relative_p"),
    "set_recall": Family("trec_set_recall"),
    "set_map": Family("trec_set_map"),
    "set_F": Family("trec_set_f", "beta"),
    "num_nonrel_judged_ret": Family("trec_num_nonrel_judged_ret", summary="sum"),
    "rbp": Family("trec_rbp", "p"),
    "rbp_resid": Family("trec_rbp_resid", "p"),
    "unj": Family("trec_unj", "cutoffs", (5, 10, 20)),
}
"""The measure families computed, by trec_eval's name."""

OFFICIAL = (
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
    "recip_rank", "iprec_at_recall", "P",
)  # fmt: skip
"""trec_eval's ``official`` set (its default)."""
ALL_TREC = (
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
    "recip_rank", "iprec_at_recall", "P", "relstring", "recall", "unj", "rbp", "rbp_resid",
    "infAP", "gm_bpref", "utility", "11pt_avg", "ndcg", "relative_P", "Rprec_mult", "success",
    "map_cut", "ndcg_cut", "ndcg_rel", "Rndcg", "binG", "G", "set_P", "set_recall",
    "set_relative_P", "set_map", "set_F", "num_nonrel_judged_ret",
)  # fmt: skip
"""trec_eval 10.0's ``all_trec`` set (``measures.c``)."""
_SETS = {"official": OFFICIAL, "all_trec": ALL_TREC}


@dataclass(frozen=True)
class Measure:
    """One measure to print: the name trec_eval prints, its TREC key (None for the text
    measures, ``runid`` and ``relstring``), how its topics' values summarise, whether a value
    is printed per topic, and ``relstring``'s length."""

    name: str
    key: MetricKey | None
    summary: Summary
    per_topic: bool
    length: int = 0


def measures(requested: str | Sequence[str]) -> list[Measure]:
    """The measures of ``requested`` (trec_eval's ``-m`` arguments: a set name, a family, or a
    family with parameters after a dot), each once, in trec_eval's print order; a family asked
    for twice takes the parameters of its first request that gives some, as trec_eval does. Raises
    ``ValueError`` for an unknown name (naming the known ones) or bad parameters."""
    wanted: dict[str, str | None] = {}
    for text in [requested] if isinstance(requested, str) else list(requested):
        name, dot, params = text.partition(".")
        if name in _SETS and not dot:
            for family in _SETS[name]:
                wanted.setdefault(family, None)
            continue
        if name not in FAMILIES:
            known = ", ".join([*_SETS, *FAMILIES])
            raise ValueError(f"measure {text!r}: unknown; the measures are {known}")
        if wanted.get(name) is None:  # explicit parameters win over a set's defaults
            wanted[name] = params if dot else None
    return [m for family in FAMILIES if family in wanted for m in _family(family, wanted[family])]


def _family(name: str, params: str | None) -> list[Measure]:
    family = FAMILIES[name]
    if family.params == "length":
        value = _floats(name, params, 1)[0] if params else family.defaults[0]
        if value < 0 or value != int(value):
            raise ValueError(f"measure {name!r} takes a length, a whole number, not {params!r}")
        printed = f"{name}_{params}" if params else name
        return [Measure(printed, None, family.summary, family.per_topic, int(value))]
    if family.metric is None:
        return [Measure(name, None, family.summary, family.per_topic)]

    def measure(printed: str, k: int | None = None, *params: tuple[str, object]) -> Measure:
        key = MetricKey(family.metric or "", k, params, alias=printed)
        return Measure(printed, key, family.summary, family.per_topic)

    if family.params == "cutoffs":
        cuts = _cutoffs(name, params) if params else [int(c) for c in family.defaults]
        return [measure(f"{name}_{k}", k) for k in cuts]
    if family.params in ("recalls", "fractions"):
        points = _recalls(name, params, family.params) if params else list(family.defaults)
        what = "recall" if family.params == "recalls" else "fraction"
        return [measure(f"{name}_{x:3.2f}", None, (what, x)) for x in points]
    if family.params == "points" and params:
        averaged = tuple(_recalls(name, params, "recalls"))
        return [measure(f"{name}_{params}", None, ("recalls", averaged))]
    if family.params == "gains" and params:
        return [measure(f"{name}_{params}", None, ("gains", _gains(name, params)))]
    if family.params == "p" and params:
        return [measure(f"{name}_{params}", None, ("p", _persistence(name, params)))]
    if family.params in ("coefficients", "beta") and params:
        values = _floats(name, params, 4 if family.params == "coefficients" else 1)
        given: object = values if family.params == "coefficients" else values[0]
        return [measure(f"{name}_{params}", None, (family.params, given))]
    if params:
        raise ValueError(f"measure {name!r} takes no parameters, not {params!r}")
    return [measure(name)]


def _cutoffs(name: str, params: str) -> list[int]:
    """trec_eval's integer cut-offs: positive, sorted, each once; a fraction is truncated, as
    trec_eval's ``atol`` reads it (``23.4``: 23)."""
    try:
        cuts = sorted({int(float(p)) for p in params.split(",")})
    except ValueError:
        cuts = []
    if not cuts or cuts[0] < 1:
        raise ValueError(f"measure {name!r}: cut-offs must be positive integers, not {params!r}")
    return cuts


def _recalls(name: str, params: str, kind: str) -> list[float]:
    """Recall points in [0, 1], or fractions of R (``Rprec_mult``) >= 0: sorted, each once."""
    try:
        points = sorted({float(p) for p in params.split(",")})
    except ValueError:
        points = []
    top = 1.0 if kind == "recalls" else float("inf")
    if not points or points[0] < 0 or points[-1] > top:
        what = "recall points must be in [0, 1]" if top == 1 else "fractions must be >= 0"
        raise ValueError(f"measure {name!r}: {what}, not {params!r}")
    return points


def _floats(name: str, params: str, n: int) -> tuple[float, ...]:
    try:
        values = tuple(float(p) for p in params.split(","))
    except ValueError:
        values = ()
    if len(values) != n:
        raise ValueError(f"measure {name!r} takes {n} number(s), not {params!r}")
    return values


def _persistence(name: str, params: str) -> float:
    """``p=0.8``: the persistence, in (0, 1)."""
    key, _, value = params.partition("=")
    try:
        p = float(value)
    except ValueError:
        p = -1.0
    if key != "p" or not 0 < p < 1:
        raise ValueError(f"measure {name!r}: its parameter is p=X, 0 < X < 1, not {params!r}")
    return p


def _gains(name: str, params: str) -> tuple[tuple[int, float], ...]:
    """``level=gain`` pairs, as ``ndcg.1=3,2=9``."""
    pairs = []
    for pair in params.split(","):
        level, _, gain = pair.partition("=")
        try:
            pairs.append((int(level), float(gain)))
        except ValueError:
            raise ValueError(
                f"measure {name!r}: parameters are level=gain pairs, not {params!r}"
            ) from None
    return tuple(pairs)
