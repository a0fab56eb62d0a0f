import pytest

from polars_rankmetrics.memory import ENGINE_SHARE, engine_limit, parse_size


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
