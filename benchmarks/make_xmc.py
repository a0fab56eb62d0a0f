"""Generate an extreme-classification-sized top-k run: predictions, truth table, propensities.

    python benchmarks/make_xmc.py [--samples 1000000] [--depth 100] [--labels 3000000]

Per sample: 1-10 true labels drawn from a Zipf-like label distribution (log-uniform over the
label ids, so label 0 is the most frequent), and ``depth`` predictions with float32 scores of 3
decimals (ties happen), each true label predicted with probability 0.6, mostly near the top.
Written to ``benchmarks/out/xmc-<samples>/`` (``--small``: a tiny run in a temporary
directory) as ``predictions/part-*.parquet`` (integer ids),
``truth.parquet``, ``train.parquet`` (a simulated training set's true labels, 5 draws per
sample) and ``propensities.parquet`` (from its label counts by
:func:`polars_rankmetrics.label_propensities`' model), in chunks, so memory stays small.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np
import polars as pl

sys.path.insert(0, str(Path(__file__).parent))
from measure import data_directory  # noqa: E402

STRIDE = 30011  # prediction j of a sample is (offset + j * STRIDE) % labels, distinct labels


def _zipf_labels(rng: np.random.Generator, n: int, labels: int) -> np.ndarray:
    return (np.exp(rng.random(n) * math.log(labels)) - 1).astype(np.int64)


def chunk(rng, first: int, samples: int, depth: int, labels: int):
    ids = np.arange(first, first + samples, dtype=np.int64)
    n_true = rng.integers(1, 11, size=samples)
    true_sample = np.repeat(ids, n_true)
    truth = pl.DataFrame(
        {"sample": true_sample, "label": _zipf_labels(rng, len(true_sample), labels)}
    ).unique(["sample", "label"])
    offset = rng.integers(0, labels, size=samples)
    j = np.arange(depth, dtype=np.int64)
    label = (offset[:, None] + j[None, :] * STRIDE) % labels
    score = np.sort(np.round(rng.random((samples, depth)), 3), axis=1)[:, ::-1]
    # Each true label is predicted with probability 0.6, replacing a random position, unless the
    # sample's sequence already holds it.
    t_sample = truth["sample"].to_numpy() - first
    t_label = truth["label"].to_numpy()
    gap = (t_label - offset[t_sample]) % labels
    held = (gap % STRIDE == 0) & (gap // STRIDE < depth)
    hit = (rng.random(len(t_label)) < 0.6) & ~held
    position = (depth * rng.random(len(t_label)) ** 3).astype(np.int64)  # hits lean to the top
    # One true label per position: a later one at the same position wins.
    label[t_sample[hit], position[hit]] = t_label[hit]
    predictions = pl.DataFrame({
        "sample": np.repeat(ids, depth),
        "label": label.reshape(-1),
        "score": score.reshape(-1).astype(np.float32),
    })  # fmt: skip
    return predictions, truth


# --small: 500 samples x their top 10 of 300,011 labels (the least the stride allows), in parts
# of 200 samples; xmc.py and peers.py use the same sizes for theirs.
SMALL = {"samples": 500, "depth": 10, "labels": 300_011, "chunk": 200}


def generate(directory: Path, samples: int, depth: int, labels: int, chunk_samples: int) -> Path:
    """Write the run to ``directory`` (the module's docstring) and return it."""
    import polars_rankmetrics as rm

    (directory / "predictions").mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    truths = []
    for part, first in enumerate(range(0, samples, chunk_samples)):
        n = min(chunk_samples, samples - first)
        predictions, truth = chunk(rng, first, n, depth, labels)
        predictions.write_parquet(directory / "predictions" / f"part-{part:04d}.parquet")
        truths.append(truth)
    truth = pl.concat(truths).sort("sample", "label")
    # A few true labels are also repeated draws of popular labels; the truth is unique per pair.
    truth.write_parquet(directory / "truth.parquet")
    training = pl.DataFrame({
        "sample": np.repeat(np.arange(samples), 5),
        "label": _zipf_labels(rng, 5 * samples, labels),
    }).unique()  # fmt: skip
    training.write_parquet(directory / "train.parquet")
    every = pl.int_range(0, labels, eager=True, dtype=pl.Int64)
    rm.label_propensities(training, labels=every).write_parquet(directory / "propensities.parquet")
    print(directory, truth.height, "true labels")
    return directory


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=1_000_000)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--labels", type=int, default=3_000_000)
    parser.add_argument("--chunk", type=int, default=100_000)
    parser.add_argument("--small", action="store_true", help="a tiny run in a temporary directory")
    args = parser.parse_args()
    if args.small:
        args.samples, args.depth, args.labels, args.chunk = SMALL.values()
    if (args.depth - 1) * STRIDE >= args.labels:
        parser.error("--depth too large for --labels: the predictions would repeat labels")
    with data_directory(args.small) as out:
        generate(out / f"xmc-{args.samples}", args.samples, args.depth, args.labels, args.chunk)


if __name__ == "__main__":
    main()
