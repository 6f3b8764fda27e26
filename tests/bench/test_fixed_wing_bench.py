"""The ``fixed_wing`` bench suite runs the Aerosonde's default run and reports every field; it asserts no time."""

from __future__ import annotations

from nexus.bench import fixed_wing
from nexus.bench.suites import SUITES


def test_the_suite_is_registered_and_reports_the_plane_s_ratio_and_its_wing_stages():
    assert SUITES["fixed_wing"] == "nexus.bench.fixed_wing"
    result = fixed_wing.run("cpu", rounds=1)
    assert result["suite"] == "fixed_wing" and result["vehicle"] == "aerosonde"
    # Three surfaces (summed), the aerodynamics and the propulsion: the stages a multirotor lacks.
    assert set(result["stage_us"]) == {"surface", "aero", "propulsion"}
    assert all(cost > 0.0 for cost in result["stage_us"].values())
    assert result["loop_vs_bare"] == result["loop_tick_us"] / result["bare_step_us"]
    assert result["aero_share"] == result["stage_us"]["aero"] / result["loop_tick_us"]
    assert result["kernels_per_tick"] > result["bare_kernels"] > 0
    assert set(result["targets_met"]) == {"loop_vs_bare"}
    assert result["launch_us"] > 0.0 and result["memset_us"] > 0.0  # this machine's replay costs, beside the ratio
    rows = dict(fixed_wing.table(result))
    assert "loop vs bare, airborne (target <= 1.3)" in rows
    assert "one captured launch / memset on this machine now [µs]" in rows
