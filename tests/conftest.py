import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

ENGINES = ["polars", "duckdb"]


@pytest.fixture(params=ENGINES)
def engine(request) -> str:
    """Every engine-level test body runs on each engine."""
    return request.param
