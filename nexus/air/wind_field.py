"""The wind field: each world's air velocity at its vehicle's base, every tick (signal ``wind``).

Three parts add up, in the world frame (ENU, [m/s]):

* the **mean wind**: ``speed`` at ``referenceHeight`` from ``direction`` (degrees clockwise from
  north, where it comes from, as meteorologists give it), scaled to the base's height ``h``
  above the ground plane by a power law ``(h / h_ref)^alpha`` or a logarithmic profile
  ``ln(h / z0) / ln(h_ref / z0)``;
* the **gusts** of the scene (:mod:`nexus.air.gust`);
* **Dryden turbulence** (:mod:`nexus.air.dryden`): u along the mean wind, v across it, w up,
  from the turbulence level and the height (or the prim's own intensities and length scales
  with ``custom``), carried past the vehicle at its airspeed in the mean wind (at least
  1 m/s). The filters step once a tick on the device, driven by five normal draws from the
  world's own stream (``air/turbulence/<prim>`` of the world's random tree) and the tick
  counter, so a CPU run repeats bit for bit and world i of N is the one-world run of world i.

It is in the ring only when the scene has a wind or gust prim, the run gives ``--wind`` or
``--turbulence``, or a variation file draws ``wind_speed``, ``wind_direction`` or
``turbulence_level`` (each world's draw then replaces the scene's and the options' value) or a
gust (``gust_start_time`` ..., :mod:`nexus.air.gust`: one more gust in the worlds that get it);
the drag (:mod:`nexus.air.drag`) reads the signal.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import warp as wp

from nexus.air.dryden import (MIN_AIRSPEED, W20, dryden_scales, first_order_step, second_order_output,
                              second_order_step)
from nexus.air.gust import GUST_PARAMETERS, Gust, check_drawn_gusts, read_gusts, toward, world_gusts
from nexus.core import Component
from nexus.core.errors import BuildError
from nexus.core.rng import stream_seed
from nexus.core.spec import Input, Output, Param, Spec, StateVar, non_negative, positive
from nexus.plant.body_state import BodyState
from nexus.plant.usd_files import open_stage
from nexus.schemas.reader import read_prim, where
from nexus.vocab.drawn import Drawn, draws, within, non_negative as _at_least_zero

PROFILES = ("power", "logarithmic")
TURBULENCE = ("none", "light", "moderate", "severe", "custom")
#: The variation parameters (``--vary``) that draw each world's air: each world's draw replaces the scene's and
#: the options' value. The wind field takes them itself (:meth:`WindField.from_scene`), so it declares no
#: ``from_draws``.
AIR_DRAWS = (
    Drawn("wind_speed", "m/s", "mean wind speed at the scene's reference height (docs/air.md)", ">= 0",
          accepts=_at_least_zero),
    Drawn("wind_direction", "deg", "where the mean wind blows from, clockwise from north (docs/air.md)",
          "in [0, 360]", accepts=within(0.0, 360.0)),
    Drawn("turbulence_level", "", "Dryden turbulence: none, light, moderate or severe (docs/air.md)",
          "'none', 'light', 'moderate' or 'severe'", kind="str",
          accepts=lambda v: v in ("none", "light", "moderate", "severe")),
)
AIR_PARAMETERS = tuple(d.name for d in AIR_DRAWS)
#: ``--turbulence`` choices: the levels of MIL-HDBK-1797.
TURBULENCE_LEVELS = ("light", "moderate", "severe")
#: The mean wind's direction is kept from the prim when ``--wind`` gives none; the format of ``--wind``.
WIND_OPTION = re.compile(r"^\s*([0-9.eE+-]+)\s*@\s*([0-9.eE+-]+)\s*$")


def _turbulence_state(component, ctx) -> np.ndarray:
    """A draw from the filters' stationary distribution, so turbulence is at full strength from the first tick:
    unit variance for each state, correlation 1/sqrt(2) between the two states of a second-order filter."""
    draw = ctx.rng.child("air/turbulence-start").child(component.name).generator().standard_normal(5)
    c = math.sqrt(0.5)
    return np.array([draw[0], draw[1], c * draw[1] + c * draw[2], draw[3], c * draw[3] + c * draw[4]])


WIND_SPEC = Spec(
    name="Wind",
    schema="NexusWindAPI",
    noun="wind",
    doc="The scene's air: a mean wind with a power-law or logarithmic profile over height, the scene's gusts "
        "(NexusGustAPI prims) and Dryden low-altitude turbulence (MIL-F-8785C). Writes `wind`, the air's velocity "
        "[m/s, world ENU] at each vehicle's base.",
    params=(
        non_negative("speed", "nexus:speed", 0.0, "m/s", "Mean wind speed at the reference height"),
        Param("direction", "nexus:direction", "float", 270.0, "deg",
              "Where the wind blows from, degrees clockwise from north (270: from the west, blowing east)",
              low=0.0, high=360.0),
        positive("reference_height", "nexus:referenceHeight", 10.0, "m",
                 "Height above the ground the speed is given at"),
        Param("profile", "nexus:profile", "token", "power", "-",
              "How the mean wind grows with height: power (speed (h/h_ref)^alpha) or logarithmic "
              "(speed ln(h/z0)/ln(h_ref/z0))", choices=PROFILES),
        Param("shear_exponent", "nexus:shearExponent", "float", 0.143, "-",
              "The power law's exponent alpha (1/7 over open ground)", low=0.0, high=1.0),
        positive("roughness_length", "nexus:roughnessLength", 0.03, "m",
                 "The logarithmic profile's roughness length z0 (0.03 m: open flat ground); below the reference height"),
        Param("turbulence", "nexus:turbulence", "token", "none", "-",
              "Dryden turbulence: none, light, moderate or severe (MIL-HDBK-1797: 15, 30, 45 knots at 20 ft, "
              "intensities and length scales from the height), or custom (the two attributes below, at every height)",
              choices=TURBULENCE),
        Param("turbulence_intensity", "nexus:turbulenceIntensity", "float3", (1.0, 1.0, 0.5), "m/s",
              "With turbulence custom: the standard deviations of u (along the mean wind), v (across) and w (up)",
              low=0.0),
        Param("turbulence_length_scale", "nexus:turbulenceLengthScale", "float3", (100.0, 100.0, 10.0), "m",
              "With turbulence custom: the length scales L_u, L_v, L_w", low=0.0, open_low=True),
    ),
    inputs=(
        Input("body/{body}", BodyState, doc="The vehicle's base: its height sets the profile and the turbulence scales"),
        Input("time", wp.float64, doc="Sim time [s], for the gusts"),
        Input("tick", wp.int64, doc="Ticks begun: the turbulence noise's counter"),
    ),
    outputs=(Output("wind", wp.vec3, recorded=True,
                    doc="The air's velocity at the base of each vehicle [m/s], world ENU (mean, gusts, turbulence)"),),
    state=(StateVar("turbulence", wp.float64, (5,), reset=_turbulence_state,
                    doc="The Dryden filters' unit-variance states: u; v's two; w's two"),),
    stage="wind",
    kind="force",
)


@wp.struct
class AirSettings:
    """Each world's mean wind and turbulence level, and what every world shares."""

    speed: wp.array(dtype=wp.float64)  # [m/s] at the reference height
    toward: wp.array(dtype=wp.vec2d)  # unit vector (east, north) the mean wind blows toward
    w20: wp.array(dtype=wp.float64)  # [m/s] wind at 20 ft of the turbulence level; 0: none
    reference_height: wp.float64
    logarithmic: wp.int32
    shear_exponent: wp.float64
    roughness_length: wp.float64
    custom: wp.int32  # 1: the intensities and length scales below, at every height
    sigma: wp.vec3d
    length: wp.vec3d
    gust_start: wp.array2d(dtype=wp.float64)  # (worlds, gusts): the scene's, then a drawn one
    gust_duration: wp.array2d(dtype=wp.float64)
    gust_amplitude: wp.array2d(dtype=wp.float64)
    gust_toward: wp.array2d(dtype=wp.vec2d)
    gusts: wp.int32


@wp.func
def mean_profile(s: AirSettings, height: wp.float64) -> wp.float64:
    """The mean wind's speed at ``height`` [m] over its speed at the reference height."""
    if s.logarithmic == 1:
        z0 = s.roughness_length
        return wp.log(wp.max(height, z0) / z0) / wp.log(s.reference_height / z0)
    return wp.pow(wp.max(height, wp.float64(0.0)) / s.reference_height, s.shear_exponent)


@wp.func
def gust_speed(start: wp.float64, duration: wp.float64, amplitude: wp.float64, t: wp.float64) -> wp.float64:
    """The 1 - cos gust's speed at sim time ``t`` [s]: 0 outside it, its amplitude at its midpoint."""
    x = (t - start) / duration
    if x < wp.float64(0.0) or x > wp.float64(1.0):
        return wp.float64(0.0)
    return wp.float64(0.5) * amplitude * (wp.float64(1.0) - wp.cos(wp.float64(2.0 * math.pi) * x))


@wp.kernel
def blow(
    # In:
    body: wp.array(dtype=BodyState),
    time: wp.array(dtype=wp.float64),
    tick: wp.array(dtype=wp.int64),
    # Model:
    s: AirSettings,
    seeds: wp.array(dtype=wp.int32),
    dt: wp.float64,
    # State:
    state_in: wp.array2d(dtype=wp.float64),
    state_out: wp.array2d(dtype=wp.float64),
    # Out:
    wind: wp.array(dtype=wp.vec3),
):
    world = wp.tid()
    b = body[world]
    position = wp.transform_get_translation(b.pose)
    height = wp.float64(position[2])
    heading = s.toward[world]
    mean = s.speed[world] * mean_profile(s, height)
    air = wp.vec3d(mean * heading[0], mean * heading[1], wp.float64(0.0))
    t = time[world]
    for g in range(s.gusts):
        speed = gust_speed(s.gust_start[world, g], s.gust_duration[world, g], s.gust_amplitude[world, g], t)
        if speed != wp.float64(0.0):  # adding a zero would turn a -0 wind into +0: world i of N is its own run
            air = air + wp.vec3d(speed * s.gust_toward[world, g][0], speed * s.gust_toward[world, g][1],
                                 wp.float64(0.0))
    z0 = state_in[world, 0]
    zv = wp.vec2d(state_in[world, 1], state_in[world, 2])
    zw = wp.vec2d(state_in[world, 3], state_in[world, 4])
    if s.custom == 1 or s.w20[world] > wp.float64(0.0):
        scales = dryden_scales(height, s.w20[world])
        sigma = wp.vec3d(scales[0], scales[0], scales[1])
        length = wp.vec3d(scales[2], scales[2], scales[3])
        if s.custom == 1:
            sigma = s.sigma
            length = s.length
        v = b.velocity
        airspeed = wp.max(wp.length(wp.vec3d(mean * heading[0] - wp.float64(v[0]), mean * heading[1] - wp.float64(v[1]),
                                              -wp.float64(v[2]))), wp.float64(MIN_AIRSPEED))
        rng = wp.rand_init(seeds[world], wp.int32(tick[world]))
        n0 = wp.float64(wp.randn(rng))
        n1 = wp.float64(wp.randn(rng))
        n2 = wp.float64(wp.randn(rng))
        n3 = wp.float64(wp.randn(rng))
        n4 = wp.float64(wp.randn(rng))
        z0 = first_order_step(z0, airspeed * dt / length[0], n0)
        zv = second_order_step(zv, airspeed * dt / length[1], n1, n2)
        zw = second_order_step(zw, airspeed * dt / length[2], n3, n4)
        u = sigma[0] * z0
        lateral = sigma[1] * second_order_output(zv)
        up = sigma[2] * second_order_output(zw)
        # u along the mean wind's heading, v to its left (z x u), w up.
        air = air + wp.vec3d(u * heading[0] - lateral * heading[1], u * heading[1] + lateral * heading[0], up)
    state_out[world, 0] = z0
    state_out[world, 1] = zv[0]
    state_out[world, 2] = zv[1]
    state_out[world, 3] = zw[0]
    state_out[world, 4] = zw[1]
    wind[world] = wp.vec3(wp.float32(air[0]), wp.float32(air[1]), wp.float32(air[2]))


def parse_wind(text: str) -> tuple[float, float]:
    """``--wind SPEED@FROM`` as (speed [m/s], direction it blows from [deg]); a one-line error otherwise."""
    match = WIND_OPTION.match(str(text))
    try:
        speed, direction = (float(match.group(1)), float(match.group(2))) if match else (math.nan, math.nan)
    except ValueError:
        speed = direction = math.nan
    if not (math.isfinite(speed) and math.isfinite(direction)) or speed < 0 or not 0 <= direction <= 360:
        raise BuildError(f"--wind {text}: give SPEED@FROM, the speed [m/s] at the reference height (0 or more) and "
                         "where the wind blows from in degrees clockwise from north (0 to 360), e.g. --wind 8@270")
    return speed, direction


@draws(*AIR_DRAWS)
class WindField(Component):
    """The air's velocity at each world's base, one kernel a tick (see the module doc)."""

    spec = WIND_SPEC

    def __init__(self, name: str = "/scene/wind", body: str = "base", gusts: tuple[Gust, ...] = (), **params):
        super().__init__(name)
        values = {**self.spec.defaults(), **params}
        unknown = set(values) - set(self.spec.defaults())
        if unknown:
            raise TypeError(f"WindField takes no parameters {sorted(unknown)}")
        self.values, self.body, self.gusts = values, body, tuple(gusts)

    @classmethod
    def from_prim(cls, prim, values, ctx):
        """A wind prim in a vehicle file: refused (the air belongs to the scene)."""
        raise BuildError(f"{where(prim, WIND_SPEC, ctx.path)}: NexusWindAPI belongs in the scene file; move the prim "
                         "there (e.g. /scene/air), or give --wind SPEED@FROM")

    @classmethod
    def from_scene(cls, plant, wind: str | None, turbulence: str | None, run_duration: float,
                   variation: Sequence[dict] = ()) -> WindField | None:
        """The scene's wind prim (``NexusWindAPI``, at most one) with the run's ``--wind`` and ``--turbulence``
        over it, and each world's drawn air (``variation``) over both; None when neither the scene, the options
        nor the variation declare air (the ring then keeps its bits)."""
        path = Path(plant.scene_path)
        stage = open_stage(path)
        prims = [p for p in stage.Traverse() if p.HasAPI(WIND_SPEC.schema)]
        if len(prims) > 1:
            raise BuildError(f"{path}: wind prims {', '.join(str(p.GetPath()) for p in prims)}: a scene has one "
                             "air; keep one prim with NexusWindAPI")
        gusts = read_gusts(stage, path, run_duration)
        check_drawn_gusts(variation, run_duration)
        drawn = any(name in values for values in variation for name in (*AIR_PARAMETERS, *GUST_PARAMETERS))
        if not prims and wind is None and turbulence is None and not gusts and not drawn:
            return None
        values = read_prim(prims[0], WIND_SPEC, path) if prims else dict(WIND_SPEC.defaults())
        if prims and values["profile"] == "logarithmic" and values["roughness_length"] >= values["reference_height"]:
            raise BuildError(f"{where(prims[0], WIND_SPEC, path)}: nexus:roughnessLength "
                             f"({values['roughness_length']:g} m) is not below nexus:referenceHeight "
                             f"({values['reference_height']:g} m); the logarithmic profile needs z0 < h_ref")
        if wind is not None:
            values["speed"], values["direction"] = parse_wind(wind)
        if turbulence is not None:
            if turbulence not in TURBULENCE_LEVELS:
                raise BuildError(f"--turbulence {turbulence}: choose one of {', '.join(TURBULENCE_LEVELS)}")
            values["turbulence"] = turbulence
        name = str(prims[0].GetPath()) if prims else "/scene/wind"
        return cls(name, body=plant.body_label(plant.base_path), gusts=gusts, **values)

    def prepare(self, ctx) -> None:
        v, device, worlds = self.values, ctx.device, ctx.worlds
        # Each world's drawn air (``--vary``: wind_speed, wind_direction, turbulence_level), else the prim's.
        drawn = [ctx.values_of(w) for w in range(worlds)]
        s = AirSettings()
        s.speed = wp.array([d.get("wind_speed", v["speed"]) for d in drawn], dtype=wp.float64, device=device)
        s.toward = wp.array([toward(d.get("wind_direction", v["direction"])) for d in drawn], dtype=wp.vec2d,
                            device=device)
        s.w20 = wp.array([W20.get(d.get("turbulence_level", v["turbulence"]), 0.0) for d in drawn],
                         dtype=wp.float64, device=device)
        s.reference_height = float(v["reference_height"])
        s.logarithmic = int(v["profile"] == "logarithmic")
        s.shear_exponent = float(v["shear_exponent"])
        s.roughness_length = float(v["roughness_length"])
        s.custom = int(v["turbulence"] == "custom")
        s.sigma = wp.vec3d(*v["turbulence_intensity"])
        s.length = wp.vec3d(*v["turbulence_length_scale"])
        rows = world_gusts(self.gusts, drawn)  # the scene's gusts, then each world's drawn one (if any world has)
        count = len(rows[0]) if rows else 0
        rows = [row or [Gust(0.0, 1.0, 0.0, (0.0, 0.0))] for row in rows]  # amplitude 0: no empty arrays
        s.gust_start = wp.array([[g.start for g in row] for row in rows], dtype=wp.float64, device=device)
        s.gust_duration = wp.array([[g.duration for g in row] for row in rows], dtype=wp.float64, device=device)
        s.gust_amplitude = wp.array([[g.amplitude for g in row] for row in rows], dtype=wp.float64, device=device)
        s.gust_toward = wp.array([[g.toward for g in row] for row in rows], dtype=wp.vec2d, device=device)
        s.gusts = count
        self._settings = s
        self._seeds = wp.array([stream_seed(ctx.world_rng(w), "air/turbulence", self.name) for w in range(worlds)],
                               dtype=wp.int32, device=device)
        self._dt = float(ctx.dt)

    def run(self, io) -> None:
        wp.launch(blow, self._seeds.shape[0],
                  inputs=[io[f"body/{self.body}"], io["time"], io["tick"], self._settings, self._seeds, self._dt,
                          io.state_in["turbulence"]],
                  outputs=[io.state_out["turbulence"], io["wind"]], device=io.device)
