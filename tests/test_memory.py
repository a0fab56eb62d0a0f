import pytest

from polars_rankmetrics.engines.memory import ENGINE_SHARE, engine_limit
from polars_rankmetrics.inputs.sizes import parse_size


@pytest.mark.parametrize(
    "text, size",
    [
        ("1GB", 10**9),
        ("512MiB", 2**29),
        ("800000000", 800_000_000),
        ("1.5 gb", 1_500_000_000),
        ("2KiB", 2048),
    ],
)
def test_parse_size(text, size):
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["lots", "1 parsec", "", "-1GB", "0MB"])
def test_parse_size_rejects(text):
    with pytest.raises(ValueError, match="memory limit"):
        parse_size(text)


def test_duckdb_gets_its_share_of_the_budget():
    assert engine_limit("1GB") == f"{int(10**9 * ENGINE_SHARE)}B"


def test_a_parquet_source_too_large_for_memory_is_evaluated_in_buckets(monkeypatch):
    from pathlib import Path

    import polars as pl
    from polars.testing import assert_frame_equal

    import polars_rankmetrics as rm
    from polars_rankmetrics.engines import memory
    from polars_rankmetrics.engines.driver import pieces

    example = Path(__file__).parent.parent / "data" / "example.parquet"
    in_memory = rm.evaluate(example, by="model")
    used = []
    real = pieces.bucket_count

    def counting(*args, **options):
        used.append(real(*args, **options))
        return used[-1]

    monkeypatch.setattr(memory, "available_memory", lambda: 50_000_000)  # 50 MB left
    monkeypatch.setattr(pieces, "bucket_count", counting)
    assert_frame_equal(rm.evaluate(example, by="model"), in_memory, check_exact=False)
    assert used and used[0] > 1
    # a frame the caller already holds in memory is evaluated in one piece
    used.clear()
    rm.evaluate(pl.read_parquet(example), by="model")
    assert not used


def test_the_ordered_rows_check_runs_only_on_a_table_evaluated_in_one_piece(monkeypatch):
    # It compares each row with the one before, which holds the key columns in memory: a table
    # split into buckets takes the distinct count per bucket instead.
    import polars as pl
    from conftest import BUDGET, rows_per_bucket

    import polars_rankmetrics as rm
    from polars_rankmetrics.engines.polars import PolarsSession

    asked = []
    real = PolarsSession.check_rows

    def recording(self, keys, *, ordered=False):
        asked.append(ordered)
        return real(self, keys, ordered=ordered)

    monkeypatch.setattr(PolarsSession, "check_rows", recording)
    df = pl.DataFrame({
        "sample": [0, 0, 1, 1, 2, 2], "label": ["a", "b"] * 3,
        "score": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6], "truth": [1, 0, 0, 1, 1, 0],
    })  # fmt: skip
    one_piece = rm.evaluate(df, ["lrap"])
    assert asked == [True]
    asked.clear()
    with rows_per_bucket(2):
        bucketed = rm.evaluate(df, ["lrap"], memory_limit=BUDGET)
    assert asked == [False]
    assert bucketed["lrap"][0] == pytest.approx(one_piece["lrap"][0])


def test_a_file_evaluated_in_one_piece_is_read_once_and_only_its_used_columns(
    tmp_path, monkeypatch
):
    # The checks and the metrics query the table in turn: the Polars engine reads the columns
    # they use into memory once (the file's bytes are zeros after that read here, its size and
    # times kept, so that a second read fails and the run's check of its inputs passes), never
    # a table split into buckets, whose whole does not fit the budget.
    import os

    import polars as pl
    from conftest import BUDGET, rows_per_bucket
    from polars.testing import assert_frame_equal

    import polars_rankmetrics as rm
    from polars_rankmetrics.engines.polars import PolarsSession

    df = pl.DataFrame({
        "sample": [0, 0, 1, 1, 2, 2], "label": ["a", "b"] * 3,
        "score": [0.1, 0.7, 0.3, 0.4, 0.5, 0.6], "truth": [1, 0, 0, 1, 1, 0],
        "note": ["unused"] * 6,
    })  # fmt: skip
    held = []
    real = PolarsSession.hold

    def recording(self):
        real(self)
        held.append(self.lf.collect_schema().names())
        if path.exists():
            before = path.stat()
            with open(path, "r+b") as file:
                file.write(bytes(before.st_size))
            os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))

    monkeypatch.setattr(PolarsSession, "hold", recording)
    metrics = ["lrap", "hamming_loss", "ndcg"]
    path = tmp_path / "table.parquet"
    expected = rm.evaluate(df, metrics)
    held.clear()
    df.write_parquet(path)
    assert_frame_equal(rm.evaluate(path, metrics), expected)
    assert held == [["sample", "label", "score", "truth"]]
    held.clear()
    df.write_parquet(path)
    with rows_per_bucket(2):
        bucketed = rm.evaluate(path, metrics, memory_limit=BUDGET)
    assert not held
    assert_frame_equal(bucketed, expected, check_exact=False)
