"""``sweep.parquet``'s columns: the PX4 columns only where points fly PX4."""

from __future__ import annotations

import pyarrow.parquet as pq

from nexus.sweep.table import write_table


def test_a_sweep_without_px4_has_no_px4_columns(tmp_path):
    rows = [{"point": "p0", "values": {"seed": 0}, "status": "finished", "ticks": 50},
            {"point": "p1", "values": {"seed": 1}, "status": "finished", "ticks": 50, "worlds_failed": 0}]
    table = pq.read_table(write_table(tmp_path, ["seed"], rows))
    assert "px4_instance" not in table.column_names and "ulog" not in table.column_names
    assert table.column("worlds_failed").to_pylist() == [None, 0]


def test_a_sweep_with_px4_points_has_them(tmp_path):
    rows = [{"point": "p0", "values": {"seed": 0}, "status": "finished", "px4_instance": 2, "ulog": "px4/log/a.ulg"},
            {"point": "p1", "values": {"seed": 1}, "status": "pending"}]
    table = pq.read_table(write_table(tmp_path, ["seed"], rows))
    assert table.column("px4_instance").to_pylist() == [2, None]
    assert table.column("ulog").to_pylist() == ["px4/log/a.ulg", None]
