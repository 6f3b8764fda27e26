"""PX4 fleets without PX4: a stand-in for bin/px4 started as PX4 would be, one per instance on its own ports."""

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq

from nexus.px4.instance import Px4Instance, claim_instance
from nexus.sweep.runner import SweepOptions, run_sweep
from tests.sweep.conftest import write_sweep

FLEET = """
[run]
controller = "px4"
duration = 2.0
device = "cpu"

[grid]
seed = [0, 1, 2, 3]

[px4]
binary = "{binary}"
mission = "none"
boot_timeout = 30.0
env = {{FAKE_PX4_MODES = "1:crash,2:silent", FAKE_PX4_BARRIER = "{barrier}", FAKE_PX4_BARRIER_N = "4"}}
"""


def _gone(pid: int) -> bool:
    """Whether a process has ended (a zombie waiting for its reaper counts as ended)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state in ("Z", "X")


def test_instance_k_uses_the_ports_px4_documents():
    four = Px4Instance(4)
    assert (four.sim_port, four.offboard_port, four.onboard_port, four.gcs_local_port) == (4564, 14544, 14584, 18574)
    assert four.mavlink_url == "udpin:127.0.0.1:14544" and four.system_id == 5
    assert Px4Instance(12).offboard_port == 14549  # every K past 9 shares it


def test_claims_never_share_an_instance_and_die_with_their_process(tmp_path):
    claims = [claim_instance(folder=tmp_path) for _ in range(4)]
    ks = [c.instance.k for c in claims]
    assert len(set(ks)) == 4
    assert len({p for c in claims for p in (c.instance.sim_port, c.instance.offboard_port)}) == 8
    for claim in claims:
        claim.release()
    # A process that holds K and is killed frees K: the kernel drops its lock.
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; from nexus.px4.instance import claim_instance; "
                               f"c = claim_instance(folder={str(tmp_path)!r}); print(c.instance.k, flush=True); "
                               "time.sleep(600)"], stdout=subprocess.PIPE, text=True)
    held = int(holder.stdout.readline())
    assert claim_instance(folder=tmp_path).instance.k != held
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    again = claim_instance(folder=tmp_path)
    assert again.instance.k == held
    again.release()


def test_four_instances_at_once_with_a_crash_and_a_silent_px4(tmp_path, ray_cpus, fake_px4):
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    path = write_sweep(tmp_path, FLEET.format(binary=fake_px4, barrier=barrier))
    out = tmp_path / "fleet"
    # Half a CPU each: the four runs fly at once on Ray's 2 CPUs (the stand-ins wait until all four started).
    result = run_sweep(path, SweepOptions(out=out, cpus_per_run=0.5, progress=False))
    rows = {row["seed"]: row for row in pq.read_table(out / "sweep.parquet").to_pylist()}
    assert result.failed == 2
    assert rows[0]["status"] == rows[3]["status"] == "finished" and rows[0]["exit_reason"] == "duration"
    assert rows[1]["status"] == "failed" and rows[1]["exit_reason"] in ("px4-disconnected", "px4-timeout")
    assert rows[2]["status"] == "failed" and rows[2]["exit_reason"] == "px4-no-connection"
    fakes = {}
    for seed, row in rows.items():
        folder = out / row["folder"]
        fake = json.loads((folder / "px4" / "fake.json").read_text())
        info = json.loads((folder / "run.json").read_text())
        fakes[seed] = fake
        # Started the way PX4 is: -i K, in the run folder's own px4/, on 4560 + K, with the vehicle's parameters.
        assert info["options"]["controller_options"]["port"] == fake["port"] == 4560 + fake["instance"]
        assert fake["sim_model"] == "none_iris" and "PX4_PARAM_MPC_THR_HOVER" in fake["params"]
        assert (folder / "px4" / "params.env").is_file()
        report = json.loads((folder / "px4" / "px4.json").read_text())
        assert report["px4_instance"] == row["px4_instance"] == fake["instance"]
    assert len({fake["instance"] for fake in fakes.values()}) == 4  # all four were alive at once: no two shared K
    # Every stand-in and the child each left in its process group ended, the crashed one's orphan too.
    for fake in fakes.values():
        assert _gone(fake["pid"]) and _gone(fake["child"]), fake
    assert not any((out / row["folder"] / "px4" / "pgid").exists() for row in rows.values())


def test_a_point_of_two_vehicles_starts_a_px4_each_and_ends_both_when_one_crashes(tmp_path, ray_cpus, fake_px4):
    """Vehicle 1's PX4 exits mid-flight: the run fails naming it, and both PX4s (and their children) are ended."""
    text = (f'[run]\ncontroller = "px4"\nduration = 2.0\ndevice = "cpu"\nvehicles = 2\nspacing = 2.5\n'
            f'[grid]\nseed = [1]\n[px4]\nbinary = "{fake_px4}"\nmission = "none"\nboot_timeout = 30.0\n'
            'env = {FAKE_PX4_MODES = "1@1:crash"}\n')
    out = tmp_path / "two"
    run_sweep(write_sweep(tmp_path, text), SweepOptions(out=out, progress=False))
    rows = {row["seed"]: row for row in pq.read_table(out / "sweep.parquet").to_pylist()}
    assert rows[1]["status"] == "failed" and rows[1]["exit_reason"] in ("px4-disconnected", "px4-timeout")
    for seed, row in rows.items():
        folder = out / row["folder"]
        report = json.loads((folder / "px4" / "px4.json").read_text())
        first = report["px4_instance"]
        assert report["px4_instances"] == [first, first + 1]
        fakes = [json.loads((folder / "px4" / str(k) / "fake.json").read_text()) for k in (first, first + 1)]
        # Vehicle k flew against instance first + k, on its port; every stand-in and its child ended with the run.
        assert [f["port"] for f in fakes] == [4560 + first, 4561 + first]
        for fake in fakes:
            assert _gone(fake["pid"]) and _gone(fake["child"]), fake
    info = json.loads((out / rows[1]["folder"] / "run.json").read_text())
    second = json.loads((out / rows[1]["folder"] / "px4" / "px4.json").read_text())["px4_instance"] + 1
    assert info["error"].startswith(f"PX4 instance {second} (vehicle 1, TCP port {4560 + second}): ")


def test_a_user_command_gets_the_instance_mavlink_url_and_ends_the_run(tmp_path, ray_cpus, fake_px4):
    script = tmp_path / "fly.py"
    script.write_text("import sys, time\nprint('flying', *sys.argv[1:], flush=True)\ntime.sleep(0.5)\n")
    text = (f'[run]\ncontroller = "px4"\nduration = 30.0\ndevice = "cpu"\n[grid]\nseed = [0]\n'
            f'[px4]\nbinary = "{fake_px4}"\ncommand = ["{sys.executable}", "{script}", "{{mavlink_url}}", "{{instance}}"]\n')
    out = tmp_path / "cmd"
    result = run_sweep(write_sweep(tmp_path, text), SweepOptions(out=out, allow_commands=True, progress=False))
    row = result.rows[0]
    assert row["status"] == "finished" and row["exit_reason"] == "done", row
    k = row["px4_instance"]
    assert (out / row["folder"] / "command.log").read_text().split() == ["flying", f"udpin:127.0.0.1:{14540 + k}", str(k)]
    assert row["sim_time_s"] < 30.0


def test_nexus_run_px4_instance_listens_on_its_port(tmp_path):
    from click.testing import CliRunner

    from nexus.cli import main
    from nexus.px4.scripted_peer import ScriptedPx4

    with claim_instance(folder=tmp_path) as claim:
        k = claim.instance.k
    peer = ScriptedPx4(4560 + k, lambda count: [0.5722] * 4 + [0.0] * 12)
    peer.start()
    out = tmp_path / "run"
    result = CliRunner().invoke(main, ["run", "--controller", "px4", "--px4-instance", str(k), "--duration", "0.2",
                                       "--device", "cpu", "--quiet", "--out", str(out)])
    peer.stop.set()
    peer.join()
    assert result.exit_code == 0, result.output
    assert json.loads((out / "run.json").read_text())["options"]["controller_options"]["port"] == 4560 + k
    assert peer.sensors == 50  # 0.2 s of 250 Hz ticks, every one exchanged with the peer on 4560 + K
    clash = CliRunner().invoke(main, ["run", "--controller", "px4", "--px4-instance", "2", "--px4-port", "4561",
                                      "--out", str(tmp_path / "no")])
    assert clash.exit_code == 2 and "disagree" in clash.output and not (tmp_path / "no").exists()


SILENT_FLEET = """
[run]
controller = "px4"
duration = 2.0
device = "cpu"

[grid]
seed = [0, 1]

[px4]
binary = "{binary}"
mission = "none"
boot_timeout = 120.0
env = {{FAKE_PX4_MODES = "0:silent,1:silent", FAKE_PX4_BARRIER = "{barrier}", FAKE_PX4_BARRIER_N = "2"}}
"""


def test_ctrl_c_ends_every_px4_and_leaves_the_sweep_resumable(tmp_path, ray_cpus, fake_px4):
    import threading
    import time

    import pytest

    from nexus.runtime.runs import describe
    from nexus.sweep.runner import _ended_row

    barrier = tmp_path / "barrier"
    barrier.mkdir()
    path = write_sweep(tmp_path, SILENT_FLEET.format(binary=fake_px4, barrier=barrier))
    out = tmp_path / "stopped"

    def press_ctrl_c_once_both_fly():  # both stand-ins started and both runs waiting for them
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            infos = [json.loads(p.read_text()) for p in out.glob("runs/*/run.json")]
            if len(list(barrier.iterdir())) == 2 and len(infos) == 2 and all(i.get("plan") or i.get("stage_plan")
                                                                               for i in infos):
                break
            time.sleep(0.1)
        os.kill(os.getpid(), signal.SIGINT)

    presser = threading.Thread(target=press_ctrl_c_once_both_fly)
    presser.start()
    with pytest.raises(KeyboardInterrupt):
        run_sweep(path, SweepOptions(out=out, progress=False))
    presser.join()
    folders = sorted(out.glob("runs/*"))
    assert len(folders) == 2
    for folder in folders:
        fake = json.loads((folder / "px4" / "fake.json").read_text())
        assert _gone(fake["pid"]) and _gone(fake["child"]), fake
        # Waiting in one call for a PX4 that never connects, the run is killed with its worker, never half-counted.
        assert describe(folder).status in ("interrupted", "killed")
        assert _ended_row(None, folder) is None  # --resume flies it again
