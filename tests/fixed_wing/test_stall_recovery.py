"""The flight stack recovers the Aerosonde from stall + 5°: the time to unstall and to recover, the height lost.

Start (the harness of test_fixed_wing_flight.py, with the attitude and speed changed): the Aerosonde from its
file (MuJoCo step, 250 Hz, g = 9.80665 m/s², no ground), 100 m up, moving level due east with wings level and
the nose pitched up to α = θ = stallAngle + 5° = 0.47 + 0.0872665 = 0.5572665 rad (31.93°), surfaces at the
25 m/s trim, no rates; ``plane_controller``'s stack engaged from the first tick on a level leg due east at
25 m/s and 100 m, the truth estimate closing the loops. Two start speeds:

* ``V0 = 10.39 m/s``, the file's stall speed ``√(2mg/(ρS(CL0 + CLα·α0)))`` = √(215.746/(1.2682·0.55·2.8667))
  (the air start's bound, nexus/control/fixed_wing/air_start.py): a plane slowed to its stall speed with the
  nose carried 5° past the stall angle. The wing at α = 0.5573 is on the flat plate's side of the blend
  (σ = 0.98742, CL = 0.51100 where the linear curve gives 3.3563; CD = 3.3563²/(π·0.9·15.245) = 0.26134):
  q̄S = ½·1.2682·10.39²·0.55 = 37.65 N, lift 19.24 N = 0.178 of the weight 107.87 N: it drops.
* ``V0 = 25 m/s``, the cruise: the same stalled wing lifts 0.51100·218.0 N = 111.4 N ≈ the weight, so this
  start tests the pitch recovery without the fall.

Worked by hand (docs/fixed_wing.md, "Stall recovery", has them at length):

* **Unstall.** At α = 0.5573 the pitching moment is Cm = Cm0 + Cmα·α + Cmδe·δe = 0.0135 − 2.74·0.5573 − 0.99·δe;
  the stack's elevator runs to its nose-down stop 0.5236 rad (6.98 rad/s: 0.09 s), so Cm ≈ −2.03, and
  θ̈ = q̄Sc·Cm/Jy = 37.65·0.18994·(−2.03)/1.135 = −12.8 rad/s² (−12.0 with the Cmα part shrinking as α falls). The
  flight path bends down at γ̇ = (L − W)/(mV) = (19.2 − 107.9)/(11·10.39) = −0.78 rad/s, which adds to α. α
  loses 5° = 0.0873 rad when 6.0·t² − 0.78·t = 0.0873: t = 0.20 s. At 25 m/s q̄ is 5.8 times larger and γ̇ ≈ 0:
  6.0·5.8·t² = 0.0873 gives t = 0.05 s.
* **No secondary stall.** Even at the elevator's nose-up stop (−0.5236 rad) the airframe trims at
  α = (Cm0 − Cmδe·0.5236)/(−Cmα) = (0.0135 + 0.5184)/2.74 = 0.194 rad = 11.1°, far below 26.9°: once the nose is
  down, neither the stack nor its limits can hold the wing past stall.
* **Height lost.** With E = h + V²/(2g) the specific total energy [m], TECS asks for Ė_T,sp = ḣ_sp + V·V̇_sp/g
  > 0 all through the recovery (speed below 25 m/s and height at or below 100 m: both goals ≥ 0) and its
  throttle is not saturated, so E never falls below its start: h_min ≥ h0 − (V_b² − V0²)/(2g), V_b the speed at
  the bottom. V_b ≤ 25 m/s (the speed goal) bounds the loss by (625 − 107.95)/19.613 = 26.4 m. Three phases
  estimate it. (1) The nose falls through the horizon, 0 to 0.5 s, at a net ≈ 0.7 g down (the stalled wing's
  0.18 W and the thrust's vertical share 53 N·sin 32° = 0.26 W at the start, both fading): 0.9 m, sinking
  3.4 m/s, the speed up to 10.39 + 0.5·(53 − 10)/11 ≈ 12.4 m/s. (TECS's first throttle: Ė_T,sp = 10.39·2/g =
  2.119 m/s, so 0.6768 + 2.119/20.7 + 0.05·2.119 = 0.885, which the book's propeller turns into 53 N at 10.39 m/s;
  the stalled wing's drag is 0.26134·37.65 = 9.8 N.) (2) The dive at the −15° pitch limit to the 16 m/s at which the lift at the elevator stop's α ≈ 10°
  (CL = 0.23 + 5.61·0.175 = 1.21) carries the weight, √(215.75/(0.6975·1.21)) = 15.99 m/s: from ≈ 12.4 m/s at
  g·sin 15° + (T − D)/m ≈ 2.5 + (48 − 5)/11 = 6.4 m/s², 0.55 s, the sink growing at about half a g to 6.1 m/s:
  2.6 m. (3) The pull-out at that α: the speed goes on to ≈ 22 m/s, so the extra load (V/16)² − 1 ramps from 0
  to 0.89 g, and a deceleration ramping to 8.7 m/s² stops 6.1 m/s of sink in T = 2·6.1/8.7 = 1.4 s, losing
  6.1·T − 8.7·T²/6 = 5.7 m. About 9.2 m in all.
* **Recovered** when α < α0, V ≥ 1.3·10.39 = 13.51 m/s and the climb rate ≥ 0: at the bottom of the pull-out,
  about 0.5 + 0.55 + 1.4 = 2.45 s.
"""

from __future__ import annotations

import math

import newton
import numpy as np
import pytest

from nexus.aero.control_surfaces import ControlSurface
from nexus.control.fixed_wing.controller import line_task, plane_controller
from nexus.core import Loop
from nexus.core.ring import placed
from nexus.estimation.truth import TruthEstimator
from nexus.plant.assets import resolve_asset
from nexus.plant.frames import quat_to_matrix_np
from nexus.plant.loading import open_stage
from nexus.runtime.assembly import assemble
from tests.fixed_wing.wing_stage import aerosonde_wing, pitched, wing_wrench

VOID = "tests/data/void.usda"
HEIGHT = 100.0  # [m]
AIRSPEED = 25.0  # [m/s], the leg's
STALL = 0.47  # [rad], the file's nexus:stallAngle
START_ALPHA = 0.47 + math.radians(5.0)  # [rad], 0.5572665
STALL_SPEED = 10.39  # [m/s], √(2mg/(ρS(CL0 + CLα·α0)))
G = 9.80665  # [m/s²]


def fly_from_stall(speed: float, seconds: float) -> dict:
    """Fly the level leg at 25 m/s and 100 m from the stalled start at ``speed`` [m/s] for ``seconds``: each
    tick's time [s], height [m], speed [m/s], climb rate [m/s], α, pitch and bank [rad]."""
    vehicle = assemble("aerosonde", VOID, controller="hold")
    plant = vehicle.plant
    path = resolve_asset("vehicle", "aerosonde")
    controller = plane_controller(vehicle.controller.name, open_stage(path), path, plant.mass, plant.gravity, AIRSPEED,
                                  origin_altitude=float(plant.origin.altitude))
    trim = controller.trim
    for c in vehicle.components:
        if isinstance(c, ControlSurface):
            c.initial = {"aileron": trim.aileron, "elevator": trim.elevator, "rudder": trim.rudder}[c.role]
    controller.set_task(line_task(AIRSPEED, HEIGHT, (0.0, 0.0), (0.0, 1.0)))
    truth = placed(TruthEstimator("/vehicle/truth", plant.ned_origin, body=plant.base_path), "part")
    parts = [c for c in vehicle.components if c is not vehicle.controller]
    loop = Loop([*parts, placed(controller, "controller"), truth], device="cpu", mode="captured", seed=0).build()
    # Level flight path (velocity due east), the nose START_ALPHA above it: α = θ at the first tick.
    plant.reset(base_position=(0.0, 0.0, HEIGHT), base_velocity=(speed, 0.0, 0.0))
    q = plant.state.joint_q.numpy()
    q[plant.base_coord + 3 : plant.base_coord + 7] = pitched(START_ALPHA)
    plant.state.joint_q.assign(q)
    newton.eval_fk(plant.model, plant.state.joint_q, plant.state.joint_qd, plant.state)
    rows = []
    try:
        for tick in range(int(round(seconds * 250))):
            loop.tick()
            pose = plant.state.body_q.numpy()[plant.base].astype(np.float64)
            velocity = plant.state.body_qd.numpy()[plant.base][:3].astype(np.float64)
            rotation = quat_to_matrix_np(pose[3:7])
            forward, _, up = rotation.T @ velocity  # body FLU; still air, so this is the air's velocity too
            nose, left = rotation @ np.array([1.0, 0.0, 0.0]), rotation @ np.array([0.0, 1.0, 0.0])
            pitch = math.asin(nose[2])
            bank = math.asin(float(np.clip(left[2] / math.cos(pitch), -1.0, 1.0)))
            rows.append(((tick + 1) / 250.0, pose[2], np.linalg.norm(velocity), velocity[2],
                         math.atan2(-up, forward), pitch, bank))
    finally:
        loop.close()
    table = np.array(rows)
    return dict(zip(("time", "height", "speed", "climb", "alpha", "pitch", "bank"), table.T))


def recovery(flight: dict) -> dict:
    """The measured figures: unstall and recovery times [s], height lost [m], the extremes after the start."""
    t, alpha = flight["time"], flight["alpha"]
    unstalled = int(np.argmax(alpha < STALL))
    flying = (alpha < STALL) & (flight["speed"] >= 1.3 * STALL_SPEED) & (flight["climb"] >= 0.0)
    recovered = int(np.argmax(flying))
    energy = flight["height"] + flight["speed"] ** 2 / (2.0 * G)
    return {
        "unstall_time": t[unstalled],
        "recovery_time": t[recovered] if flying.any() else math.inf,
        "height_lost": HEIGHT - flight["height"].min(),
        "lowest_at": t[int(np.argmin(flight["height"]))],
        "alpha_after": flight["alpha"][unstalled:].max(),  # no return past the stall angle
        "pull_out_alpha": flight["alpha"][t >= 0.5].max(),  # the nose once down
        "max_sink": -flight["climb"].min(),
        "max_bank": np.abs(flight["bank"]).max(),
        "energy_drop": energy[0] - energy.min(),
    }


@pytest.fixture(scope="module")
def slow():
    return fly_from_stall(STALL_SPEED, 20.0)


@pytest.fixture(scope="module")
def cruise():
    return fly_from_stall(AIRSPEED, 10.0)


def test_the_wing_at_stall_plus_5_degrees_is_on_the_flat_plate_side_of_the_blend():
    # The curve itself is test_stall_lift.py's; here only the start's own α. The stage on a level body sinking at
    # 20 m/s (q̄S = 139.502 N), as that test does: σ = 1/(1 + e^(−50·0.0872665)) = 0.987424 and
    # CL = 0.012576·3.356265 + 0.987424·2·sin²(0.5572665)·cos(0.5572665) = 0.042208 + 0.987424·0.474785 = 0.511002,
    # below CL(α0) = 1.616216 and far below the linear curve's 3.356.
    force, _ = wing_wrench(aerosonde_wing(), velocity=(20.0 * math.cos(START_ALPHA), 0.0, -20.0 * math.sin(START_ALPHA)))
    lift_coefficient = (force[0] * math.sin(START_ALPHA) + force[2] * math.cos(START_ALPHA)) / 139.502
    assert lift_coefficient == pytest.approx(0.511002, rel=1e-4)
    assert lift_coefficient < 0.35 * 1.616216


def test_from_stall_speed_the_stack_unstalls_in_a_fifth_of_a_second_and_recovers_losing_under_15_m(slow):
    r = recovery(slow)
    assert slow["alpha"][0] == pytest.approx(START_ALPHA, abs=0.01)  # the first tick is stalled
    # α back below 26.93° by the moment balance's 0.20 s (the elevator's lag and the tick: room to 0.4 s).
    assert 0.1 < r["unstall_time"] < 0.4
    # And it stays below: from 0.5 s on (the nose down) at most the elevator stop's 11.1° and the pull-out's overshoot.
    assert r["alpha_after"] < STALL
    assert r["pull_out_alpha"] < math.radians(15.0)
    # Recovered (α < α0, V ≥ 13.51 m/s, climbing) at the pull-out's bottom, about 2.5 s by hand.
    assert 1.5 < r["recovery_time"] < 5.0
    # The energy bound: the total energy never falls (TECS asks for more all through), so the loss is at most the
    # kinetic energy gained, under 26.4 m; the phases give about 9.2 m, asserted within 4 to 15 m.
    assert r["energy_drop"] < 0.05
    assert 4.0 < r["height_lost"] < 15.0
    assert r["max_sink"] < 8.0
    # Wings level in, wings level out: the model's stall is symmetric, the roll loop holds the propeller's torque.
    assert r["max_bank"] < math.radians(5.0)
    # Back on the leg: height and speed close to their goals by 20 s.
    assert abs(slow["height"][-1] - HEIGHT) < 1.0
    assert abs(slow["speed"][-1] - AIRSPEED) < 1.0


def test_from_cruise_speed_the_stalled_wing_still_carries_the_weight_and_the_nose_comes_down_at_once(cruise):
    r = recovery(cruise)
    assert cruise["alpha"][0] == pytest.approx(START_ALPHA, abs=0.01)
    # q̄ 5.8 times the slow start's: the moment balance gives 0.05 s.
    assert r["unstall_time"] < 0.15
    assert r["alpha_after"] < STALL
    assert r["pull_out_alpha"] < math.radians(15.0)
    # Lift ≈ weight at the start and full speed: the loss is the pitch transient's, well under a metre.
    assert r["height_lost"] < 1.0
    assert r["max_bank"] < math.radians(5.0)
    assert abs(cruise["height"][-1] - HEIGHT) < 1.0
    assert abs(cruise["speed"][-1] - AIRSPEED) < 0.5
