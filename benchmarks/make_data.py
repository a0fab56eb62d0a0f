"""Write synthetic long-format Parquet: n_samples x n_labels rows of (sample, label, score, truth).

Scores are rounded to 3 decimals (many ties, as calibrated or quantised models give), about 5% of
the cells are positive and positives score higher on average. Written in chunks, so the file can
be far larger than memory. Deterministic for a given seed.

    python benchmarks/make_data.py --samples 1000000 --labels 100 --out benchmarks/out/100m.parquet
    python benchmarks/make_data.py --small       # 1,000 samples x 10 labels, in a temporary file
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).parent))
from measure import data_directory  # noqa: E402

SCHEMA = pa.schema(
    [("sample", pa.int64()), ("label", pa.int32()), ("score", pa.float32()), ("truth", pa.bool_())]
)


def chunk(rng: np.random.Generator, first_sample: int, n_samples: int, n_labels: int) -> pa.Table:
    truth = rng.random((n_samples, n_labels)) < 0.05
    logits = rng.normal(size=truth.shape) + 1.5 * truth
    score = np.round(1 / (1 + np.exp(-logits)), 3).astype(np.float32)
    samples = np.arange(first_sample, first_sample + n_samples, dtype=np.int64)
    return pa.table(
        {
            "sample": np.repeat(samples, n_labels),
            "label": np.tile(np.arange(n_labels, dtype=np.int32), n_samples),
            "score": score.reshape(-1),
            "truth": truth.reshape(-1),
        },
        schema=SCHEMA,
    )


def write(
    path: Path, n_samples: int, n_labels: int, *, seed: int = 0, chunk_samples: int = 10_000
) -> None:
    """Write the table to ``path`` one row group per chunk of samples."""
    rng = np.random.default_rng(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    with pq.ParquetWriter(path, SCHEMA) as writer:
        for start in range(0, n_samples, chunk_samples):
            size = min(chunk_samples, n_samples - start)
            writer.write_table(chunk(rng, start, size, n_labels))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int)
    parser.add_argument("--labels", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--small", action="store_true", help="a tiny table in a temporary file")
    args = parser.parse_args()
    if args.small:
        with data_directory(small=True) as directory:
            path = directory / "small.parquet"
            write(path, 1_000, 10, seed=args.seed, chunk_samples=300)
            table = pq.read_table(path)
            if table.num_rows != 10_000 or table.schema != SCHEMA:
                raise SystemExit(f"wrote {table.num_rows} rows of {table.schema}")
            print(f"wrote {path}: {table.num_rows} rows, {pq.ParquetFile(path).num_row_groups} "
                  "row groups")  # fmt: skip
        return
    if args.samples is None or args.out is None:
        parser.error("--samples and --out are required (or --small)")
    write(args.out, args.samples, args.labels, seed=args.seed)
    print(f"wrote {args.out} ({args.out.stat().st_size / 2**20:.0f} MiB)")


if __name__ == "__main__":
    main()
