"""Reporting: the evaluation laid out for people to read.

- :mod:`.labels`: :func:`label_report`, one row per label (the per-label table);
- :mod:`.per_class`: :func:`lwlrap_per_class`, the label-by-label breakdown of lwlrap;
- :mod:`.page`: :func:`html_report`, the evaluation as one self-contained HTML page
  (:class:`Report`);
- :mod:`.chart_data` computes the numbers each chart draws, :mod:`.charts` draws them (a new
  chart is a function in each);
- :mod:`.comparison`: :class:`Comparison`, a comparison's table rendered as text, Markdown,
  LaTeX, JSON or CSV;
- :mod:`.leaderboard`: :class:`Leaderboard`, a leaderboard rendered the same ways, the letters
  as superscripts and the best value in bold;
- :mod:`.systems`: the page's section of more than two models.
"""

from polars_rankmetrics.report.comparison import Comparison
from polars_rankmetrics.report.labels import label_report
from polars_rankmetrics.report.leaderboard import Leaderboard
from polars_rankmetrics.report.page import Report, html_report
from polars_rankmetrics.report.per_class import lwlrap_per_class

__all__ = ["Comparison", "Leaderboard", "Report", "html_report", "label_report", "lwlrap_per_class"]
