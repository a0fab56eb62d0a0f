"""pyxclib's ``Metrics(y, inv_psp).eval(X, 5)`` against ``polars_rankmetrics.xclib``'s on an
Amazon-670K-sized test set held as CSR matrices in memory: seconds (wall and CPU, all threads)
of the first call (each library's includes its numba compile: ours runs with an empty numba
cache, then once more in a fresh process that loads the compiled code from the cache, which
pyxclib's metrics do not keep) and of the warm calls (also without ``inv_psp``: P and nDCG
alone), peak RSS, and the four arrays compared. Beside ours, two floors that read the scores
once and compute no metric: numpy's partial selection of each row's best 5 stored entries
(``argpartition`` over the rows, all of one length here), and a compiled loop finding each
row's 5th best score.

    python benchmarks/xclib.py [--samples 153025] [--labels 670091] [--depth 100] [--rounds 3]
    python benchmarks/xclib.py --small   # a tiny case, ours alone, no record

The test set: per sample 1-9 true labels drawn from a Zipf-like label distribution
(make_xmc.py's: log-uniform over the label ids), ``depth`` stored scores, tie-free (distinct per
sample), each true label among them with probability 0.6, mostly near the top; the inverse
propensities from a simulated training set of 490,449 samples (Amazon-670K's) drawn the same way,
A = 0.6, B = 2.6 (the repository's values for Amazon). Each library runs in a fresh process
that builds the same seeded matrices, so the peak RSS includes them (recorded apart too).
pyxclib is built outside the repository (not on PyPI): its fetched source without the shipped
``xclib/utils/_sparse.c``, then ``pip install cython six wheel numba`` and ``pip install
--no-build-isolation --no-deps .``; without it the script times ours alone. Writes
``benchmarks/results/xclib.json`` (with the load average before and after).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from make_xmc import _zipf_labels  # noqa: E402
from measure import environment, run, uncompiled  # noqa: E402

RESULTS = Path(__file__).parent / "results"
TRAIN = 490_449  # Amazon-670K's training samples
STRIDE = 6007  # prediction j of a sample is (offset + j * STRIDE) % labels: distinct labels
SMALL = {"samples": 500, "labels": 120_011, "depth": 20, "train": 1_500}


def truth_matrix(rng: np.random.Generator, samples: int, labels: int):
    """1-9 Zipf-distributed true labels per sample, as a 0/1 CSR matrix."""
    import scipy.sparse as sp

    n_true = rng.integers(1, 10, size=samples)
    rows = np.repeat(np.arange(samples), n_true)
    matrix = sp.csr_matrix(
        (np.ones(rows.size, dtype=np.float32), (rows, _zipf_labels(rng, rows.size, labels))),
        shape=(samples, labels),
    )
    matrix.data[:] = 1  # a label drawn twice is one true label
    return matrix


def test_set(samples: int, labels: int, depth: int, train: int):
    """The seeded test set: scores X, truth y (CSR) and the training truth."""
    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    y = truth_matrix(rng, samples, labels)
    offset = rng.integers(0, labels, size=samples)
    predicted = (offset[:, None] + np.arange(depth)[None, :] * STRIDE) % labels
    # Distinct scores per sample, float32: position j scores (depth - j + u) / depth.
    jitter = rng.random((samples, depth))
    scores = ((depth - np.arange(depth)[None, :] + jitter) / depth).astype(np.float32)
    # Each true label replaces a position (leaning to the top) with probability 0.6, unless the
    # sample's sequence holds it already; one true label per position, the last one wins.
    t_rows = np.repeat(np.arange(samples), np.diff(y.indptr))
    gap = (y.indices - offset[t_rows]) % labels
    held = (gap % STRIDE == 0) & (gap // STRIDE < depth)
    hit = (rng.random(t_rows.size) < 0.6) & ~held
    position = (depth * rng.random(t_rows.size) ** 3).astype(np.int64)
    predicted[t_rows[hit], position[hit]] = y.indices[hit]
    X = sp.csr_matrix(
        (scores.reshape(-1), predicted.reshape(-1), np.arange(0, samples * depth + 1, depth)),
        shape=(samples, labels),
    )
    X.sort_indices()  # canonical, as scipy's own products are
    return X, y, truth_matrix(rng, train, labels)


def child(library: str, args: argparse.Namespace) -> None:
    """In a fresh process: build the test set, time the first and the warm calls of
    ``library``'s Metrics, print the seconds, the RSS and the arrays as JSON (with
    ``--first-only``, the first call and the floors)."""
    X, y, train = test_set(args.samples, args.labels, args.depth, args.train)
    from polars_rankmetrics.xclib import compute_inv_propesity

    inv_psp = compute_inv_propesity(train, 0.6, 2.6)
    checks = {}
    if library == "pyxclib":
        metrics = _pyxclib()
        # pyxclib computes in the matrix's dtype: float32 for a float32 matrix.
        for dtype in (np.float32, np.float64):
            theirs = metrics.compute_inv_propesity(train.astype(dtype), 0.6, 2.6)
            difference = float(np.max(np.abs(theirs / inv_psp - 1)))
            checks[f"inv_psp_max_relative_difference_{np.dtype(dtype).name}"] = difference
    else:
        from polars_rankmetrics import xclib as metrics
    data_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    start, cpu = time.perf_counter(), time.process_time()
    values = metrics.Metrics(y, inv_psp).eval(X, 5)
    first, first_cpu = time.perf_counter() - start, time.process_time() - cpu
    if args.first_only:  # then the floors, in this process: their arrays are no peak of ours
        print(json.dumps({
            "first_call_seconds": round(first, 3), "first_call_cpu_seconds": round(first_cpu, 3),
            **_floors(X, args),
        }))  # fmt: skip
        return
    warm, warm_cpu = [], []
    evaluator = metrics.Metrics(y, inv_psp)
    for _ in range(args.rounds):
        start, cpu = time.perf_counter(), time.process_time()
        evaluator.eval(X, 5)
        warm.append(round(time.perf_counter() - start, 3))
        warm_cpu.append(round(time.process_time() - cpu, 3))
    plain, plain_cpu = [], []  # without inv_psp: [P, nDCG]
    for _ in range(args.rounds):
        start, cpu = time.perf_counter(), time.process_time()
        metrics.Metrics(y).eval(X, 5)
        plain.append(round(time.perf_counter() - start, 3))
        plain_cpu.append(round(time.process_time() - cpu, 3))
    print(json.dumps({
        "first_call_seconds": round(first, 3), "first_call_cpu_seconds": round(first_cpu, 3),
        "warm_seconds": min(warm), "warm_rounds": warm, "warm_cpu_seconds": min(warm_cpu),
        "without_inv_psp_warm_seconds": min(plain),
        "without_inv_psp_warm_cpu_seconds": min(plain_cpu),
        "rss_with_data_mib": round(data_rss),
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "values": [np.asarray(v, dtype=np.float64).tolist() for v in values], **checks,
    }))  # fmt: skip


def _floors(X, args: argparse.Namespace) -> dict[str, float]:
    """The fastest of ``args.rounds`` selections of each row's 5 best stored entries, every
    row holding ``args.depth``, by numpy (their labels, by ``argpartition``) and by a compiled
    loop (each row's 5th best score, by insertion into 5 places, as ours selects them; compiled
    before it is timed): wall and CPU seconds."""
    from numba import njit

    @njit(nogil=True)
    def fifth_best(indptr, data, out):
        top = np.empty(5, dtype=data.dtype)
        for i in range(indptr.size - 1):
            filled = 0
            for j in range(indptr[i], indptr[i + 1]):
                value = data[j]
                if filled == 5 and value <= top[4]:
                    continue
                at = min(filled, 4)
                while at > 0 and top[at - 1] < value:
                    top[at] = top[at - 1]
                    at -= 1
                top[at] = value
                filled = min(filled + 1, 5)
            out[i] = top[filled - 1]

    def numpy_floor() -> None:
        scores = X.data.reshape(-1, args.depth)
        best = np.argpartition(scores, args.depth - 5, axis=1)[:, args.depth - 5 :]
        np.take_along_axis(X.indices.reshape(-1, args.depth), best, axis=1)

    out = np.empty(X.shape[0], dtype=X.data.dtype)
    fifth_best(X.indptr, X.data, out)
    found = {}
    for name, select in (
        ("numpy", numpy_floor),
        ("compiled", lambda: fifth_best(X.indptr, X.data, out)),
    ):
        timings = []
        for _ in range(args.rounds):
            start, cpu = time.perf_counter(), time.process_time()
            select()
            timings.append((time.perf_counter() - start, time.process_time() - cpu))
        wall, cpu = min(timings)
        found[f"floor_top5_{name}_seconds"] = round(wall, 3)
        found[f"floor_top5_{name}_cpu_seconds"] = round(cpu, 3)
    return found


def _pyxclib():
    """pyxclib's ``xc_metrics``, imported past this script's directory (where ``xclib`` would
    be this script); None where it is not installed."""
    import importlib

    here = Path(__file__).parent.resolve()
    saved = sys.path[:]
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != here]
    try:
        return importlib.import_module("xclib.evaluation.xc_metrics")
    except ImportError:
        return None
    finally:
        sys.path[:] = saved


def compare(ours: list[list[float]], theirs: list[list[float]]) -> dict[str, float]:
    """The largest absolute difference per array; pyxclib's nDCG and PSnDCG are float32."""
    names = ["precision", "ndcg", "psprecision", "psndcg"]
    return {
        name: float(np.max(np.abs(np.asarray(a) - np.asarray(b))))
        for name, a, b in zip(names, ours, theirs, strict=True)
    }


def _child(library: str, command: list[str]) -> dict:
    """The figures of ``library``'s child process (``command`` its arguments), printed."""
    done = run([*command, "--child", library])
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    found = json.loads(done.stdout)
    found["process_peak_rss_mib"] = round(done.peak_rss_mib)
    print(library, {k: v for k, v in found.items() if k != "values"}, flush=True)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=153_025)
    parser.add_argument("--labels", type=int, default=670_091)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--train", type=int, default=TRAIN)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--small", action="store_true", help="a tiny case, no record")
    parser.add_argument("--child", choices=["ours", "pyxclib"], help=argparse.SUPPRESS)
    parser.add_argument("--first-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.small:
        args.samples, args.labels, args.depth, args.train = SMALL.values()
        args.rounds = 1
    if (args.depth - 1) * STRIDE >= args.labels:
        parser.error("--depth too large for --labels: the predictions would repeat labels")
    if args.child:
        child(args.child, args)
        return
    # --small runs ours alone: pyxclib is no test extra, and its numba compile outlasts a small
    # mode's whole run.
    with_pyxclib = not args.small and _pyxclib() is not None
    libraries = ["ours", *(["pyxclib"] if with_pyxclib else [])]
    load = [round(os.getloadavg()[0], 2)]
    results = {}
    command = [
        sys.executable, __file__, "--samples", str(args.samples), "--labels", str(args.labels),
        "--depth", str(args.depth), "--train", str(args.train), "--rounds", str(args.rounds),
    ]  # fmt: skip
    if args.small:  # interpreted: compiling costs many times a small mode's whole run
        results["ours"] = _child("ours", uncompiled(command))
        return
    # Ours compiles into an empty numba cache of its own, then loads from it in a fresh process.
    with tempfile.TemporaryDirectory(prefix="rankmetrics-numba-") as cache:
        os.environ["NUMBA_CACHE_DIR"] = cache
        for library in libraries:
            results[library] = _child(library, command)
        cached = _child("ours", [*command, "--first-only"])
    results["ours"]["cached_first_call_seconds"] = cached.pop("first_call_seconds")
    results["ours"]["cached_first_call_cpu_seconds"] = cached.pop("first_call_cpu_seconds")
    cached.pop("process_peak_rss_mib")
    results["floors"] = cached
    load.append(round(os.getloadavg()[0], 2))
    record: dict = {
        **environment(), "command": " ".join(["python", "benchmarks/xclib.py", *sys.argv[1:]]),
        "samples": args.samples, "labels": args.labels, "depth": args.depth,
        "train": args.train, "rounds": args.rounds, "load": load, "results": results,
    }  # fmt: skip
    if "pyxclib" in results:
        differences = compare(results["ours"]["values"], results["pyxclib"]["values"])
        record["max_abs_difference"] = differences
        # pyxclib's nDCG and PSnDCG arrays are float32: equal to ours rounded to float32.
        tolerance = {"precision": 1e-9, "psprecision": 1e-9, "ndcg": 1e-6, "psndcg": 1e-6}
        record["equal"] = all(differences[name] <= tolerance[name] for name in differences)
        print("max abs difference", differences, "equal:", record["equal"])
        if not record["equal"]:
            raise SystemExit("the values differ from pyxclib's")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "xclib.json").write_text(json.dumps(record, indent=2) + "\n")


if __name__ == "__main__":
    main()
