"""What a scenario changes in a flight's ring, applied by :func:`nexus.runtime.flight.build_flight`.

``RunConfig.scenario`` holds the part of a scenario file that RunConfig's own fields cannot say (the
mission steps, the gusts, the PID gain factors), as JSON-ready data, so a run folder flown from a scenario
replays from its run.json alone and a sweep point's id covers it. The faults and the start are fixed
variation values (``run.json``'s ``world_values``), handed to their owners as a variation file's draws.
"""

from __future__ import annotations

from dataclasses import replace

#: The PID gains ``controller.gain_scale`` may scale (:class:`nexus.control.pid.PidGains` fields).
GAINS = ("position_p", "velocity_p", "velocity_i", "velocity_d", "attitude_p", "rate_p", "rate_i", "rate_d")


def scaled_gains(gains, factors: dict):
    """``gains`` with each named gain (a per-axis tuple) multiplied by its factor."""
    return replace(gains, **{name: tuple(float(v) * factors[name] for v in getattr(gains, name)) for name in factors})


def apply_scenario(ring: dict, plant, components: list, controller, air):
    """Put the scenario's steps in place of the scene's guidance, scale the PID's gains, add drag to a vehicle
    without its own, a stage for each sensor fault past the first, the stage that fires ``when`` faults, the
    contact count a ``contact`` check reads, and the gusts to the air (made when the scene has none); returns
    the air (or None)."""
    steps = ring.get("steps") or []
    if steps:
        from nexus.guidance.steps import StepMission  # noqa: PLC0415

        components[:] = [c for c in components if not getattr(c, "is_guidance", False)]
        at = components.index(controller) if controller in components else len(components)
        components.insert(at, StepMission(steps))
    if ring.get("gain_scale") and controller in components:  # replaced (a replay's recorded controls): none to scale
        if not hasattr(controller, "gains"):
            from nexus.core.errors import BuildError  # noqa: PLC0415

            raise BuildError(f"the scenario's controller.gain_scale scales the PID's gains, but {controller.name} is a "
                             f"{type(controller).__name__}, which has none; fly controller \"pid\" or drop gain_scale")
        controller.gains = scaled_gains(controller.gains, ring["gain_scale"])
    if ring.get("drag"):
        from nexus.air.drag import Drag  # noqa: PLC0415

        if any(isinstance(c, Drag) for c in components):
            from nexus.core.errors import BuildError  # noqa: PLC0415

            raise BuildError(f"{plant.vehicle_path}: the vehicle has its own drag prim; remove the scenario's "
                             "environment.drag_area and environment.rotor_drag")
        at = components.index(controller) if controller in components else len(components)
        components.insert(at, Drag("/scenario/drag", plant, **{k: tuple(v) if isinstance(v, list) else v
                                                               for k, v in ring["drag"].items()}))
    for index, fault in enumerate(ring.get("sensor_faults") or ()):  # past the first: one stage each, own sensor
        from nexus.sensors.faults import SensorFaults  # noqa: PLC0415
        from nexus.sensors.sensor import Sensor  # noqa: PLC0415

        values = {"sensor_fault_time": fault["time"], "sensor_fault_sensor": fault["sensor"],
                  "sensor_fault_mode": fault["mode"]}
        components.append(SensorFaults([c for c in components if isinstance(c, Sensor)], [values] * plant.worlds,
                                       name=f"/scenario/sensor_faults/{index + 1}"))
    if ring.get("triggers"):  # faults fired by a condition, measured after the mission's step began
        from nexus.scenario.fault_trigger import FaultTrigger  # noqa: PLC0415

        components.append(FaultTrigger(plant, ring["triggers"]))
    if ring.get("contact"):
        from nexus.plant.ground_contact import GroundContact  # noqa: PLC0415

        components.append(GroundContact(plant))
    gusts = ring.get("gusts") or []
    if gusts:
        from nexus.air.gust import Gust, toward  # noqa: PLC0415
        from nexus.air.wind_field import WindField  # noqa: PLC0415

        if air is None:
            air = WindField(body=plant.body_label(plant.base_path))
        air.gusts = (*air.gusts, *(Gust(g["start"], g["duration"], g["amplitude"], toward(g["direction"]))
                                   for g in gusts))
    return air


def scenario_variation(options, plant, components) -> list[dict] | None:
    """Each world's values: those drawn from ``options.vary`` (if any) with the scenario's fixed ones over them;
    None when the scenario fixes none (the run draws as it would without a scenario)."""
    fixed = options.scenario.get("values") or {}
    if not fixed:
        return None
    from nexus.worlds.drawn import _draw  # noqa: PLC0415

    drawn = _draw(options, plant, components) if options.vary else [{} for _ in range(options.worlds)]
    return [{**values, **fixed} for values in drawn]
