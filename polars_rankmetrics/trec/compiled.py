"""trec_eval's measures of a run file read by pieces of whole topics, in compiled code: each
piece of the file's text split into fields (:func:`~polars_rankmetrics.inputs.run_lines.
split_run`), its topics put in trec_eval's order and given their codes
(:func:`~polars_rankmetrics.trec.positions.ranked_codes`), then every key of every topic in
one pass (:func:`~polars_rankmetrics.metrics.trec_kernel.evaluate_topics`). The pieces are
evaluated on every core, a few at a time (the kernels release the GIL), so that memory holds a
few pieces, not the file."""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import polars as pl

from polars_rankmetrics.engines.key_rules import TrecOptions
from polars_rankmetrics.inputs import run_lines
from polars_rankmetrics.inputs.trec import TrecRun, Unbucketed
from polars_rankmetrics.metrics import trec_kernel
from polars_rankmetrics.metrics.registry import MetricKey
from polars_rankmetrics.trec import positions

_Pairs = list[tuple[str, str]]


def evaluate(
    run: TrecRun, qrels: pl.DataFrame, keys: Sequence[MetricKey], trec: TrecOptions
) -> pl.DataFrame | None:
    """Each (run, topic) pair's values of ``keys`` (:func:`~polars_rankmetrics.evaluate`'s
    ``per_sample`` table, for the topics the qrels judge) of the run file ``run`` against
    ``qrels`` (columns ``sample``, ``label``, ``truth``). None where the qrels are not plain
    (string docnos, integer relevances, no null), where a piece of the file is not of the
    simplest form (:meth:`~polars_rankmetrics.inputs.trec.TrecRun.texts`, and six fields a
    line), holds a NaN score, a docno twice in a topic or a (tag, topic) pair of another
    piece, where the qrels judge a docno twice in a topic, or where no topic is judged: the
    whole path names the problem."""
    schema = qrels.schema
    plain = schema.get("label") == pl.String and (schema.get("truth") or pl.Null).is_integer()
    if not plain or qrels.select("sample", "label", "truth").null_count().sum_horizontal()[0]:
        return None
    spans = topic_spans(qrels)
    if spans is None:
        qrels = qrels.sort("sample", maintain_order=True)
        spans = topic_spans(qrels)
        assert spans is not None
    labels = positions.strings(qrels.get_column("label").to_arrow())
    relevance = qrels.get_column("truth").cast(pl.Int64).to_numpy()
    piece = _Piece(labels, relevance, spans, keys, trec)
    seen: set[tuple[str, str]] = set()
    parts: list[pl.DataFrame] = []
    workers = max(1, min(os.cpu_count() or 1, 4))
    with ThreadPoolExecutor(workers) as pool:
        running: deque[Future[tuple[_Pairs, pl.DataFrame] | None]] = deque()
        try:
            for text in run.texts():
                running.append(pool.submit(piece, text))
                while len(running) > workers:
                    if not _add(running.popleft().result(), seen, parts):
                        return None
            while running:
                if not _add(running.popleft().result(), seen, parts):
                    return None
        except Unbucketed:
            return None
        finally:
            for future in running:
                future.cancel()
    evaluated = pl.concat(parts, how="vertical") if parts else None
    return evaluated if evaluated is not None and evaluated.height else None


def _add(
    done: tuple[_Pairs, pl.DataFrame] | None, seen: set[tuple[str, str]],
    parts: list[pl.DataFrame],
) -> bool:  # fmt: skip
    """Adds a piece's values to ``parts``; False where it could not be read, or holds a
    (tag, topic) pair of an earlier piece."""
    if done is None:
        return False
    heads, values = done
    if not seen.isdisjoint(heads):
        return False
    seen.update(heads)
    parts.append(values)
    return True


@dataclass(frozen=True)
class _Piece:
    """The evaluation of one piece of the run file's text against the qrels."""

    labels: tuple[np.ndarray, np.ndarray, np.ndarray]  # the qrels' docnos (strings())
    relevance: np.ndarray
    spans: dict[str, tuple[int, int]]
    keys: Sequence[MetricKey]
    trec: TrecOptions

    def __call__(self, part: bytes) -> tuple[_Pairs, pl.DataFrame] | None:
        """The piece's (tag, topic) pairs and each judged pair's values; None where it is not
        read so (:func:`evaluate`)."""
        try:
            part.decode()
        except UnicodeDecodeError:
            return None
        text = np.frombuffer(part, dtype=np.uint8)
        places, scores, parsed, ok = run_lines.split_run(text)
        if not ok:
            return None
        if not parsed.all():
            parsed_again = _scores(part)
            if parsed_again is None:
                return None
            scores = parsed_again
        starts = positions.segments(places, text)
        heads = [
            (part[places[i, 4] : places[i, 5]].decode(), part[places[i, 0] : places[i, 1]].decode())
            for i in starts[:-1]
        ]
        if len(set(heads)) != len(heads):
            return None  # a (tag, topic) pair in two places of the piece
        found = [self.spans.get(topic, (0, -1)) for _, topic in heads]
        span = np.array([[lo for lo, _ in found], [lo + max(n, 0) for lo, n in found]])
        span = span.astype(np.int64).reshape(2, len(found))
        qrels_begin, qrels_end, qrels_data = self.labels
        relevance = self.relevance
        max_docs = -1 if self.trec.max_docs is None else self.trec.max_docs
        codes, code_starts, ok = positions.ranked_codes(
            starts, scores, places[:, 2], places[:, 3], text, span, qrels_begin, qrels_end,
            qrels_data, relevance, max_docs, self.trec.judged_only,
        )  # fmt: skip
        if not ok:
            return None
        values = trec_kernel.evaluate_topics(
            codes, code_starts, relevance, span, self.keys, self.trec.relevance_level,
            judged_only=self.trec.judged_only,
        )  # fmt: skip
        names = pl.DataFrame(heads, schema=["run", "sample"], orient="row")
        table = pl.DataFrame(values, schema=[str(key) for key in self.keys], orient="row")
        kept = pl.Series([n >= 0 for _, n in found])
        return heads, pl.concat([names, table], how="horizontal").filter(kept)


def _scores(part: bytes) -> np.ndarray | None:
    """The scores of a piece of a run file by Polars' parser; None where one is not a
    number."""
    try:
        frame = pl.read_csv(
            part, separator=" ", has_header=False, columns=[4], quote_char=None,
            infer_schema=False,
        )  # fmt: skip
    except pl.exceptions.PolarsError:
        return None
    column = frame.to_series().cast(pl.Float64, strict=False)
    return None if column.null_count() else column.to_numpy()


def topic_spans(qrels: pl.DataFrame) -> dict[str, tuple[int, int]] | None:
    """Where each topic's rows of ``qrels`` are (offset, length), where each topic's rows come
    one after another (as in a qrels file in topic order): a bucket's qrels are then slices of
    them, not a copy of the whole filtered. None otherwise."""
    starts = pl.col("sample").ne_missing(pl.col("sample").shift(1))
    at = qrels.select(pl.int_range(pl.len()).alias("at"), "sample").filter(starts)
    if at.height != qrels.get_column("sample").n_unique():
        return None
    ends = [*at.get_column("at").to_list()[1:], qrels.height]
    return {
        str(topic): (start, end - start)
        for (start, topic), end in zip(at.iter_rows(), ends, strict=True)
    }
