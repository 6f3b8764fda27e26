"""``nexus sweep``: many ordinary runs over a grid or random draws of their settings, on Ray.

The public surface: :func:`run_sweep` with :class:`SweepOptions`, and
:func:`parse` for a sweep file. Each point is one run folder
(``DIR/runs/<id>/``) written by the same code as ``nexus run``; the results
are in ``DIR/sweep.parquet``. See docs/sweeps.md.
"""

from nexus.core.lazy import lazy_names as _lazy_names

#: Public name -> the module that defines it, loaded on first access (PEP 562): importing a module of this
#: package (the warm-up gate a Ray actor imports, in a fresh process) loads no flight code.
_PUBLIC: dict[str, str] = {
    "SweepOptions": "nexus.sweep.runner",
    "SweepResult": "nexus.sweep.runner",
    "SweepError": "nexus.sweep.spec",
    "parse": "nexus.sweep.spec",
    "run_sweep": "nexus.sweep.runner",
}

__all__ = ["SweepOptions", "SweepResult", "SweepError", "parse", "run_sweep"]

__getattr__, __dir__ = _lazy_names("nexus.sweep", _PUBLIC, globals())
