"""Contact between vehicles (nexus/plant/vehicle_collision.py, nexus/plant/contact_slots.py).

Two x500s share a world, ``--spacing 1`` m apart on the east axis, flown open loop with every motor at 0
(the hold controller: nothing but gravity and contact acts). After start-up both are lifted 1 m above where
they settled and vehicle 1 is sent west at 4 m/s, at vehicle 0, which hangs still; both fall together, so
only the contact moves momentum between them along x.

* Their nearest shapes are the base boxes (half width 0.1767767 m) and the legs, as long: the gap is
  1 - 2 x 0.1767767 = 0.6464466 m. At 4 m/s x 0.004 s = 0.016 m a tick it closes after 40.4 ticks: tick 41
  leaves them overlapping, and MuJoCo's collision test, which sees the state a step starts from, finds the
  contact on tick 42 (0.168 s). They come down at g·dt·41 = 1.608 m/s then: no crash (3 m/s).
* Each vehicle is 2.0643 kg (a 2 kg base and four 0.016077 kg rotors); vehicle 1 brings 2.0643 x 4 =
  8.2572 N·s. Momentum is kept, so vehicle 0 takes the impulse J = m·Δv₀ and vehicle 1 loses it: between
  m·v/2 = 4.1286 N·s (they stick) and m·v = 8.2572 N·s (elastic). MuJoCo's soft contact gives 4.750 N·s
  (restitution 2 x 4.750 / 8.2572 - 1 = 0.15): vehicle 0 leaves at 4.750 / 2.0643 = 2.301 m/s west.
* The collision lasts while any point of them touches, ticks 42 to 58; with ``end_on_collision`` the world
  ends on tick 42, with the first tick's impulse alone.
"""

import json

import numpy as np
import pyarrow.dataset as ds
import pytest

from nexus.runtime.config import RunConfig
from nexus.runtime.run import run_flight

#: Each x500's mass [kg]: the 2 kg base and four 0.016077 kg rotors.
MASS = 2.0643
#: Vehicle 1's speed west at the start [m/s].
SPEED = 4.0


def head_on(flight):
    """After start-up: both vehicles 1 m above where they settled, vehicle 1 flying west at SPEED."""
    plant = flight.vehicle.plant
    plant.reset(base_position=plant.base_positions() + np.array([0.0, 0.0, 1.0]),
                base_velocity=np.array([[0.0, 0.0, 0.0], [-SPEED, 0.0, 0.0]]))


def fly(out, watch, seconds=0.3, **fleet):
    options = RunConfig(vehicle="x500", controller="hold", device="cpu", duration=seconds, vehicles=2, **fleet)
    summary = run_flight(options, out, progress=False, watch=watch)
    return summary, json.loads((out / "run.json").read_text()), ds.dataset(out / "record.parquet").to_table()


def exits(out):
    """Each slot's exit reason, from summary.parquet."""
    return ds.dataset(out / "summary.parquet").to_table().column("exit_reason").to_pylist()


def column(table, name, vehicle):
    """``name``'s values of ``vehicle``, tick after tick."""
    rows = np.asarray(table.column("vehicle").to_pylist()) == vehicle
    return np.asarray(table.column(name).to_pylist())[rows]


@pytest.fixture(scope="module")
def collided(tmp_path_factory):
    return fly(tmp_path_factory.mktemp("head_on"), head_on, spacing=1.0)


@pytest.fixture(scope="module")
def ended(tmp_path_factory):
    out = tmp_path_factory.mktemp("ended")
    return (*fly(out, head_on, spacing=1.0, end_on_collision=True), exits(out))


def test_a_head_on_collision_is_logged_on_its_tick_with_the_momentum_it_moved(collided):
    summary, info, table = collided
    assert (summary.exit_reason, summary.ticks) == ("duration", 75)
    report = info["collisions"]
    assert (report["count"], report["kept"], report["end_on_collision"]) == (1, 1, False)
    (event,) = report["events"]
    assert (event["tick"], event["time_s"], event["world"], event["vehicles"]) == (42, pytest.approx(0.168), 0, [0, 1])
    # Between sticking (m·v/2) and bouncing back whole (m·v).
    assert MASS * SPEED / 2 < event["impulse_n_s"] < MASS * SPEED
    assert event["impulse_n_s"] == pytest.approx(4.750, abs=2e-3)
    # On vehicle 1, the second of the pair: pushed back east.
    assert event["impulse_enu_n_s"] == pytest.approx([4.750, -0.053, -0.002], abs=2e-3)
    # The normal forces summed as numbers are no momentum: the legs meet end to end along a sideways normal.
    assert event["normal_impulse_n_s"] > event["impulse_n_s"] + 1.0


def test_the_impulse_is_the_struck_vehicles_momentum_and_the_strikers_loss(collided):
    _, info, table = collided
    impulse = info["collisions"]["events"][0]["impulse_enu_n_s"][0]
    struck, striker = column(table, "body/base.velocity[0]", 0), column(table, "body/base.velocity[0]", 1)
    assert (struck[40], striker[40]) == (pytest.approx(0.0, abs=1e-9), pytest.approx(-SPEED, abs=1e-6))  # tick 41
    # Tick 60: parted (the last touching point was on tick 58). m·Δv, each way.
    assert MASS * (0.0 - struck[59]) == pytest.approx(impulse, rel=2e-3)
    assert MASS * (striker[59] - (-SPEED)) == pytest.approx(impulse, rel=2e-3)
    assert struck[59] == pytest.approx(-2.301, abs=4e-3)  # the centre of mass's; the base's own differs by the spin


def test_each_vehicle_counts_its_touching_points_against_the_other(collided):
    _, _, table = collided
    counts = [column(table, "vehicle_contact", v) for v in (0, 1)]
    assert np.array_equal(counts[0], counts[1])  # every point touches both
    touching = np.flatnonzero(counts[0] > 0) + 1  # ticks
    assert (touching[0], touching[-1], len(touching)) == (42, 58, 17)
    assert counts[0][41] > 0 and counts[0][40] == 0


def test_the_collision_is_in_run_log(collided):
    _, info, _ = collided
    line = ("vehicles 0 and 1 of world 0 collided at tick 42 (0.168 s), an impulse of "
            f"{info['collisions']['events'][0]['impulse_n_s']:.3f} N·s")
    assert line in info["warnings"]


def test_with_end_on_collision_the_collision_ends_the_world_with_exit_reason_collision(ended):
    summary, info, table, reasons = ended
    assert (summary.exit_reason, summary.ticks) == ("collision", 42)
    assert (info["status"], info["exit_reason"]) == ("finished", "collision")
    assert info["options"]["end_on_collision"] is True
    (event,) = info["collisions"]["events"]
    assert (event["tick"], event["vehicles"]) == (42, [0, 1])
    # The first tick's impulse alone: vehicle 0's m·Δv on that tick.
    struck = column(table, "body/base.velocity[0]", 0)
    assert len(struck) == 42
    assert event["impulse_n_s"] == pytest.approx(MASS * -struck[41], rel=2e-3)
    assert 0.0 < event["impulse_n_s"] < 4.750
    assert info["warnings"][-1].endswith("; the world's flight ended there")
    assert reasons == ["collision", "collision"]  # both vehicles of the world


def test_without_vehicle_contact_nothing_collides_and_vehicle_0_flies_its_one_vehicle_bits(tmp_path):
    summary, info, table = fly(tmp_path / "apart", head_on, spacing=1.0, vehicle_contact=False)
    assert "collisions" not in info and "vehicle_contact" not in table.column_names
    assert info["options"]["vehicle_contact"] is False and "end_on_collision" not in info["options"]
    # Vehicle 1 flew through vehicle 0: nothing slowed it.
    assert column(table, "body/base.velocity[0]", 1)[-1] == pytest.approx(-SPEED, abs=1e-6)

    def lift(flight):
        plant = flight.vehicle.plant
        plant.reset(base_position=plant.base_positions() + np.array([0.0, 0.0, 1.0]))

    options = RunConfig(vehicle="x500", controller="hold", device="cpu", duration=0.3)
    run_flight(options, tmp_path / "alone", progress=False, watch=lift)
    alone = ds.dataset(tmp_path / "alone" / "record.parquet").to_table()
    for name in alone.column_names:
        assert np.array_equal(column(table, name, 0), np.asarray(alone.column(name).to_pylist())), name


def test_ground_contact_counts_for_the_vehicle_that_lands_not_its_worlds_first(tmp_path):
    """Vehicle 1, 2 m up, falls to a crash on tick 161 at 6.2763 m/s (tests/plant/test_crash.py works the fall);
    vehicle 0, 10 m up, falls beside it the same way and is still 5 m up after 1 s (g/2 = 4.9 m)."""
    def heights(flight):
        plant = flight.vehicle.plant
        plant.reset(base_position=plant.base_positions() + np.array([[0.0, 0.0, 10.0], [0.0, 0.0, 2.0]]))

    summary, info, _ = fly(tmp_path, heights, seconds=1.0)
    crash = info["crash"]
    assert crash["crashed_worlds"] == [{"world": 0, "vehicle": 1, "tick": 161, "time_s": pytest.approx(0.644),
                                        "speed_m_s": pytest.approx(6.2763, abs=1e-3)}]
    assert crash["hardest_touchdowns_m_s"] == [0.0, pytest.approx(6.2763, abs=1e-3)]
    assert exits(tmp_path) == ["duration", "crashed"]
    assert info["collisions"] == {"count": 0, "kept": 0, "end_on_collision": False, "events": []}
