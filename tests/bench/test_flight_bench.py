"""The flight suite's loop-vs-bare rounds on the EKF (nexus/bench/flight.py): the loop flies the filter, the bare
side steps the same solver from the state that loop reached, as for the truth. No timing is asserted."""

from __future__ import annotations

import pytest

from nexus.bench import flight
from nexus.runtime.config import RunConfig


@pytest.fixture(scope="module")
def rounds(tmp_path_factory):
    patch = pytest.MonkeyPatch()
    patch.setattr(flight, "ROUND_TICKS", 16)
    patch.setattr(flight, "AIRBORNE_S", 0.2)
    folder = tmp_path_factory.mktemp("rounds")
    try:
        return {name: flight.loop_against_bare("cpu", folder, wall=False, options=options, rounds=1)
                for name, options in (("truth", RunConfig(estimator="truth")), ("ekf", flight.ekf_options()))}
    finally:
        patch.undo()


def test_the_ekf_figure_flies_the_default_flight_on_the_filter():
    assert flight.ekf_options() == RunConfig(estimator="ekf")


def test_both_loops_fly_their_estimator_and_both_bare_sides_step_the_same_solver(rounds):
    truth, ekf = rounds["truth"], rounds["ekf"]
    assert "truth_estimate" in truth["stages"] and "truth_estimate" not in ekf["stages"]
    assert set(ekf["stages"]) - set(truth["stages"])  # the filter's own stage(s)
    assert truth["bare_kernels"] == ekf["bare_kernels"]  # the bare side: one solver step, whatever the estimator
    for best in (truth, ekf):
        assert best["loop"] == pytest.approx(best["loop_flying"] + best["drain"])
        assert min(best["loop_flying"], best["bare"], best["drain"]) > 0
        assert best["kernels_per_tick"] > best["bare_kernels"]
