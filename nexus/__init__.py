"""Nexus: a fixed-order tick engine for flying aerial vehicles on Newton and Warp.

Importing ``nexus`` registers Nexus's USD schemas, which must happen before
any USD stage is opened in the process, and does nothing else: the names
below load their modules (and Warp, and Newton) on first use.

Build a flight and run it::

    import nexus

    config = nexus.RunConfig(mission="short", tick_hz=500.0, device="cpu", duration=5.0)
    summary = nexus.run_flight(config, "runs/short-500hz")

The public names, by group:

- flights: :class:`RunConfig`, :func:`build_flight`, :func:`run_flight`,
  :class:`Flight`, :class:`RunSummary` (replaying a run: :func:`nexus.runtime.replay.replay`),
  :func:`set_verbose` (Warp's banner and module-load lines, hidden by default; or ``NEXUS_VERBOSE=1``);
- components: :class:`Component`, :class:`Spec`, :class:`Param`,
  :class:`Input`, :class:`Output`, :class:`StateVar`, :class:`Stage`,
  :class:`Read`, :class:`Write`, :class:`Loop`;
- samples (the data components exchange): :class:`BodyState`,
  :class:`ImuSample`, :class:`MagSample`, :class:`BaroSample`,
  :class:`GpsSample`, :class:`PoseTwist`, :class:`Setpoint`.
"""

from nexus.core.lazy import lazy_names as _lazy_names

from nexus import schemas as _schemas

__version__ = "0.1.0"

_schemas.register()

#: Public name -> the module that defines it, loaded on first access (PEP 562).
_PUBLIC: dict[str, str] = {
    # Build a flight and run it.
    "RunConfig": "nexus.runtime.config",
    "set_verbose": "nexus.core.warp_setup",
    "build_flight": "nexus.runtime.flight",
    "Flight": "nexus.runtime.flight",
    "run_flight": "nexus.runtime.run",
    "RunSummary": "nexus.runtime.run",
    # Write a component.
    "Component": "nexus.core.component",
    "Spec": "nexus.core.spec",
    "Param": "nexus.core.spec",
    "Input": "nexus.core.spec",
    "Output": "nexus.core.spec",
    "StateVar": "nexus.core.spec",
    "Stage": "nexus.core.stage",
    "Read": "nexus.core.signals",
    "Write": "nexus.core.signals",
    "Loop": "nexus.core.loop",
    # The samples components exchange.
    "BodyState": "nexus.plant.body_state",
    "ImuSample": "nexus.sensors.samples",
    "MagSample": "nexus.sensors.samples",
    "BaroSample": "nexus.sensors.samples",
    "GpsSample": "nexus.sensors.samples",
    "PoseTwist": "nexus.estimation.pose_twist",
    "Setpoint": "nexus.guidance.setpoint",
}

__all__ = ["__version__", *_PUBLIC]


__getattr__, __dir__ = _lazy_names("nexus", _PUBLIC, globals())
