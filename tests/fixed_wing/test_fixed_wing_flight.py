"""The fixed-wing flight stack flies the Aerosonde: TECS trades energy, L1 converges on a leg and holds a loiter.

Each flight starts as tests/fixed_wing/test_trim_flight.py starts its own: the Aerosonde assembled from its
file (MuJoCo step, 250 Hz) in a scene with g = 9.80665 m/s² and no ground, 100 m up, flying east level at
25 m/s, pitched to its trimmed angle of attack, surfaces at their trim, the ``hold`` controller replaced by
the flight stack built for the file's plane (``plane_controller``, trimmed at 25 m/s) and the truth estimator
closing the loops (the file has no sensors yet).
Positions: world ENU, east x, north y, up z; the NED origin is the world origin, so the task's north-east
points are (y, x) here and its heights are z.

Figures measured on 2026-12-06 are in docs/fixed_wing.md ("Flight stack"); the bounds below come from the
laws' closed forms, worked in the comments, with room for the attitude loops' lag.
"""

from __future__ import annotations

import math
import subprocess
import sys

import newton
import numpy as np
import pytest

from nexus.aero.control_surfaces import ControlSurface
from nexus.control.fixed_wing.controller import line_task, loiter_task, plane_controller
from nexus.core import Loop
from nexus.core.errors import BuildError
from nexus.core.ring import placed
from nexus.estimation.truth import TruthEstimator
from nexus.plant.assets import resolve_asset
from nexus.plant.frames import quat_to_matrix_np
from nexus.plant.loading import open_stage
from nexus.runtime.assembly import assemble
from tests.fixed_wing.wing_stage import pitched

VOID = "tests/data/void.usda"
HEIGHT = 100.0  # [m]
AIRSPEED = 25.0  # [m/s]
G = 9.80665  # [m/s²], the scene's


def fly(task, seconds: float) -> dict:
    """Fly ``task`` from the trimmed start for ``seconds``: every 25th tick's time [s], position [m] (ENU),
    speed [m/s] and bank [rad] (Euler roll, positive right wing down)."""
    vehicle = assemble("aerosonde", VOID, controller="hold")
    plant = vehicle.plant
    path = resolve_asset("vehicle", "aerosonde")
    controller = plane_controller(vehicle.controller.name, open_stage(path), path, plant.mass, plant.gravity, AIRSPEED,
                                  origin_altitude=float(plant.origin.altitude))
    trim = controller.trim
    for c in vehicle.components:
        if isinstance(c, ControlSurface):
            c.initial = {"aileron": trim.aileron, "elevator": trim.elevator, "rudder": trim.rudder}[c.role]
    controller.set_task(task)
    truth = placed(TruthEstimator("/vehicle/truth", plant.ned_origin, body=plant.base_path), "part")
    parts = [c for c in vehicle.components if c is not vehicle.controller]
    loop = Loop([*parts, placed(controller, "controller"), truth], device="cpu", mode="captured", seed=0).build()
    plant.reset(base_position=(0.0, 0.0, HEIGHT), base_velocity=(AIRSPEED, 0.0, 0.0))
    q = plant.state.joint_q.numpy()
    q[plant.base_coord + 3 : plant.base_coord + 7] = pitched(trim.alpha)
    plant.state.joint_q.assign(q)
    newton.eval_fk(plant.model, plant.state.joint_q, plant.state.joint_qd, plant.state)
    seen = {"time": [], "position": [], "speed": [], "bank": []}
    try:
        for tick in range(int(round(seconds * 250))):
            loop.tick()
            if tick % 25 == 24:
                pose = plant.state.body_q.numpy()[plant.base].astype(np.float64)
                rotation = quat_to_matrix_np(pose[3:7])
                nose, left = rotation @ np.array([1.0, 0.0, 0.0]), rotation @ np.array([0.0, 1.0, 0.0])
                seen["time"].append((tick + 1) / 250.0)
                seen["position"].append(pose[:3])
                seen["speed"].append(np.linalg.norm(plant.state.body_qd.numpy()[plant.base][:3]))
                # Roll from the left wing's rise (a right bank lifts it): sin φ·cos θ = left_z (ENU up).
                seen["bank"].append(math.asin(left[2] / math.cos(math.asin(nose[2]))))
    finally:
        loop.close()
    return {k: np.array(v) for k, v in seen.items()}


@pytest.fixture(scope="module")
def climb():
    # A line due east through the start (north 0), 20 m above it, at the trim's speed.
    return fly(line_task(AIRSPEED, HEIGHT + 20.0, (0.0, 0.0), (0.0, 1.0)), 30.0)


@pytest.fixture(scope="module")
def faster():
    return fly(line_task(28.0, HEIGHT, (0.0, 0.0), (0.0, 1.0)), 30.0)


@pytest.fixture(scope="module")
def offset_leg():
    # The leg runs east 50 m north of the start: the plane starts 50 m right of it, flying parallel.
    return fly(line_task(AIRSPEED, HEIGHT, (50.0, 0.0), (50.0, 1.0)), 20.0)


@pytest.fixture(scope="module")
def loiter():
    # A clockwise circle of 150 m about the point 150 m south of the start: the plane starts on it, tangent.
    return fly(loiter_task(AIRSPEED, HEIGHT, (-150.0, 0.0), 150.0, clockwise=True), 55.0)


def test_a_height_step_of_20_m_follows_the_first_order_climb_and_holds_the_airspeed(climb):
    # TECS asks for ḣ = k_h·(h_sp − h) with k_h = 0.2 /s (4 m/s at the step, under the 5 m/s limit): the height
    # follows h(t) = 120 − 20·e^(−t/5 s), within 1 m of 120 after 5·ln 20 = 14.98 s. The throttle buys the
    # climb's energy, so the speed stays at 25 m/s: pitch alone would trade 20 m for 25² − 2g·20 → 15.6 m/s.
    t, h = climb["time"], climb["position"][:, 2]
    first_order = 120.0 - 20.0 * np.exp(-t / 5.0)
    assert np.max(np.abs(h - first_order)) < 2.0
    assert np.max(np.abs(climb["speed"] - 25.0)) < 1.5
    assert np.all(np.abs(h[t >= 17.0] - 120.0) < 1.0)
    assert np.max(h) < 120.5  # no overshoot to speak of
    assert np.max(np.abs(climb["position"][:, 1])) < 1.0  # still on its line


def test_an_airspeed_step_to_28_m_s_follows_the_first_order_speed_at_constant_height(faster):
    # TECS asks for V̇ = k_V·(V_sp − V), k_V = 0.2 /s (0.6 m/s² at the step, under the 2 m/s² limit):
    # V(t) = 28 − 3·e^(−t/5 s), 27.7 m/s by 11.5 s; the throttle pays for the kinetic energy, so the height stays.
    t, v = faster["time"], faster["speed"]
    first_order = 28.0 - 3.0 * np.exp(-t / 5.0)
    assert np.max(np.abs(v - first_order)) < 0.5
    assert np.all(np.abs(v[t >= 20.0] - 28.0) < 0.3)
    assert np.max(np.abs(faster["position"][:, 2] - HEIGHT)) < 1.5


def test_l1_converges_on_a_leg_50_m_away_with_its_closed_form_damping(offset_leg):
    # Park, Deyst and How: on a line, d̈ + 2(V/L1)·ḋ + 2(V/L1)²·d = 0, so ω = √2·25/60 = 0.589 rad/s and
    # ζ = 1/√2 whatever the speed. From 50 m at rest in d the first overshoot is 50·e^(−ζπ/√(1−ζ²)) = 50·e^(−π)
    # = 2.16 m, and the envelope (50/√(1−ζ²))·e^(−ζωt) = 70.7·e^(−0.417 t) falls under 2 m at 8.6 s; the first
    # seconds fly at the 45° bank limit (2V²/L1 = 20.8 m/s² asked), which the linear law does not see.
    t, cross = offset_leg["time"], offset_leg["position"][:, 1] - 50.0  # north of the leg: negative is right
    overshoot = np.max(cross)
    assert 1.0 < overshoot < 4.0
    assert np.all(np.abs(cross[t >= 12.0]) < 2.0)
    assert np.max(np.abs(cross[t >= 16.0])) < 0.5
    assert np.max(np.abs(offset_leg["position"][:, 2] - HEIGHT)) < 1.5
    assert np.max(np.abs(offset_leg["speed"] - AIRSPEED)) < 1.5


def test_a_loiter_of_150_m_holds_its_radius_at_the_coordinated_bank(loiter):
    # A level turn of radius R at V banks φ = atan(V²/(g·R)) = atan(625/(9.80665·150)) = atan(0.42490) = 23.02°;
    # L1's point a chord L1 ahead on the circle gives sin η = L1/(2R) and a = V²/R exactly. One lap is
    # 2π·150/25 = 37.7 s; after 15 s of settling, a whole lap stays within 1.5 m of the circle.
    t = loiter["time"]
    east, north = loiter["position"][:, 0], loiter["position"][:, 1]
    radius = np.hypot(east - 0.0, north + 150.0)
    late = t >= 15.0
    assert np.max(np.abs(radius[late] - 150.0)) < 1.5
    bank = np.degrees(loiter["bank"][late])
    assert np.all(np.abs(bank - 23.02) < 1.5)
    assert np.max(np.abs(loiter["position"][late, 2] - HEIGHT)) < 1.0
    assert np.max(np.abs(loiter["speed"][late] - AIRSPEED)) < 0.5
    # It went all the way round: the bearing from the centre swept more than a lap.
    bearing = np.unwrap(np.arctan2(east, north + 150.0))
    assert bearing[-1] - bearing[0] > 2.0 * math.pi


def test_a_vehicle_without_a_wing_is_refused_by_the_fixed_wing_controller():
    path = resolve_asset("vehicle", "x500")
    with pytest.raises(BuildError, match="needs a plane: no wing, propeller, aileron, elevator, rudder"):
        plane_controller("/vehicle/controller", open_stage(path), path, 2.0, G, AIRSPEED)


def test_the_plugin_registers_fixed_wing_and_trims_the_file_s_plane():
    # In its own process: importing the plugin adds a controller to the registry, which the registry's own
    # tests count. The builder trims at 25 m/s: throttle 0.676768 (test_trim_flight.py's) and the file's channels.
    script = (
        "import nexus.control.fixed_wing.plugin\n"
        "from nexus.runtime.assembly import assemble\n"
        f"v = assemble('aerosonde', {VOID!r}, controller='fixed_wing')\n"
        "c = v.controller\n"
        "print(type(c).__name__, round(c.trim.throttle, 4), sorted(c.channels.items()))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == (
        "FixedWingController 0.6768 [('aileron', 0), ('elevator', 1), ('rudder', 2), ('throttle', 4)]")
