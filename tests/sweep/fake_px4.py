"""A stand-in for PX4's ``bin/px4``, started as the sweep starts PX4: ``fake_px4 -i K -d -w DIR [ROOTFS]``.

It plays PX4's side of the simulator link with the scripted peer
(:class:`nexus.px4.scripted_peer.ScriptedPx4`) over real TCP, on instance K's
port 4560+K, answering every sensor message with the hover row. What it does
is chosen per point through the environment the sweep file's ``[px4] env``
gives: ``FAKE_PX4_MODES`` maps the point's seed (read from the run folder's
point.json), or ``SEED@k`` for vehicle k of a point of several, to ``ok``, ``crash`` (exits mid-flight, leaving a child in its
process group that only a process-group kill ends) or ``silent`` (never
connects). With ``FAKE_PX4_BARRIER`` (a folder) and ``FAKE_PX4_BARRIER_N``, it
connects only once N fakes have started: N instances alive at once.

It writes ``fake.json`` in its working folder: its instance, port, pid and
the pid of its child.
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from nexus.px4.scripted_peer import ScriptedPx4

HOVER = [0.5722] * 4 + [0.0] * 12
CRASH_AFTER = 150


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("-i", type=int, default=0)
    parser.add_argument("-d", action="store_true")
    parser.add_argument("-w", default=".")
    parser.add_argument("rootfs", nargs="?")
    args = parser.parse_args()
    workdir = Path(args.w)
    # One vehicle: PX4's folder is the run folder's px4/; several: px4/K, one per instance (vehicle k: the k-th).
    fleet = workdir.name.isdigit()
    run_folder = workdir.parent.parent if fleet else workdir.parent
    point = json.loads((run_folder / "point.json").read_text())
    vehicle = args.i - min(int(p.name) for p in workdir.parent.iterdir() if p.name.isdigit()) if fleet else 0
    modes = dict(item.split(":") for item in os.environ.get("FAKE_PX4_MODES", "").split(",") if item)
    seed = str(point["config"]["seed"])
    mode = modes.get(f"{seed}@{vehicle}", modes.get(seed, "ok"))
    port = 4560 + args.i
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])  # stays in our process group
    (workdir / "fake.json").write_text(json.dumps({"instance": args.i, "port": port, "pid": os.getpid(),
                                                   "child": child.pid, "mode": mode,
                                                   "sim_model": os.environ.get("PX4_SIM_MODEL"),
                                                   "params": sorted(k for k in os.environ if k.startswith("PX4_PARAM_"))}))
    barrier = os.environ.get("FAKE_PX4_BARRIER")
    if barrier:
        Path(barrier, f"started-{os.getpid()}").touch()
        deadline = time.monotonic() + 120.0
        while len(list(Path(barrier).iterdir())) < int(os.environ["FAKE_PX4_BARRIER_N"]) and time.monotonic() < deadline:
            time.sleep(0.05)
    if mode == "silent":
        time.sleep(600)
        return

    def script(count: int):
        if mode == "crash" and count >= CRASH_AFTER:
            os._exit(3)  # mid-flight, without closing anything: as a crashing PX4 would
        return HOVER

    peer = ScriptedPx4(port, script)
    peer.start()
    peer.join()


if __name__ == "__main__":
    main()
