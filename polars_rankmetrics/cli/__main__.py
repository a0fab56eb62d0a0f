"""``python -m polars_rankmetrics.cli``: the ``rankmetrics`` command."""

import sys

from polars_rankmetrics.cli import main

sys.exit(main())
