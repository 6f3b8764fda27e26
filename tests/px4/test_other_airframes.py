"""PX4's lockstep link flies the x500 and the hexacopter, against a scripted PX4 over a real TCP socket.

The peer answers every rotor at full command after PX4's boot silence: each rotor's channel must carry
it (six for the hexacopter), and once the ESCs have spun up the climb's acceleration is the vehicle's full
thrust over its weight, worked out by hand from each vehicle file's numbers.
"""

from dataclasses import replace

import numpy as np
import pyarrow.parquet as pq
import pytest

from nexus.px4.scripted_peer import ScriptedPx4
from nexus.runtime.flight import build_flight
from nexus.runtime.config import RunConfig
from nexus.runtime.run import run_flight

SILENT = 10  # sensor messages PX4 leaves unanswered while it boots


def full_after_boot(n):
    return None if n <= SILENT else [1.0] * 16


#: Full-thrust vertical acceleration [m/s^2] = (rotors * kT * w_max^2 - m g) / m, from each vehicle file:
#:  x500:      (4 * 8.54858e-06 * 1000^2 - 2.064308 * 9.80665) / 2.064308 = 6.75834
#:  hexa_f550: (6 * 6.3e-06 * 1116^2 - 2.0 * 9.80665) / 2.0 = 13.73247 (base 1.73 kg, six 45 g rotors)
FULL_THRUST_ACCELERATION = {"x500": 6.75834, "hexa_f550": 13.73247}


@pytest.fixture(scope="module", params=["x500", "hexa_f550"])
def flown(request, tmp_path_factory):
    out = tmp_path_factory.mktemp(request.param)
    options = {"host": "127.0.0.1", "port": 0, "connect_timeout": 10.0, "answer_timeout": 5.0}
    flight = build_flight(RunConfig(vehicle=request.param, controller="px4", controller_options=options,
                                    device="cpu", duration=1.0), "cpu")
    peer = ScriptedPx4(flight.vehicle.controller.link.port, full_after_boot)
    with peer.running():
        summary = run_flight(replace(flight.options, device="cpu", duration=1.0), out, progress=False, flight=flight)
    return request.param, out, summary, flight


def test_every_rotor_channel_is_driven_and_no_other(flown):
    name, out, summary, flight = flown
    rotors = len(flight.vehicle.plant.rotors)
    assert rotors == {"x500": 4, "hexa_f550": 6}[name]
    record = pq.read_table(out / "record.parquet")
    assert summary.ticks == 250
    for channel in range(rotors):
        controls = record.column(f"controls[{channel}]").to_numpy()
        # Lockstep: silent for 10 messages, then every tick flies its own answer.
        assert np.all(controls[:SILENT] == 0.0) and np.all(controls[SILENT:] == np.float32(1.0)), channel


def test_the_vehicle_climbs_at_its_full_thrust_over_weight(flown):
    name, out, _, _ = flown
    record = pq.read_table(out / "record.parquet")
    vz = record.column("body/base.velocity[2]").to_numpy().astype(np.float64)
    # The last half second, the ESCs long spun up: a straight line in vz whose slope is thrust over weight.
    slope = (vz[-1] - vz[-126]) / (125 * 0.004)
    assert slope == pytest.approx(FULL_THRUST_ACCELERATION[name], rel=2e-3)
    z = record.column("body/base.pose[2]").to_numpy()
    assert z[-1] - z[0] > 1.0  # it left the ground on PX4's rows (the spin-up takes the first part of the climb)
