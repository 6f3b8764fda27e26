"""``nexus run --view``: the live view serves while the vehicle flies and keeps to its wall-time budget."""

import json
import socket
import urllib.request

from click.testing import CliRunner

from nexus.cli import main
from nexus.runtime.config import RunConfig
from nexus.runtime.run import run_flight
from nexus.viz.live import BUDGET, LiveWatch


def test_live_view_serves_during_the_run_within_its_budget(tmp_path):
    pages = []

    def say(line):  # called once the viewer is up, before the first tick
        url = line.rsplit(" ", 1)[-1]
        with urllib.request.urlopen(url, timeout=10) as answer:
            pages.append((line, answer.status, answer.read(200)))

    watch = LiveWatch("127.0.0.1", 0, say=say)
    try:
        # 20 s of sim time with the motors off: the vehicle rests on its skids.
        run_flight(RunConfig(controller="hold", device="cpu", duration=20.0), tmp_path / "run", progress=False,
                   watch=watch)
        live = watch.live
        frames, cost = live.frames, live.cost_s
        resting = live.flown[-1]
    finally:
        line = watch.close()
    assert pages and pages[0][0].startswith("live view at http://127.0.0.1:")
    assert pages[0][1] == 200 and b"<html" in pages[0][2].lower()  # viser's page, served at the printed URL
    assert frames >= 1  # the first update always draws
    wall = json.loads((tmp_path / "run" / "run.json").read_text())["wall_time_s"]
    # Each frame that cost c waits c / BUDGET before the next: drawing takes at most BUDGET of the wall time,
    # plus the one frame the run forces at its end.
    assert cost <= BUDGET * wall + cost / frames + 1e-3, (cost, wall, frames)
    assert "live view:" in line and "frames" in line
    # What the view drew last is the vehicle at rest on its skids: their bottoms are 0.285 + 0.015 = 0.30 m below
    # the base origin (vehicles/astro_max_base.usda), less a fraction of a millimetre of contact penetration.
    assert 0.299 < resting[2] <= 0.3001


def test_run_view_on_a_busy_port_is_refused_before_anything_is_written(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = CliRunner().invoke(main, ["run", "--controller", "hold", "--view", "--view-port", str(port),
                                           "--out", str(tmp_path / "run")])
    assert result.exit_code == 2, result.output
    assert f"port {port} on 127.0.0.1 is in use" in result.output
    assert not (tmp_path / "run").exists()
