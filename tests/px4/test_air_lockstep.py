"""The air under PX4: lockstep against the scripted PX4 with wind, turbulence, drag, a battery and an airspeed sensor.

The vehicle is the Astro Max with drag, a small pack, a noise-free 50 Hz airspeed sensor and a barometer that
feels the dynamic pressure (tests/data/astro_max_air.usda), flying 2 s in ``--wind 8@270`` (8 m/s at 10 m, from
the west) with light Dryden turbulence. The scripted PX4 answers every rotor at 0.7 after its boot silence: the
vehicle climbs and the wind carries it east. Checked: every HIL_SENSOR carries the recorded differential
pressure in hPa, with the diff-pressure bit on exactly the messages of a new airspeed sample; the recorded
pressure is 1/2 rho u |u| of the recorded wind less the recorded velocity, worked out here; the pack drains by
the recorded current; and two runs are bit for bit the same.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from nexus.px4.scripted_peer import ScriptedPx4
from nexus.runtime.flight import build_flight
from nexus.runtime.config import RunConfig
from nexus.runtime.run import run_flight

VEHICLE = Path(__file__).resolve().parents[1] / "data" / "astro_max_air.usda"
SILENT = 10  # sensor messages PX4 leaves unanswered while it boots
DURATION = 2.0  # [s]: 500 ticks of 4 ms
DIFF_PRESSURE_BIT = 0x400  # HIL_SENSOR_UPDATED_DIFF_PRESSURE (MAVLink common.xml)
ORIGIN_ALTITUDE = 488.0  # the empty scene's geodetic origin above mean sea level [m]


def climb_after_boot(n):
    return None if n <= SILENT else [0.7] * 4 + [0.0] * 12


def fly(out: Path):
    options = {"host": "127.0.0.1", "port": 0, "connect_timeout": 10.0, "answer_timeout": 5.0}
    config = RunConfig(vehicle=str(VEHICLE), scene="empty", controller="px4", controller_options=options, device="cpu",
                       duration=DURATION, wind="8@270", turbulence="light", seed=3)
    flight = build_flight(config, "cpu")
    peer = ScriptedPx4(flight.vehicle.controller.link.port, climb_after_boot)
    with peer.running():
        summary = run_flight(replace(flight.options, device="cpu", duration=DURATION), out, progress=False,
                             flight=flight)
    ned_origin = flight.vehicle.plant.ned_origin.numpy()[0].astype(np.float64)  # where start-up settled the base
    return pq.read_table(out / "record.parquet"), summary, peer, ned_origin


@pytest.fixture(scope="module")
def flights(tmp_path_factory):
    root = tmp_path_factory.mktemp("air_px4")
    return fly(root / "a"), fly(root / "b")


def column(table, name) -> np.ndarray:
    return table.column(name).to_numpy().astype(np.float64)


def quat_rotate(q, v):
    """``v`` (body vectors, rows) turned into the world by the (x, y, z, w) quaternions ``q`` (rows): R v."""
    u, w = q[:, :3], q[:, 3:]
    t = 2.0 * np.cross(u, v)
    return v + w * t + np.cross(u, t)


def quat_rotate_inv(q, v):
    """``v`` (world vectors, rows) in the body frames of ``q``: R^T v (the conjugate's rotation)."""
    return quat_rotate(q * np.array([-1.0, -1.0, -1.0, 1.0]), v)


def test_two_runs_are_bit_for_bit_the_same(flights):
    (a, summary_a, _, _), (b, summary_b, _, _) = flights
    assert summary_a.ticks == summary_b.ticks == 500
    assert a.column_names == b.column_names
    for name in a.column_names:
        assert a.column(name).equals(b.column(name)), name


def test_every_hil_sensor_carries_the_airspeed_in_hpa_with_its_bit_on_new_samples(flights):
    table, _, peer, _ = flights[0]
    sensors = [m for _, m in peer.received if m.get_type() == "HIL_SENSOR"]
    assert len(sensors) == table.num_rows == 500  # one per tick, boot included
    times = column(table, "airspeed.time")
    pressure = table.column("airspeed.differential_pressure").to_numpy()
    new = np.diff(times, prepend=-1.0) != 0
    # 50 Hz on a 250 Hz tick: the start-up sample, then one every 5th tick: 2 s -> 101 samples.
    assert new.sum() == 101
    for message, is_new, pa in zip(sensors, new, pressure):
        assert bool(message.fields_updated & DIFF_PRESSURE_BIT) == bool(is_new)
        # Pa -> hPa (x 0.01), sent as float32 on the wire.
        assert message.diff_pressure == pytest.approx(float(pa) * 0.01, rel=1e-6, abs=1e-9)
    assert max(abs(m.diff_pressure) for m in sensors) > 0.05  # at least 5 Pa of air at some point


def isa(altitude):
    """ISA troposphere: T = 288.15 - 0.0065 h [K], p = 101325 (T / 288.15)^5.25588 [Pa], rho = p / (287.05287 T)."""
    temperature = 288.15 - 0.0065 * altitude
    pressure = 101325.0 * (temperature / 288.15) ** 5.25588
    return pressure, pressure / (287.05287 * temperature)


def at_samples(table, signal: str, mount, ned_origin):
    """At each new in-flight sample of ``signal``: the air relative to the point ``mount`` of the base, in the
    base's axes (FLU) [m/s], and that point's ISA altitude [m] (the origin's 488 m plus its height over the NED
    origin), from the recorded wind and body state (the sensor read the same rows)."""
    rows = np.flatnonzero(np.diff(column(table, f"{signal}.time"), prepend=-1.0) != 0)[1:]
    pose = np.stack([column(table, f"body/base.pose[{i}]") for i in range(7)], axis=1)[rows]
    velocity = np.stack([column(table, f"body/base.velocity[{i}]") for i in range(3)], axis=1)[rows]
    omega = np.stack([column(table, f"body/base.angular_velocity[{i}]") for i in range(3)], axis=1)[rows]
    com = np.stack([column(table, f"body/base.com[{i}]") for i in range(3)], axis=1)[rows]
    wind = np.stack([column(table, f"wind[{i}]") for i in range(3)], axis=1)[rows]
    q = pose[:, 3:]
    # The mount's velocity: the centre of mass's plus omega x R (mount - com).
    air = wind - (velocity + np.cross(omega, quat_rotate(q, np.asarray(mount) - com)))
    altitude = ORIGIN_ALTITUDE + (pose[:, :3] + quat_rotate(q, np.tile(mount, (len(rows), 1))))[:, 2] - ned_origin[2]
    return rows, quat_rotate_inv(q, air), altitude


def test_the_recorded_pressure_is_half_rho_u_abs_u_of_the_wind_less_the_velocity(flights):
    table, _, _, ned_origin = flights[0]
    rows, air, altitude = at_samples(table, "airspeed", (0.1, 0.0, 0.0), ned_origin)  # the layer's mountOffset
    u = -air[:, 0]  # forward airspeed [m/s]: air coming from ahead is positive
    expected = 0.5 * isa(altitude)[1] * u * np.abs(u)
    np.testing.assert_allclose(column(table, "airspeed.differential_pressure")[rows], expected, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(column(table, "airspeed.airspeed")[rows], u, atol=1e-5)


def test_the_barometer_reads_half_the_dynamic_pressure_above_the_static(flights):
    table, _, _, ned_origin = flights[0]
    rows, air, altitude = at_samples(table, "baro", (0.0, 0.0, 0.02), ned_origin)  # the base file's baro mount
    static, rho = isa(altitude)
    expected = 0.5 * 0.5 * rho * (air**2).sum(axis=1)  # C 1/2 rho |a|^2, C = 0.5 in the layer
    excess = column(table, "baro.pressure")[rows] - static
    # The baro keeps its 3 Pa white noise: over the 100 in-flight samples the mean of what is left after the
    # term is within 4 sigma / sqrt(100) = 1.2 Pa of 0, while the term itself averages several pascals.
    assert len(rows) == 100
    assert abs((excess - expected).mean()) < 1.2
    assert expected.mean() > 3.0


def test_the_wind_carries_the_vehicle_east_and_the_pack_drains_by_its_current(flights):
    table, _, _, _ = flights[0]
    # While it climbs level, 8 m/s from the west pushes it east (+x) through the drag (the open-loop climb
    # tilts later and may carry it anywhere).
    assert column(table, "body/base.velocity[0]")[:300].max() > 0.2
    assert column(table, "wind[0]").mean() > 3.0  # the mean wind blows east; at 0.3-2 m up, 8 (h/10)^0.143 > 5 m/s
    current = column(table, "battery.current")
    soc = column(table, "battery.state_of_charge")
    # Coulomb counting: the charge drawn over the run is the sum of current x 4 ms, over 0.04 Ah = 144 C.
    drawn = current[1:].sum() * 0.004 / 144.0
    assert soc[0] - soc[-1] == pytest.approx(drawn, rel=0.01)
    assert current[-1] > 10.0  # the climb draws tens of amperes from the small pack
