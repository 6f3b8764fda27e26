"""The machine's own cost of a captured launch and memset (nexus/bench/replay_cost.py): what it times is what it
says it times; no time is asserted."""

from __future__ import annotations

from nexus.bench import replay_cost


def test_each_figure_replays_a_graph_of_a_thousand_of_its_own_operation():
    figures = replay_cost.replay_cost_us("cpu")
    # One kernel node per launch and one memset node per zero_(): 1,000 each, nothing else in either graph.
    assert figures["launch_nodes"] == 1000 and figures["memset_nodes"] == 1000
    assert figures["launch_us"] > 0.0 and figures["memset_us"] > 0.0
