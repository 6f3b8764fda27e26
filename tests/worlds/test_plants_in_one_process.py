"""Several multi-world plants in one process: each ring built for its plant's worlds, none reaching past an array.

A plant of 16 worlds ticked by a ring built for 1 (``Loop`` without ``worlds=``, as the estimation suite
once built its ring) launched every plant kernel over 16 worlds into the ring's one-world arrays: odd worlds
were put back each step from garbage, MuJoCo printed ``nefc overflow - please increase njmax beyond 64``,
and the heap broke (``corrupted double-linked list`` / ``free(): invalid next size`` at the next
collection). The physics now refuses that ring at build. Each case runs in a child process, so an abort
fails the test instead of killing pytest.
"""

import subprocess
import sys
import textwrap
from pathlib import Path

VEHICLE = Path(__file__).resolve().parents[2] / "vehicles" / "astro_max_base.usda"

SCRIPT = textwrap.dedent("""
    import gc
    import numpy as np
    from nexus.core import Loop
    from nexus.core.errors import BuildError
    from nexus.runtime.assembly import assemble
    from nexus.runtime.config import RunConfig
    from nexus.runtime.flight_session import FlightSession
    from nexus.runtime.startup import start

    vehicle = assemble("astro_max_base", "empty", device="cpu", controller="hold", worlds=16)
    try:
        loop = Loop(list(vehicle.components), device="cpu", mode="captured").build()
        vehicle.plant.reset()
        start(loop, vehicle.plant)
        for _ in range(50):
            loop.tick()
        print("MISMATCH BUILT")
    except BuildError as error:
        print("REFUSED", error)
    del vehicle
    gc.collect()

    sessions = []
    for worlds in (16, 16, 1, 16):  # resting on the ground under the hold controller (rotors stopped)
        session = FlightSession(RunConfig(worlds=worlds, controller="hold", device="cpu")).open()
        session.fly(64)
        data = session.vehicle.plant.solver.mjw_data
        found = int(data.nacon.numpy()[0])
        touching = np.bincount(data.contact.worldid.numpy()[:found][data.contact.dist.numpy()[:found] <= 0.0],
                               minlength=worlds)
        print("FLOWN", worlds, "rows", sorted(set(data.nefc.numpy().tolist())), "njmax", data.njmax,
              "touching", sorted(set(touching.tolist())), "ticks", sorted(set(session.loop.world_ticks().tolist())))
        sessions.append(session)
    for session in sessions:
        session.close()
    del sessions
    gc.collect()
    print("END")
""")


def test_two_16_world_ground_flights_and_a_mismatched_ring_in_one_process():
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=600)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-3000:]
    assert "overflow" not in output, output[-3000:]
    lines = [line for line in done.stdout.splitlines() if line.split(" ")[0] in ("REFUSED", "MISMATCH", "FLOWN", "END")]
    assert lines == [
        f"REFUSED {VEHICLE}: the plant flies 16 worlds but the ring was built for 1; "
        "build the Loop with worlds=16, as assemble(..., worlds=N) was",
        # Each world: two skids, 4 corners each on the ground, 4 pyramid rows a contact (32 of MuJoCo's 64).
        "FLOWN 16 rows [32] njmax 64 touching [8] ticks [64]",
        "FLOWN 16 rows [32] njmax 64 touching [8] ticks [64]",
        "FLOWN 1 rows [32] njmax 64 touching [8] ticks [64]",
        "FLOWN 16 rows [32] njmax 64 touching [8] ticks [64]",
        "END",
    ]
