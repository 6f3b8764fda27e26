"""A point flown again in a process that flew it before writes its override layer afresh.

A Ray worker keeps the USD layers it opened; on ``nexus sweep --resume`` the same worker can fly a point
again into the same folder, and ``Sdf.Layer.CreateNew`` refused the identifier still in USD's registry
("A layer already exists with identifier .../vehicle.usda": the point failed ``bad-override``, one resume
in three in tests/sweep/test_sweep.py). Here the first layer is held alive on purpose, as the worker held it.
"""

from pathlib import Path

from pxr import Sdf, Usd

from nexus.sweep.overrides import write_overrides

ROOT = Path(__file__).resolve().parents[2]
VEHICLE = str(ROOT / "vehicles" / "astro_max_base.usda")
SCENE = str(ROOT / "scenes" / "empty.usda")
HOVER = "/vehicle/controller nexus:hoverThrust"


def hover_thrust(path: str) -> float:
    stage = Usd.Stage.Open(path)
    return stage.GetPrimAtPath("/vehicle/controller").GetAttribute("nexus:hoverThrust").Get()


def test_a_second_write_into_the_same_folder_replaces_the_held_layer(tmp_path):
    first, _ = write_overrides(tmp_path, VEHICLE, SCENE, {HOVER: 0.56})
    held = Sdf.Layer.FindOrOpen(first)  # what the worker's earlier flight opened and kept
    assert held is not None and abs(hover_thrust(first) - 0.56) < 1e-6

    again, scene = write_overrides(tmp_path, VEHICLE, SCENE, {HOVER: 0.572})

    assert again == first == str(tmp_path / "vehicle.usda") and scene == SCENE
    # The new value, in memory and on disk (a fresh process reads the file), with the vehicle below it.
    assert abs(hover_thrust(again) - 0.572) < 1e-6
    on_disk = (tmp_path / "vehicle.usda").read_text()
    assert "nexus:hoverThrust = 0.572" in on_disk and "0.56" not in on_disk.replace("0.572", "")
    assert Sdf.Layer.Find(again).subLayerPaths == [VEHICLE]
