"""The plant against hand-worked physics: hover, rest, yaw sign, spin-up, free fall."""

import numpy as np
import pytest
import warp as wp

from nexus.core import Component, Loop, Read, Stage
from nexus.plant.body_state import BodyState
from nexus.plant.frames import flu_to_frd_np, quat_to_matrix_np
from nexus.plant.hover import command_for_speed, hover_command, hover_speed
from tests.plant.conftest import plant_only

TICK = 0.004  # [s] at 250 Hz


class AccelReader(Component):
    """Reads the base body and asks the solver for BODY_QDD, as the IMU will."""

    solver_observables = frozenset({"body_qdd"})

    def __init__(self):
        super().__init__("/test/accel_reader")

    def stages(self):
        return [Stage("accel_reader", "sensor", lambda io: None, reads=(Read("body/base", BodyState, (1,)),))]


class Watcher(Component):
    """Reads the base body and rotor 1's joint, so the state stage publishes them."""

    def __init__(self):
        super().__init__("/test/watcher")

    def stages(self):
        reads = (Read("body/base", BodyState, (1,)), Read("joints/rotor_1", wp.float32, (1, 2)))
        return [Stage("watcher", "record", lambda io: None, reads=reads)]


def fly(vehicle, *, mode="captured", extra=(), position=None, rotor_speed=None, command=None):
    loop = Loop(plant_only(vehicle) + [Watcher(), *extra], device="cpu", mode=mode).build()
    vehicle.plant.reset(base_position=position, rotor_speed=rotor_speed)
    vehicle.controller.set(command if command is not None else [0.0] * 4)
    loop.run_kinds(["control"])  # the held command is in place before the first tick
    return loop


def base(loop) -> BodyState:
    return loop.output("body/base").list()[0]


def test_hover_command_holds_altitude_for_five_seconds(astro):
    # Hover: 4·kT·ω² = m·g -> ω = √(5.831·9.80665 / (4·2.26e-4)) = 251.5 rad/s;
    # the ESC's thrust model (f = 0.5) maps that to u = 0.572.
    assert hover_speed(astro.plant) == pytest.approx(251.5, abs=0.1)
    u = hover_command(astro.plant)
    assert u == pytest.approx(0.572, abs=0.001)
    loop = fly(astro, position=(0.0, 0.0, 2.0), rotor_speed=hover_speed(astro.plant), command=[u] * 4)
    heights = []
    for _ in range(5 * 25):
        loop.run(10)
        heights.append(base(loop).pose[2])
    assert np.max(np.abs(np.array(heights) - 2.0)) < 0.05


def test_zero_command_rests_on_the_ground_without_drifting(astro):
    loop = fly(astro)
    loop.run(50)
    settled = np.array(base(loop).pose[:3])
    # The gear is 0.30 m below the base origin: it rests at z = 0.30 m (soft contact: < 1 mm in).
    assert settled[2] == pytest.approx(0.30, abs=1e-3)
    loop.run(500)  # 2 s more
    moved = np.array(base(loop).pose[:3]) - settled
    assert np.linalg.norm(moved) < 1e-3


def test_faster_ccw_rotors_yaw_the_vehicle_right_as_px4_expects(astro):
    # PX4 quad-x: rotors 1 and 2 spin counter-clockwise; more speed there means more drag,
    # whose reaction turns the airframe clockwise seen from above: positive yaw in NED/FRD.
    w = hover_speed(astro.plant)
    fast, slow = command_for_speed(astro.plant, 1.05 * w), command_for_speed(astro.plant, 0.95 * w)
    loop = fly(astro, position=(0.0, 0.0, 5.0), rotor_speed=w, command=[fast, fast, slow, slow])
    loop.run(50)
    state = base(loop)
    rotation = quat_to_matrix_np(np.array(state.pose[3:7]))
    rates_frd = flu_to_frd_np(rotation.T @ np.array(state.angular_velocity))
    assert rates_frd[2] > 0.05
    assert abs(rates_frd[0]) < 0.1 * rates_frd[2] and abs(rates_frd[1]) < 0.1 * rates_frd[2]


def test_rotor_reaches_its_target_at_the_rate_its_motor_constants_predict(astro):
    plant = astro.plant
    rotor = plant.rotors[0]
    esc = rotor.esc
    w0 = hover_speed(plant)
    w_target = 1.2 * w0
    loop = fly(astro, rotor_speed=w0, command=[command_for_speed(plant, w_target)] + [hover_command(plant)] * 3)
    # Prediction, tick by tick: the ESC lags its command with τ_up (discrete first order),
    # and the servo drives the rotor inertia I with gain kd plus the drag feed-forward:
    #   I·dω/dt = kd·(ω_esc - ω) + kQ·(ω_esc² - ω²).
    inertia, kd, kq = rotor.inertia, esc["speed_gain"], rotor.torque_coefficient
    w_esc, w, predicted = w0, w0, []
    for _ in range(60):
        w_esc += (w_target - w_esc) * TICK / (esc["tau_up"] + TICK)
        w += TICK / inertia * (kd * (w_esc - w) + kq * (w_esc**2 - w**2))
        predicted.append(w)
    measured = []
    for _ in range(60):
        loop.run(1)
        measured.append(loop.output("joints/rotor_1").numpy()[0, 1] * rotor.spin)
    step = w_target - w0
    assert np.max(np.abs(np.array(measured) - np.array(predicted))) < 0.02 * step
    # The ESC lag dominates: 63 % of the step after about τ_up = 0.05 s plus the servo's ~0.01 s.
    t63 = TICK * (1 + int(np.argmax(np.array(measured) - w0 > 0.632 * step)))
    assert 0.05 <= t63 <= 0.075


def test_free_fall_reads_gravity_in_body_qdd(astro_in_void):
    loop = fly(astro_in_void, position=(0.0, 0.0, 100.0), extra=[AccelReader()])
    loop.run(25)
    state = base(loop)
    np.testing.assert_allclose(state.accel, [0.0, 0.0, -9.80665], atol=1e-4)
    # v = -g·t after 0.1 s.
    assert state.velocity[2] == pytest.approx(-9.80665 * 25 * TICK, rel=1e-4)


def test_without_a_reader_no_observable_is_requested(astro):
    loop = fly(astro)
    assert astro.physics.observables is None and astro.physics.requested == frozenset()
    loop.run(2)
    assert np.all(np.array(base(loop).accel) == 0.0)


def test_observable_container_is_the_same_on_every_tick(astro, monkeypatch):
    loop = fly(astro, mode="eager", extra=[AccelReader()])
    seen = []
    step = astro.plant.solver.step

    def spy(*args, observables=None, **kwargs):
        seen.append((id(observables), observables.body_qdd.ptr))
        return step(*args, observables=observables, **kwargs)

    monkeypatch.setattr(astro.plant.solver, "step", spy)
    loop.run(4)
    assert len(seen) == 4 and len(set(seen)) == 1
    assert seen[0][0] == id(astro.physics.observables)


def hover_trace(vehicle, mode):
    w = hover_speed(vehicle.plant)
    loop = fly(vehicle, mode=mode, extra=[AccelReader()], position=(0.0, 0.0, 1.0), rotor_speed=w,
               command=[command_for_speed(vehicle.plant, w * s) for s in (1.02, 0.99, 1.0, 1.01)])
    rows = []
    for _ in range(30):
        loop.run(1)
        state = vehicle.plant.state
        rows.append(state.body_q.numpy().tobytes() + state.body_qd.numpy().tobytes() + state.joint_qd.numpy().tobytes()
                    + vehicle.physics.observables.body_qdd.numpy().tobytes())
    return rows


def test_captured_and_eager_plant_are_bit_identical(astro):
    assert hover_trace(astro, "eager") == hover_trace(astro, "captured")


def test_bad_substeps(astro):
    from nexus.core.errors import BuildError
    from nexus.plant.physics import Physics

    with pytest.raises(BuildError, match="substeps must be a positive whole number"):
        Physics(astro.plant, substeps=0)


def test_only_the_base_body_is_marked_for_the_record(astro):
    # The Astro Max has 5 rigid bodies (base, rotor_1..4) and 4 rotor joints; the record taps the base alone.
    writes = [w for stage in astro.physics.stages() for w in stage.writes]
    assert sorted(w.signal for w in writes) == ["body/base"] + [f"body/rotor_{i}" for i in range(1, 5)] + [
        f"joints/rotor_{i}" for i in range(1, 5)]
    assert [(w.signal, w.prim) for w in writes if w.recorded] == [("body/base", "/vehicle/body/base")]
