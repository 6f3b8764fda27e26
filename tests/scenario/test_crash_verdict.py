"""A scenario whose vehicle crashes fails, whatever its checks saw (nexus/plant/crash.py, nexus/scenario/runner.py).

The Astro Max (a quadrotor) loses rotor 0 as its hover begins, and its PID is not told: it flips and falls from
2 m (docs/vehicles.md, "Rotor failures"). The scenario's one check, tilt up to 180 deg, cannot fail; the run ends
``crashed``, and the case is a failure that names the crash.
"""

import json

from nexus.core.warp_setup import init_warp
from nexus.scenario.runner import ScenarioOptions, judge, prepare
from nexus.sweep.task import fly_point

SCENARIO = """
name = "quad_rotor_loss"
duration = 10.0

[[fault]]
kind = "rotor"
when = {step = 1}
rotor = 0

[[step]]
do = "takeoff"
height = 2.0
time_limit = 4.0

[[step]]
do = "hold"
time = 5.0

[[check]]
measure = "tilt"
max = 180.0
"""


def test_a_crash_fails_the_scenario_though_every_check_passed(tmp_path):
    path = tmp_path / "quad_rotor_loss.toml"
    path.write_text(SCENARIO)
    init_warp(False)
    cases, points = prepare([path], ScenarioOptions(out=tmp_path / "out"))
    (case,), (point,) = cases, points
    fly_point(point.as_dict(), str(tmp_path / point.id))
    judge(case, tmp_path / point.id)
    info = json.loads((tmp_path / point.id / "run.json").read_text())
    crashed = info["crash"]["crashed"]
    assert info["exit_reason"] == "crashed" and crashed["speed_m_s"] > 3.0
    assert [r.passed for r in case.results] == [True]
    assert case.verdict == "failed"
    assert case.reason.startswith(f"crashed at tick {crashed['tick']} ({crashed['time_s']:.3f} s): the vehicle "
                                  f"touched down at {crashed['speed_m_s']:.2f} m/s, over the 3 m/s a crash is")
