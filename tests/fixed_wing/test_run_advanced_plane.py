"""``nexus run --vehicle advanced_plane`` flies the small electric plane's own mission, release to a stop on the
ground, and ends ``done``.

As a user types it (``tests/worlds/flights.py``'s ``fly``: the CLI in this process, the default scene, CPU, 250 Hz,
no --controller, no --duration): the registry gives the plane ``fixed_wing`` and its 300 s; the file's
``NexusFixedWingGainsAPI`` prim gives the stack this plane's gains (trimmed at 15 m/s), its ``NexusAirStartAPI``
releases it 1.5 m above its place on its wheels at 10 m/s east, trimmed, and its ``NexusPlaneMissionAPI`` climbs out
at full throttle to 5 m, flies the 200 m square (waypoints, north-east [m]: (0, 200), (200, 200), (200, 0), (0, 0);
acceptance 36 m) at 50 m and 15 m/s, loiters 40 s on 60 m about (100, 100), descends on the approach circle to 15 m
at 10 m/s, and lands at the origin flying east down a 5° glide slope with a 1 s flare. Every expected figure is
worked by hand here from the file's numbers (docs/fixed_wing.md, "nexus run --vehicle advanced_plane").
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from click.testing import CliRunner

from nexus.cli import main
from nexus.control.fixed_wing.gains import vehicle_gains
from nexus.plant.assets import resolve_asset
from nexus.plant.loading import open_stage
from tests.worlds.flights import bits_differ, fly

WAYPOINTS = [(0.0, 0.0), (0.0, 200.0), (200.0, 200.0), (200.0, 0.0), (0.0, 0.0)]  # the origin, then the square
ACCEPTANCE, L1 = 36.0, 36.0  # [m]
AIRSPEED, HEIGHT = 15.0, 50.0  # [m/s], [m]
LOITER_CENTRE, LOITER_RADIUS = (100.0, 100.0), 60.0  # [m]
APPROACH_SPEED, APPROACH_HEIGHT = 10.0, 15.0  # [m/s], [m]
SLOPE = math.tan(math.radians(5.0))  # tan γ [-]
FLARE_TIME = 1.0  # [s]
G = 9.80665  # the scene's gravity [m/s²]
DT = 0.004  # [s]
REST = 0.2  # the base's height on its wheels [m]: wheel centres 0.18 m below it, radius 0.02 m
LAUNCH, ROUTE, LOITER, DESCENT, APPROACH, FINAL, FLARE, ROLLOUT = range(8)

# The airframe (vehicles/advanced_plane.usda's numbers, typed here).
MASS, RHO, AREA, SPAN, CHORD, OSWALD = 1.0, 1.2041, 0.34, 1.486607, 0.22, 0.97
CL0, CLA, CLDE, CDP, CDDE = 0.15188, 5.015, 0.6128357, 0.029, 0.01569904
CM0, CMA, CMQ, CMDE = -0.0078436, -3.1994205, -19.978667, -1.8123905
JX, JY = 0.197563, 0.1458929
CLP, CLDA = -0.487407, 0.3817045
STALL_ANGLE, SHARPNESS = 0.3391428, 15.0
# The propeller and motor: thrust ρ(Ω/2π)²D⁴C_T, torque ρ(Ω/2π)²D⁵C_Q; V_in = 16 V·δt on K = 60/(2π·954.9297) V·s/rad,
# R = 0.01 Ω, no no-load current (docs/fixed_wing.md, "The model": the motor's torque meets the propeller's).
DIAMETER, CT0, CQ0, KV_RPM, VOLTS, OHMS = 0.2, 0.1751746, 0.008758731, 954.9297, 16.0, 0.01


def thrust(throttle: float) -> float:
    """[N]: the motor's steady speed (the larger root of a·Ω² + b·Ω + c = 0), then the thrust."""
    k = 60.0 / (2.0 * math.pi * KV_RPM)
    a = RHO * DIAMETER ** 5 * CQ0 / (2.0 * math.pi) ** 2
    b = k * k / OHMS
    c = -k * VOLTS * throttle / OHMS
    omega = (-b + math.sqrt(b * b - 4.0 * a * c)) / (2.0 * a)
    return RHO * (omega / (2.0 * math.pi)) ** 2 * DIAMETER ** 4 * CT0


def lift_coefficient(alpha: float) -> float:
    """Beard and McLain's blend (eq. 4.9-4.10) of the linear lift and the flat plate."""
    m, a0 = SHARPNESS, STALL_ANGLE
    sigma = (1 + math.exp(-m * (alpha - a0)) + math.exp(m * (alpha + a0))) / (
        (1 + math.exp(-m * (alpha - a0))) * (1 + math.exp(m * (alpha + a0))))
    return (1 - sigma) * (CL0 + CLA * alpha) + sigma * 2 * math.copysign(1.0, alpha) * math.sin(alpha) ** 2 * math.cos(alpha)


def trim(speed: float) -> np.ndarray:
    """(α [rad], δe [rad], δt) flying level at ``speed``: body x and z forces and the pitch moment zero (pitch = α,
    the thrust along the nose, the polar's drag on the linear lift, the elevator's lift and drag), by Newton's
    method on a finite-difference Jacobian; written from the book's equations, no Nexus code."""
    qs = 0.5 * RHO * speed ** 2 * AREA
    aspect = SPAN ** 2 / AREA

    def residual(x):
        alpha, elevator, throttle = x
        lift = qs * (lift_coefficient(alpha) + CLDE * elevator)
        drag = qs * (CDP + (CL0 + CLA * alpha) ** 2 / (math.pi * OSWALD * aspect) + CDDE * elevator)
        fx = thrust(throttle) - math.cos(alpha) * drag + math.sin(alpha) * lift - MASS * G * math.sin(alpha)
        fz = -math.sin(alpha) * drag - math.cos(alpha) * lift + MASS * G * math.cos(alpha)
        return np.array([fx, fz, qs * CHORD * (CM0 + CMA * alpha + CMDE * elevator)])

    x = np.array([0.05, 0.0, 0.3])
    for _ in range(30):
        f = residual(x)
        jacobian = np.column_stack([(residual(x + h) - f) / 1e-7 for h in np.eye(3) * 1e-7])
        x = x - np.linalg.solve(jacobian, f)
    assert np.max(np.abs(residual(x))) < 1e-9
    return x


@pytest.fixture(scope="module")
def flown(tmp_path_factory):
    return fly(tmp_path_factory.mktemp("advanced_plane") / "one", "--vehicle", "advanced_plane")


def columns(flight):
    r = flight.record
    north, east = r["estimate.position[0]"].to_numpy(), r["estimate.position[1]"].to_numpy()
    height = -r["estimate.position[2]"].to_numpy()
    speed = np.sqrt(sum(r[f"estimate.velocity[{i}]"].to_numpy() ** 2 for i in range(3)))
    return r.time.to_numpy(), north, east, height, speed, r.plane_leg.to_numpy(), r.plane_phase.to_numpy()


def roll_of(record) -> np.ndarray:
    """Bank [°] of the estimate's FRD-to-NED quaternion (x, y, z, w)."""
    x, y, z, w = (record[f"estimate.attitude[{i}]"].to_numpy() for i in range(4))
    return np.degrees(np.arctan2(2.0 * (w * x + y * z), 1.0 - 2.0 * (x * x + y * y)))


def test_the_file_s_gains_are_its_own_and_a_file_without_them_flies_the_aerosonde_s():
    path = resolve_asset("vehicle", "advanced_plane")
    gains = vehicle_gains(open_stage(path), path)
    # k_T = dT/dδt·V/(m·g) at the 15 m/s trim's throttle 0.25758 (docs/fixed_wing.md, "Trim and flight at 15 m/s"):
    # the motor's thrust curve here gives dT/dδt = 11.16 N, so k_T = 11.16·15/9.80665 = 17.06 m/s; the file says 17.1.
    slope = (thrust(0.25758 + 1e-5) - thrust(0.25758 - 1e-5)) / 2e-5
    assert abs(slope - 11.156) < 0.01 and abs(slope * AIRSPEED / (MASS * G) - 17.06) < 0.01
    assert gains.energy_rate_per_throttle == pytest.approx(17.1, abs=1e-5)
    # Pitch by successive loop closure at 15 m/s (Beard and McLain ch. 6): a_θ1 = −ρVc²S·Cmq/(4Jy) = 10.18 /s,
    # a_θ2 = −ρV²cS·Cmα/(2Jy) = 222.2 /s², a_θ3 = ρV²cS·Cmδe/(2Jy) = −125.9 /s²; ω = 22 rad/s, ζ = 0.7:
    # k_θ = (ω² − a_θ2)/|a_θ3| = 2.08, k_q = (2ζω − a_θ1)/|a_θ3| = 0.164.
    a1 = -RHO * AIRSPEED * CHORD ** 2 * AREA * CMQ / (4 * JY)
    a2 = -RHO * AIRSPEED ** 2 * CHORD * AREA * CMA / (2 * JY)
    a3 = RHO * AIRSPEED ** 2 * CHORD * AREA * CMDE / (2 * JY)
    assert abs(a1 - 10.18) < 0.01 and abs(a2 - 222.2) < 0.1 and abs(a3 + 125.9) < 0.1
    assert abs((22.0 ** 2 - a2) / abs(a3) - 2.08) < 0.005 and abs((2 * 0.7 * 22.0 - a1) / abs(a3) - 0.164) < 0.001
    assert gains.pitch_p == pytest.approx(2.08, abs=1e-6) and gains.pitch_rate_d == pytest.approx(0.164, abs=1e-6)
    # Roll: a_φ1 = −¼ρVSb²·Cℓp/Jx = 8.37 /s, a_φ2 = ½ρV²Sb·Cℓδa/Jx = 132.3 /s² (no Jxz); ω = 12 rad/s (the
    # Aerosonde's), ζ = 0.7: k_φ = ω²/a_φ2 = 1.09, k_p = (2ζω − a_φ1)/a_φ2 = 0.064.
    b1 = -0.25 * RHO * AIRSPEED * AREA * SPAN ** 2 * CLP / JX
    b2 = 0.5 * RHO * AIRSPEED ** 2 * AREA * SPAN * CLDA / JX
    assert abs(b1 - 8.37) < 0.01 and abs(b2 - 132.3) < 0.1
    assert gains.roll_p == pytest.approx(1.09, abs=1e-6) and gains.roll_rate_d == pytest.approx(0.064, abs=1e-6)
    assert gains.trim_airspeed == 15.0 and gains.l1 == 36.0 and gains.climb_max == 3.0 and gains.sink_max == 3.0
    # The Aerosonde's file has no gains prim: the defaults, its hand-worked values (docs/fixed_wing.md, "Flight stack").
    path = resolve_asset("vehicle", "aerosonde")
    aerosonde = vehicle_gains(open_stage(path), path)
    assert (aerosonde.trim_airspeed, aerosonde.energy_rate_per_throttle, aerosonde.l1) == (25.0, 20.7, 60.0)
    assert (aerosonde.pitch_p, aerosonde.pitch_rate_d, aerosonde.roll_p, aerosonde.roll_rate_d) == (3.46, 0.435, 1.1, 0.02)
    assert (aerosonde.height_p, aerosonde.speed_p, aerosonde.climb_max, aerosonde.sink_max) == (0.2, 0.2, 5.0, 5.0)


def test_the_run_flies_every_phase_in_order_and_ends_done_stopped_on_the_ground(flown):
    assert flown.info["exit_reason"] == "done"
    assert flown.info["options"]["controller"] == "fixed_wing" and flown.info["duration_requested_s"] == 300.0
    t, *_, speed, leg, phase = columns(flown)
    assert sorted(set(phase.tolist())) == list(range(8)) and np.all(np.diff(phase) >= 0)
    assert sorted(set(leg.tolist())) == [0, 1, 2, 3, 4] and np.all(np.diff(leg) >= 0)
    on = phase == LOITER
    assert abs(t[on][-1] + DT - t[on][0] - 40.0) <= 2 * DT
    assert phase[-1] == ROLLOUT and speed[-1] < 1.0 and speed[-2] >= 1.0
    # By hand: the square's 4 × (200 − 36) m and turns at 15 m/s ≈ 50 s, 40 s of loiter, the descent of 35 m at up to
    # 3 m/s and a part of the 60 m circle at 10 m/s, 171 m of final at 10 m/s (17 s), and a roll-out from 10 m/s at
    # about μg = 0.49 m/s² (about 20 s, less the drag's share at speed): between 120 s and 220 s.
    assert 120.0 < t[-1] < 220.0


def test_the_release_is_the_trim_at_10_m_s_1_5_m_up(flown):
    # Stall speed as the air start bounds it: √(2mg/(ρS(CL0 + CLα·α0))) = √(19.6133/(0.409394·1.852654)) = 5.09 m/s;
    # the release at 10 m/s is twice it (and 1.55 times the blended wing's own 6.46 m/s, CL_max 1.148 at 15.45°).
    stall = math.sqrt(2 * MASS * G / (RHO * AREA * (CL0 + CLA * STALL_ANGLE)))
    assert abs(stall - 5.09) < 0.005
    alpha, elevator, throttle = trim(10.0)
    # The root solve at 10 m/s: α 4.9467°, δe −8.9804° (trailing edge up), δt 0.2034; at 15 m/s the same solve gives
    # α 0.9636°, δe −1.9490°, Nexus's trim in docs/fixed_wing.md ("Trim and flight at 15 m/s").
    assert abs(math.degrees(alpha) - 4.9467) < 1e-3 and abs(math.degrees(elevator) + 8.9804) < 1e-3
    assert abs(throttle - 0.2034) < 1e-3
    check = trim(15.0)
    assert abs(math.degrees(check[0]) - 0.9636) < 1e-3 and abs(math.degrees(check[1]) + 1.9490) < 1e-3
    first = flown.record.iloc[0]
    # The base rests 0.2 m up on its wheels; the start lifts it 1.5 m more.
    assert abs(first["body/base.pose[2]"] - (REST + 1.5)) < 1e-3 and abs(first["body/base.velocity[0]"] - 10.0) < 2e-2
    pitch = math.degrees(-2.0 * math.asin(first["body/base.pose[4]"]))  # a nose-up turn about FLU +y is negative
    assert abs(pitch - math.degrees(alpha)) < 0.01
    assert abs(math.degrees(first["surface/elevator"]) - math.degrees(elevator)) < 0.02


def test_the_climb_out_is_at_full_throttle_with_the_wings_level_and_never_sinks(flown):
    t, _, _, height, speed, _, phase = columns(flown)
    on = phase == LAUNCH
    assert np.all(flown.record["controls[4]"].to_numpy()[on] == 1.0)
    assert np.max(np.abs(roll_of(flown.record)[on])) < 10.0
    assert np.min(height[on]) >= 1.5 - 1e-3
    # Full throttle is 21.3 N on a 1 kg plane (a thrust-to-weight of 2.2): it climbs through 5 m within 2 s (flown
    # 0.78 s), gaining speed.
    assert abs(thrust(1.0) - 21.31) < 0.01
    assert t[on][-1] < 2.0 and speed[on][-1] > 15.0


def test_each_leg_is_tracked_after_its_turn(flown):
    t, north, east, *_, leg, phase = columns(flown)
    # L1 = 36 m at 15 m/s: ω = √2·15/36 = 0.589 rad/s (the Aerosonde's: L1 scaled with the speed keeps its 10.7 s
    # period), ζ = 1/√2; from 36 m off the new line the envelope 36·e^(−ζωt) is 0.56 m after 10 s. Bound: 1.5 m.
    omega = math.sqrt(2.0) * AIRSPEED / L1
    assert abs(omega - 0.589) < 1e-3 and 36.0 * math.exp(-omega / math.sqrt(2.0) * 10.0) < 0.6
    for k in range(4):
        a, b = np.array(WAYPOINTS[k]), np.array(WAYPOINTS[k + 1])
        along = (b - a) / np.linalg.norm(b - a)
        on = (leg == k) & (phase <= ROUTE)
        offset = np.stack([north[on], east[on]], 1) - a
        cross = offset[:, 0] * along[1] - offset[:, 1] * along[0]
        if k == 0:  # released on the line, heading along it
            assert np.max(np.abs(cross)) < 0.5
            continue
        settled = t[on] >= t[on][0] + 10.0
        assert np.max(np.abs(cross)) <= ACCEPTANCE + 1.0, k
        assert np.max(np.abs(cross[settled])) < 1.5, (k, np.max(np.abs(cross[settled])))
    # The loiter: on the 60 m circle within 1 m from 20 s after it began (bank atan(15²/(g·60)) = 20.9°).
    on = phase == LOITER
    radius = np.hypot(north[on] - LOITER_CENTRE[0], east[on] - LOITER_CENTRE[1])
    assert np.max(np.abs(radius[t[on] >= t[on][0] + 20.0] - LOITER_RADIUS)) < 1.0


def test_airspeed_and_height_hold_through_the_turns(flown):
    t, _, _, height, speed, _, phase = columns(flown)
    # From 20 s on, through each turn of the square and the loiter. The climb from 5 m runs at its 3 m/s limit to 15 m
    # below 50 m (at 0.8 + 30/3 = 10.8 s), then the height loop's 5 s exponential leaves 15·e^(−9.2/5) = 2.4 m at 20 s.
    on = (phase >= ROUTE) & (phase <= LOITER) & (t >= 20.0)
    assert np.max(np.abs(speed[on] - AIRSPEED)) < 1.0
    assert np.max(np.abs(height[on] - HEIGHT)) < 4.0


def test_the_approach_circle_is_tangent_to_the_final_at_the_glide_slope_s_entry(flown):
    t, north, east, height, speed, _, phase = columns(flown)
    # The entry: 15 m / tan 5° = 171.45 m west of the touchdown point; the anticlockwise circle's centre 60 m to the
    # left of the eastward course, (60, −171.45). The final begins within 0.3 radii (18 m) of the entry.
    run_in = APPROACH_HEIGHT / SLOPE
    assert abs(run_in - 171.45) < 0.01
    start = np.argmax(phase == FINAL)
    assert math.hypot(north[start], east[start] + run_in) < 0.3 * LOITER_RADIUS
    on = phase == APPROACH
    error = np.abs(np.hypot(north[on] - LOITER_RADIUS, east[on] + run_in) - LOITER_RADIUS)
    assert np.max(error) < 8.0 and np.max(error[t[on] >= t[on][0] + 10.0]) < 1.0
    # The descent hands over within 2 m of the approach height; it goes on slowing from the descent's speed.
    assert np.max(np.abs(height[on] - APPROACH_HEIGHT)) < 2.5 and np.max(np.abs(speed[on] - APPROACH_SPEED)) < 1.5


def test_the_final_flies_the_glide_slope(flown):
    t, north, east, height, speed, _, phase = columns(flown)
    # The height goal tan γ·(distance to go) with the glide's sink V·tan γ = 10·0.0875 = 0.875 m/s as feed-forward.
    # From 5 s into the final (17 s long): within 0.75 m of the slope, 1.5 m of the centre line, 0.5 m/s of 10 m/s.
    on = phase == FINAL
    settled = on & (t >= t[on][0] + 5.0)
    assert np.max(np.abs(height[settled] - SLOPE * (0.0 - east[settled]))) < 0.75
    assert np.max(np.abs(north[settled])) < 1.5
    assert np.max(np.abs(speed[settled] - APPROACH_SPEED)) < 0.5


def test_the_flare_and_the_touchdown(flown):
    t, north, east, height, speed, _, phase = columns(flown)
    # The flare begins where the glide's sink equals h/τ: h = τ·V·sin γ = 1·10·sin 5° = 0.8716 m, 9.96 m before the
    # touchdown point on the slope (flown: 0.870 m, 7.9 m before: the plane rides 0.2 m above the slope there).
    flare_height = FLARE_TIME * APPROACH_SPEED * math.sin(math.radians(5.0))
    assert abs(flare_height - 0.8716) < 1e-4
    start = np.argmax(phase == FLARE)
    assert abs(height[start] - flare_height) < 0.02 and abs(east[start] + flare_height / SLOPE) < 3.0
    assert np.all(flown.record["controls[4]"].to_numpy()[phase >= FLARE] == 0.0)  # idle from the flare on
    # The touchdown sink. The roll-out begins 0.1 m above the resting height (the mission's touchdown height) at the
    # flare's 0.28 m/s; its centred elevator drops the nose. With no lift at all the last 0.09 m to the wheels would
    # end at √(0.28² + 2·9.80665·0.09) = 1.35 m/s: the bound, which the wing, still carrying most of the weight, keeps
    # well under (flown 0.75 m/s; the crash limit is 3 m/s).
    bound = math.sqrt(0.28 ** 2 + 2 * G * 0.09)
    assert abs(bound - 1.35) < 0.01
    crash = flown.info["crash"]
    assert crash["crashed"] is None and crash["hardest_touchdown_m_s"] < 1.0 < bound
    contact = int(crash["hardest_touchdown_tick"]) - 1  # the row of that tick
    assert phase[contact] == ROLLOUT
    # Where: the ideal exponential from 0.87 m (τ = 1 s) reaches the 0.2 m/s floor at 0.2 m after ln(0.87/0.2) =
    # 1.47 s, then 1 s at the floor: 2.5 s at 10 m/s, 25 m from the flare's start, 15 m past the point; the roll-out's
    # switch 0.1 m up ends it sooner (flown 8.1 m past). On the centre line within 0.5 m.
    assert -5.0 < east[contact] < 20.0 and abs(north[contact]) < 0.5


def test_the_roll_out_slows_at_the_wheels_rolling_resistance(flown):
    t, _, _, height, _, _, phase = columns(flown)
    r = flown.record
    ground = np.hypot(r["estimate.velocity[0]"].to_numpy(), r["estimate.velocity[1]"].to_numpy())
    on = phase == ROLLOUT
    # On three level wheels α = 0: CL = 0.150 (σ(0) = 0.0122 of the flat plate's 0), CD = 0.029 + 0.15188²/(π·0.97·6.5)
    # = 0.03016. Between 2 and 1.2 m/s (mean V² 2.72 m²/s², q̄S = 0.557 N) the drag adds 0.0168 m/s² and the lift takes
    # 0.05·0.0835 = 0.0042 m/s² off the friction μg = 0.4903: 0.503 m/s² (flown 0.501).
    a = np.argmax(on & (ground <= 2.0))
    b = np.argmax(on & (ground <= 1.2))
    deceleration = (ground[a] - ground[b]) / (t[b] - t[a])
    assert abs(deceleration - 0.503) < 0.005, deceleration
    assert abs(deceleration - 0.05 * G) < 0.02
    assert np.max(np.abs(height[on & (t > t[on][0] + 2.0)])) < 0.02  # on its wheels, not bouncing


def test_world_i_of_n_is_the_world_flown_alone_bit_for_bit(tmp_path):
    # Three worlds (no variation: a plane cannot draw one yet), each placed at its release by the start-up; world 2
    # flown alone (--world-of) flies the same bits, and so does world 0 (the plane has no sensors to draw noise).
    batch = fly(tmp_path / "n3", "--vehicle", "advanced_plane", "--duration", "20", "--worlds", "3")
    alone = fly(tmp_path / "alone2", "--world-of", f"{batch.out}:2")
    assert bits_differ(batch.world(2), alone.world(0)) == []
    assert bits_differ(batch.world(0), batch.world(2)) == []
    world = batch.world(2)  # the climb-out, leg 0 (its switch at 9.3 s) and into leg 1, climbing
    assert world.plane_leg.iloc[-1] >= 1 and world.plane_phase.iloc[-1] == ROUTE
    assert -world["estimate.position[2]"].iloc[-1] > 30.0


def test_a_bad_gain_is_refused_in_one_line_before_any_stage_runs(tmp_path):
    text = resolve_asset("vehicle", "advanced_plane").read_text()
    assert "float nexus:rollLimit" not in text
    bad = tmp_path / "bad_gains.usda"
    # A bank limit of 90° (FW_R_LIM's bound here is 80° = 1.3962634 rad: a level turn at 90° needs infinite lift).
    bad.write_text(text.replace("float nexus:l1Distance = 36", "float nexus:l1Distance = 36\n        float nexus:rollLimit = 1.5707964"))
    result = CliRunner().invoke(main, ["run", "--device", "cpu", "--quiet", "--out", str(tmp_path / "bad"),
                                       "--vehicle", str(bad), "--duration", "1"])
    assert result.exit_code != 0
    lines = [line for line in result.output.splitlines() if "nexus:rollLimit" in line]
    assert len(lines) == 1, result.output
    assert "bad_gains.usda: fixed-wing gains prim /vehicle/fixed_wing: nexus:rollLimit is 1.570796 rad" in lines[0]
    assert "in (0, 1.39626]" in lines[0]
    info = json.loads((tmp_path / "bad" / "run.json").read_text())
    assert info["exit_reason"] == "build-error" and info["ticks"] == 0  # refused before any stage ran
