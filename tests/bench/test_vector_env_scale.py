"""The vector env's scale figures: the table's lines from a result worked by hand (no timing in a test)."""

from __future__ import annotations

from nexus.bench.vector_env_scale import lines


def test_the_lines_give_both_figures_the_speed_up_and_the_load():
    row = {"worlds": 64, "shards": 2, "one_process": {"drone_ticks_per_s": 100_000.0},
           "sharded": {"drone_ticks_per_s": 180_000.0}, "speedup": 1.8}
    result = {"clock": "wall", "cores": 2, "rows": [row], "load_average": {"before": [0.5, 0.4, 0.3],
                                                                          "after": [1.25, 0.5, 0.3]}}
    assert lines(result) == [
        ("vector env, N=64: one process / 2 shards [drone-ticks/s, wall]", "100,000 / 180,000 (1.80x)"),
        ("vector env: load average (1 min) before / after", "0.50 / 1.25"),
    ]
