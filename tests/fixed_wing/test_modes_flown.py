"""The bare airframe's longitudinal modes, flown: Nexus's Aerosonde answers an elevator doublet with the book's modes.

Issue 48, point 4, "Modes": the Aerosonde assembled from its file as ``nexus run`` assembles it (MuJoCo's step,
250 Hz) starts at Nexus's trim at 25 m/s, 100 m up, level, in a scene with the book's gravity (tests/data/
void.usda with 9.81 m/s² instead of 9.80665: the book's and JSBSim's apparent g). The ``hold`` controller holds
the trim's throttle and surfaces (no loop closed: the modes belong to the airframe) and flies the stick-fixed
doublet of tools/jsbsim_aerosonde.py: the elevator at trim + 2° (trailing edge down) from 1 s to 2 s, trim − 2°
from 2 s to 3 s, then trim, to 35 s (where the JSBSim fit stops: the book's Aerosonde is spirally unstable).
The short period and phugoid are fitted from the flown u, w, q, θ by :func:`tests.fixed_wing.mode_fit.fit_modes`
over 3 s to 35 s and compared with the eigenvalues of the book's closed-form longitudinal matrix at the book's
trim (tests/fixed_wing/book_model.py, which shares no code with Nexus).

The integrator: MuJoCo's (``implicitfast``, which with no joint damping or actuators is its semi-implicit
Euler): each 4 ms step takes the velocities from the forces at the step's start, then the pose from the new
velocities; the free body's linear velocity lives in the world frame, so the body-axis (u, w) are turned by the
new attitude. The book's equations stepped that way (:func:`mujoco_step`, written here from MuJoCo's
documented scheme) reproduce the flown trace to 1e-5, and their discrete map's short period is 11.118 rad/s,
damping 0.4435 (continuous: 11.009, 0.4431): +1.0 % in frequency, +0.1 % in damping. Explicit Euler at the same
step, which JSBSim's default is, would fly a damping of 0.425 (−4 %; docs/fixed_wing_jsbsim.md saw 0.443 ->
0.420 at 240 Hz): taking the kinematic coupling (u·q in ẇ) with the new pitch rate, as MuJoCo's world-frame
velocity does, cancels that loss.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import newton
import numpy as np
import pytest

from nexus.aero.control_surfaces import ControlSurface
from nexus.aero.fixed_wing_forces import FixedWingAero
from nexus.aero.propeller_advance import AdvanceRatioPropeller
from nexus.aero.trim import Trim, straight_and_level
from nexus.core import Loop
from nexus.plant.frames import quat_to_matrix_np
from nexus.runtime.assembly import assemble
from tests.fixed_wing.book_model import AEROSONDE, longitudinal_derivatives, longitudinal_modes, trim
from tests.fixed_wing.mode_fit import fit_modes
from tests.fixed_wing.wing_stage import pitched

VOID = Path(__file__).resolve().parents[1] / "data" / "void.usda"
BOOK_GRAVITY = 9.81  # [m/s²], the book's (and JSBSim's apparent gravity at 49.6° N)
AIRSPEED = 25.0  # [m/s]
HEIGHT = 100.0  # [m]
DT = 0.004  # [s], Nexus's tick at 250 Hz
SECONDS = 35.0  # [s], the JSBSim fit's end
DOUBLET = math.radians(2.0)  # [rad], each way for 1 s
FIT_WINDOW = (3.0, 35.0)  # [s]: the free response, as the JSBSim trace's fit takes it
FIT_EVERY = 5  # ticks between the fit's samples: 50 Hz (JSBSim's trace has 40 Hz)


def doublet(t: float) -> float:
    """The elevator's offset from trim at time ``t`` [s]: +2° over [1, 2), −2° over [2, 3), else 0 [rad]."""
    if 1.0 <= t < 2.0:
        return DOUBLET
    if 2.0 <= t < 3.0:
        return -DOUBLET
    return 0.0


@dataclass(frozen=True)
class Flight:
    """The doublet as flown, one sample at the start and one after each tick: body FRD u, w [m/s], q [rad/s],
    pitch θ [rad], height h [m], airspeed Va [m/s], bank φ [rad], the elevator's deflection in the tick that
    ended at t [rad]; and the trim it started at."""

    t: np.ndarray
    u: np.ndarray
    w: np.ndarray
    q: np.ndarray
    theta: np.ndarray
    h: np.ndarray
    Va: np.ndarray
    phi: np.ndarray
    elevator: np.ndarray
    trim: Trim


def book_gravity_scene(folder: Path) -> Path:
    """tests/data/void.usda (gravity, no ground) with the book's 9.81 m/s², written into ``folder``."""
    text = VOID.read_text()
    authored = "float physics:gravityMagnitude = 9.80665"
    assert authored in text, f"{VOID} no longer authors '{authored}'"
    scene = folder / "void_book_gravity.usda"
    scene.write_text(text.replace(authored, f"float physics:gravityMagnitude = {BOOK_GRAVITY}"))
    return scene


def fly_doublet(scene: Path, vehicle_file: str | Path = "aerosonde") -> Flight:
    """Fly the Aerosonde from its 25 m/s trim through the doublet, stick fixed, for :data:`SECONDS`.

    Started as tests/fixed_wing/test_trim_flight.py starts it (100 m up, flying east at 25 m/s, pitched to the
    trim's α, surfaces at their trim) and with the trim's row already in ``controls`` for the first tick (the
    surfaces read the row the controller wrote at the end of the tick before). The controller stage runs last,
    so the row set before tick k moves the surfaces in tick k + 1: the row set before each tick is the
    command for the tick after it. The elevator then moves at its rate limit (6.98 rad/s, 0.0279 rad a tick):
    2° takes two ticks, where JSBSim's elevator steps at once.
    """
    vehicle = assemble(vehicle_file, scene, controller="hold")
    plant = vehicle.plant
    part = {type(c): c for c in vehicle.components}
    trimmed = straight_and_level(part[FixedWingAero].values, part[AdvanceRatioPropeller].values, plant.mass,
                                 plant.gravity, AIRSPEED)
    surfaces = {c.role: c for c in vehicle.components if isinstance(c, ControlSurface)}
    row = np.zeros(16, dtype=np.float32)
    for role, deflection in (("aileron", trimmed.aileron), ("elevator", trimmed.elevator),
                             ("rudder", trimmed.rudder)):
        surfaces[role].initial = deflection
        row[surfaces[role].channel] = deflection / surfaces[role].travel
    row[part[AdvanceRatioPropeller].channel] = trimmed.throttle
    elevator = surfaces["elevator"]
    vehicle.controller.set(row)
    loop = Loop(vehicle.components, device="cpu", mode="captured", seed=0).build()
    loop.output("controls").assign(row[None, :])
    plant.reset(base_position=(0.0, 0.0, HEIGHT), base_velocity=(AIRSPEED, 0.0, 0.0))
    joint_q = plant.state.joint_q.numpy()
    joint_q[plant.base_coord + 3 : plant.base_coord + 7] = pitched(trimmed.alpha)
    plant.state.joint_q.assign(joint_q)
    newton.eval_fk(plant.model, plant.state.joint_q, plant.state.joint_qd, plant.state)
    deflection = loop.output("surface/elevator")
    body_q, body_qd = plant.state.body_q, plant.state.body_qd
    samples = []

    def sample(elevator_now: float) -> None:
        pose = body_q.numpy()[plant.base].astype(np.float64)
        motion = body_qd.numpy()[plant.base].astype(np.float64)
        rotation = quat_to_matrix_np(pose[3:7])
        velocity, rates = rotation.T @ motion[:3], rotation.T @ motion[3:]  # body FLU
        nose, left = rotation[:, 0], rotation[:, 1]
        # FLU to the book's FRD: u = x, w = −z, q = −(rate about +y).
        samples.append((velocity[0], -velocity[2], -rates[1], math.asin(nose[2]), pose[2],
                        float(np.linalg.norm(motion[:3])), math.asin(left[2]), elevator_now))

    ticks = round(SECONDS / DT)
    sample(trimmed.elevator)
    try:
        for tick in range(ticks):
            command = row.copy()
            command[elevator.channel] = (trimmed.elevator + doublet(round((tick + 1) * DT, 9))) / elevator.travel
            vehicle.controller.set(command)
            loop.tick()
            sample(float(deflection.numpy()[0]))
    finally:
        loop.close()
    columns = np.array(samples).T
    return Flight(np.arange(ticks + 1) * DT, *columns, trimmed)


def mujoco_step(x: np.ndarray, elevator: float, throttle: float, dt: float = DT, p=AEROSONDE) -> np.ndarray:
    """The book's longitudinal equations, state (u, w, q, θ), stepped as MuJoCo's semi-implicit Euler steps a free
    body (mujoco.readthedocs.io, Computation, Numerical integration): the rate and the world-frame velocity from
    the forces at the step's start, then the attitude from the new rate, and (u, w) read in the new attitude.
    """
    u, w, q, theta = x
    du, dw, dq = longitudinal_derivatives(u, w, q, theta, elevator, throttle, p)
    # The specific force of the wing and propeller in the body axes: the book's du, dw less the kinematic and
    # gravity terms (du = −qw − g sinθ + fx/m, dw = qu + g cosθ + fz/m).
    fx, fz = du + q * w + p.g * math.sin(theta), dw - q * u - p.g * math.cos(theta)
    q_new = q + dt * dq
    theta_new = theta + dt * q_new
    c, s = math.cos(theta), math.sin(theta)
    # World (forward, down) velocity: body axes turned nose up by θ; gravity along world down.
    forward = c * u + s * w + dt * (c * fx + s * fz)
    down = -s * u + c * w + dt * (-s * fx + c * fz + p.g)
    c, s = math.cos(theta_new), math.sin(theta_new)
    return np.array([c * forward - s * down, s * forward + c * down, q_new, theta_new])


def explicit_euler_step(x: np.ndarray, elevator: float, throttle: float, dt: float = DT, p=AEROSONDE) -> np.ndarray:
    """The same equations stepped by explicit Euler: every derivative from the step's start (JSBSim's default)."""
    du, dw, dq = longitudinal_derivatives(*x, elevator, throttle, p)
    return x + dt * np.array([du, dw, dq, x[2]])


def discrete_modes(step, book_trim, dt: float = DT) -> dict[str, tuple[float, float]]:
    """The short period and phugoid, (ωn [rad/s], ζ), of ``step``'s map linearized at the book's trim by central
    differences: each discrete eigenvalue z read as the continuous ln(z) / dt."""
    x0 = np.array([book_trim.u, book_trim.w, 0.0, book_trim.theta])
    jacobian = np.empty((4, 4))
    for j in range(4):
        h = np.zeros(4)
        h[j] = 1e-6
        jacobian[:, j] = (step(x0 + h, book_trim.elevator, book_trim.throttle)
                          - step(x0 - h, book_trim.elevator, book_trim.throttle)) / 2e-6
    poles = sorted((z for z in np.log(np.linalg.eigvals(jacobian).astype(complex)) / dt if z.imag > 1e-9), key=abs)
    return {name: (float(abs(z)), float(-z.real / abs(z))) for name, z in zip(("phugoid", "short_period"), poles)}


def flown_modes(flight: Flight) -> dict[str, tuple[float, float]]:
    """The modes fitted from the flight's u, w, q, θ (less their trimmed start) over :data:`FIT_WINDOW`."""
    index = np.arange(0, len(flight.t), FIT_EVERY)
    index = index[(flight.t[index] >= FIT_WINDOW[0] - 1e-9) & (flight.t[index] <= FIT_WINDOW[1] + 1e-9)]
    response = np.column_stack([getattr(flight, k)[index] - getattr(flight, k)[0] for k in ("u", "w", "q", "theta")])
    phugoid, short_period = fit_modes(flight.t[index], response)
    return {"phugoid": phugoid, "short_period": short_period}


@pytest.fixture(scope="module")
def flight(tmp_path_factory) -> Flight:
    return fly_doublet(book_gravity_scene(tmp_path_factory.mktemp("modes_flown")))


@pytest.fixture(scope="module")
def book():
    return trim(AIRSPEED)


def test_the_elevator_flies_the_doublet_at_its_rate_limit(flight):
    offset = flight.elevator - flight.trim.elevator
    two_degrees, per_tick = math.radians(2.0), 6.98 * DT  # [rad]: 0.0349 rad, and 0.02792 rad a tick
    tick = {t: round(t / DT) for t in (1.0, 2.0, 3.0)}  # the sample after the tick that starts at t is tick + 1
    # The tick [1.000, 1.004] moves first, at the rate limit; the second tick reaches +2°.
    assert np.allclose(offset[: tick[1.0] + 1], 0.0, atol=1e-6)
    assert offset[tick[1.0] + 1] == pytest.approx(per_tick, rel=1e-5)
    assert np.allclose(offset[tick[1.0] + 2 : tick[2.0] + 1], two_degrees, atol=1e-6)
    # Four degrees down takes three ticks (2.5 ticks' travel).
    assert offset[tick[2.0] + 1] == pytest.approx(two_degrees - per_tick, rel=1e-5)
    assert np.allclose(offset[tick[2.0] + 3 : tick[3.0] + 1], -two_degrees, atol=1e-6)
    assert offset[tick[3.0] + 1] == pytest.approx(-two_degrees + per_tick, rel=1e-5)
    assert np.allclose(offset[tick[3.0] + 2 :], 0.0, atol=1e-6)


def test_the_flown_short_period_and_phugoid_are_the_books(flight, book):
    flown, expected = flown_modes(flight), longitudinal_modes(book)
    # The bound: 10 %. The book's (exact α derivatives): short period 11.009 rad/s, 0.4431; phugoid
    # 0.5004 rad/s, 0.2097. Measured on 2026-12-06: short period 11.221 rad/s, 0.4432 (+1.9 %, +0.0 %); phugoid
    # 0.5008 rad/s, 0.2076 (+0.1 %, −1.0 %). 2.5 % holds them there: it leaves the frequency room for MuJoCo's
    # step (+1.0 %, below) and the fit (+0.9 % on the book's own equations flown by RK4 through this doublet)
    # and would catch explicit Euler's damping (0.425, −4 %).
    for name in ("short_period", "phugoid"):
        (wn, zeta), (wn_book, zeta_book) = flown[name], expected[name]
        assert wn == pytest.approx(wn_book, rel=0.10) and zeta == pytest.approx(zeta_book, rel=0.10), name
        assert wn == pytest.approx(wn_book, rel=0.025) and zeta == pytest.approx(zeta_book, rel=0.025), name


def test_nexus_flies_the_books_equations_as_mujoco_steps_them(flight, book):
    # The book's equations (book_model, no Nexus code) fed the flown elevator and stepped as MuJoCo steps a
    # free body reproduce the flight through the doublet and after it; explicit Euler does not. Measured over
    # 0 to 8 s: 2.7e-4 m/s in u (Nexus's float32 propeller and wing), 9e-6 m/s in w, 9e-6 rad/s in q, 1.3e-5 rad
    # in θ; explicit Euler misses w by 0.011 m/s, q by 0.0039 rad/s, θ by 5.6e-4 rad.
    ticks = round(8.0 / DT)
    flown = np.column_stack([flight.u, flight.w, flight.q, flight.theta])[: ticks + 1]
    for step, bounds, fits in ((mujoco_step, (5e-4, 5e-5, 5e-5, 5e-5), True),
                               (explicit_euler_step, (5e-4, 5e-5, 5e-5, 5e-5), False)):
        x, stepped = flown[0], [flown[0]]
        for tick in range(ticks):
            x = step(x, flight.elevator[tick + 1], flight.trim.throttle)
            stepped.append(x)
        worst = np.max(np.abs(np.array(stepped) - flown), axis=0)
        assert bool(np.all(worst < bounds)) == fits, (step.__name__, worst)


def test_mujocos_step_keeps_the_short_periods_damping(book):
    # The discrete maps of the book's equations at Nexus's 4 ms step, against the continuous modes (the book's
    # 11.009 rad/s, 0.4431 and 0.5004 rad/s, 0.2097): MuJoCo's scheme 11.118 rad/s, 0.4435 (+1.0 %, +0.1 %),
    # phugoid 0.5005, 0.2089; explicit Euler's short period 11.114 rad/s, 0.4250 (its damping −4.1 %).
    continuous = longitudinal_modes(book)
    mujoco, euler = discrete_modes(mujoco_step, book), discrete_modes(explicit_euler_step, book)
    assert mujoco["short_period"][0] == pytest.approx(11.118, abs=0.002)
    assert mujoco["short_period"][1] == pytest.approx(0.4435, abs=2e-4)
    assert mujoco["short_period"][1] == pytest.approx(continuous["short_period"][1], rel=0.002)
    assert euler["short_period"][1] == pytest.approx(0.4250, abs=2e-4)
    assert mujoco["phugoid"][0] == pytest.approx(0.5005, abs=2e-4)
    assert mujoco["phugoid"][1] == pytest.approx(0.2089, abs=2e-4)


def test_the_bank_stays_small_for_the_35_s_of_the_fit(flight):
    # The book's Aerosonde is spirally unstable (+0.089 1/s); Nexus's trim holds the wings level with the
    # propeller's torque on 0.006° of sideslip, and the doublet's speed change upsets it: measured 0.019 rad at
    # 35 s (JSBSim: 0.017 rad). Small enough that the longitudinal fit sees no lateral mode.
    assert np.max(np.abs(flight.phi)) < 0.03
