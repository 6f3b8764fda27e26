"""A flight's ring is composed from declared places: the order is today's, and no hash decides it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: A scenario that adds everything a scenario can add to the ring: steps, drag, two sensor faults (one a stage
#: of its own), a rotor fault fired by a condition, the contact count, a gust and a gain factor.
SCENARIO = """
name = "everything"
duration = 1.6
vehicle = "hexa_f550"
[environment]
drag_area = [0.01, 0.01, 0.02]
[[environment.gust]]
start = 0.5
duration = 0.5
amplitude = 2
direction = 90
[controller]
name = "pid"
gain_scale = {rate_p = 0.5}
[[fault]]
kind = "sensor"
sensor = "Baro"
mode = "freeze"
when = {step = 1}
[[fault]]
kind = "sensor"
sensor = "Mag"
mode = "freeze"
at = 1.0
[[fault]]
kind = "rotor"
fraction = 1.0
when = {speed_above = 0.3}
[[fault]]
kind = "gps_denied"
at = 1.2
[[step]]
do = "wait"
until_time = 1.0
[[step]]
do = "takeoff"
height = 0.5
[[check]]
measure = "contact"
"""

#: Builds the default flight and the scenario's, and prints each ring's components and stages in order.
SCRIPT = """
import json, logging, sys
from pathlib import Path
logging.disable(logging.CRITICAL)
from nexus.runtime.flight import build_flight
from nexus.runtime.config import RunConfig
from nexus.scenario.spec import load
scenario = load(Path(sys.argv[1]))
rings = {}
for key, config in (("default", RunConfig()), ("scenario", RunConfig(**scenario.run, scenario=scenario.ring))):
    flight = build_flight(config, "cpu", start_render=False)
    flight.loop.close()
    rings[key] = {"components": [c.name for c in flight.loop.components],
                  "stages": [f"{s.kind}:{s.component.name}:{s.name}" for s in flight.loop.plan.stages],
                  "plan": flight.loop.plan.text()}
print(json.dumps(rings))
"""

#: The scenario ring's components as the list-splicing assembly built them (before places were declared).
SCENARIO_COMPONENTS = [
    "clock", "/plant", "/scene/wind", "/vehicle/body/base/Imu", "/vehicle/body/base/Mag", "/vehicle/body/base/Baro",
    "/vehicle/body/base/Gps", *(f"/vehicle/esc_{i}" for i in range(1, 7)),
    *(f"/vehicle/propeller_{i}" for i in range(1, 7)), "/vehicle/estimator", "/scene/mission", "/scenario/drag",
    "/vehicle/controller", "/scenario/sensor_faults/1", "/scenario/sensor_faults/2", "/scenario/fault_trigger", "/scenario/contact",
    "/sensors/faults", "/plant/crash", "/record",
]
SCENARIO_PLAN = (
    "stage plan: graph(clock -> clear -> esc -> esc -> esc -> esc -> esc -> esc -> wind -> propeller -> propeller -> "
    "propeller -> propeller -> propeller -> propeller -> drag -> step -> state -> contact -> crash -> imu -> mag -> "
    "baro -> gps -> faults -> faults -> faults -> ekf_estimate) host(mission) host(fault_trigger) graph(pid) "
    "graph(record)"
)


def rings_under(hash_seed: str, scenario: Path) -> dict:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(scenario)], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_ring_is_the_same_under_two_hash_seeds_and_keeps_the_order_of_the_spliced_list(tmp_path):
    scenario = tmp_path / "everything.toml"
    scenario.write_text(SCENARIO)
    one, two = rings_under("1", scenario), rings_under("2", scenario)
    assert one == two
    assert one["scenario"]["components"] == SCENARIO_COMPONENTS
    assert one["scenario"]["plan"] == SCENARIO_PLAN
    assert one["default"]["plan"].startswith("stage plan: graph(clock -> clear -> esc -> esc -> esc -> esc -> drag -> "
                                             "propeller -> propeller -> propeller -> propeller -> step -> state -> ")
