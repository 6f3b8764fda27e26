"""A PX4 scenario flies through the sweep's PX4 fleet (a stand-in PX4: tests/sweep/fake_px4.py), in this process."""

import stat
import sys
from pathlib import Path

from nexus.scenario.runner import ScenarioOptions, judge, prepare

FAKE_PX4 = Path(__file__).resolve().parents[1] / "sweep" / "fake_px4.py"
SCENARIO = """
name = "px4_hover"
duration = 1.0

[controller]
name = "px4"

[px4]
binary = "bin/px4"
mission = "none"
settle = true
pinned = {pinned}

[[check]]
measure = "tilt"
max = 30.0

[[check]]
measure = "px4_mission"
"""


def test_a_px4_scenario_says_it_flew_settled_and_pinned_and_fails_a_mission_it_never_flew(tmp_path):
    from nexus.core.warp_setup import init_warp
    from nexus.sweep.task import fly_point

    binary = tmp_path / "bin" / "px4"
    binary.parent.mkdir()
    binary.write_text(f"#!{sys.executable}\nimport runpy\nrunpy.run_path({str(FAKE_PX4)!r}, run_name='__main__')\n")
    binary.chmod(binary.stat().st_mode | stat.S_IXUSR)
    (tmp_path / "pinned.toml").write_text(SCENARIO.format(pinned="true"))
    (tmp_path / "loose.toml").write_text(SCENARIO.format(pinned="false").replace("px4_hover", "px4_loose"))
    cases, points = prepare([tmp_path / "pinned.toml"], ScenarioOptions(out=tmp_path))
    assert points[0].px4["pin_cpu"] == 0  # the fleet starts PX4 under taskset -c 0
    _, loose = prepare([tmp_path / "loose.toml"], ScenarioOptions(out=tmp_path))
    assert "pin_cpu" not in loose[0].px4
    init_warp(False)
    (case,) = cases
    fly_point(points[0].as_dict(), str(tmp_path / "runs" / points[0].id))
    judge(case, tmp_path / "runs" / points[0].id)
    assert case.reproducible is True  # run.json counted settle waits, and PX4 was pinned
    tilt, mission = case.results
    assert tilt.passed
    assert not mission.passed  # PX4 flew no mission here: it never landed and disarmed
    assert case.verdict == "failed"
