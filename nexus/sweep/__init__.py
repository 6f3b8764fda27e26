"""``nexus sweep``: many ordinary runs over a grid or random draws of their settings, on Ray.

The public surface: :func:`run_sweep` with :class:`SweepOptions`, and
:func:`parse` for a sweep file. Each point is one run folder
(``DIR/runs/<id>/``) written by the same code as ``nexus run``; the results
are in ``DIR/sweep.parquet``. See docs/sweeps.md.
"""

from nexus.sweep.runner import SweepOptions, SweepResult, run_sweep
from nexus.sweep.spec import SweepError, parse

__all__ = ["SweepOptions", "SweepResult", "SweepError", "parse", "run_sweep"]
