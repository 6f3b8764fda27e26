"""The downward rangefinder: distances worked out by hand, range limits, rate, noise, and a real flight.

Geometry (world ENU, ground plane z = 0): a beam from the mount point along
the body's down axis meets the ground after ``height / cos(tilt)``.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
import warp as wp

from nexus.core import BuildError
from nexus.plant.assets import with_base_prims
from nexus.sensors.rangefinder import Rangefinder
from tests.sensors.conftest import KnownBody, known_ring, sample

PRIM = "/vehicle/body/base/Rangefinder"


def rangefinder(**kw) -> Rangefinder:
    kw.setdefault("noise", False)
    return Rangefinder(PRIM, **kw)


def reading(loop, ticks: int = 1):
    for _ in range(ticks):
        loop.tick()
    return sample(loop, "range")


def tilted(roll: float, height: float) -> KnownBody:
    """A body ``height`` [m] up, rolled ``roll`` [rad] about its forward (x) axis."""
    body = KnownBody(position=(0.0, 0.0, height))
    body.state.pose = wp.transform(wp.vec3(0.0, 0.0, height), wp.quat(math.sin(roll / 2.0), 0.0, 0.0, math.cos(roll / 2.0)))
    return body


def test_level_body_reads_its_height_less_the_mount_drop():
    # 3 m up, the sensor mounted 5 cm below the body origin: 2.95 m to the ground.
    loop = known_ring([rangefinder(mount=(0.1, 0.0, -0.05))], position=(0.0, 0.0, 3.0))
    got = reading(loop)
    assert got.valid == 1
    assert got.distance == pytest.approx(2.95, abs=1e-6)


def test_a_tilted_beam_reads_height_over_cosine():
    from nexus.core import Loop

    # Rolled 30 degrees at 2 m: 2 / cos(30 deg) = 2.3094011 m.
    loop = Loop([tilted(math.radians(30.0), 2.0), rangefinder()], device="cpu").build()
    got = reading(loop)
    assert got.valid == 1
    assert got.distance == pytest.approx(2.3094011, abs=1e-5)


@pytest.mark.parametrize("height, roll", [(20.0, 0.0), (0.1, 0.0), (2.0, math.radians(100.0))])
def test_out_of_range_is_flagged_and_reads_max_plus_one_centimetre(height, roll):
    from nexus.core import Loop

    # Beyond 14 m, nearer than 0.2 m, and a beam pointing above the horizon.
    loop = Loop([tilted(roll, height), rangefinder()], device="cpu").build()
    got = reading(loop)
    assert got.valid == 0
    assert got.distance == pytest.approx(14.01, abs=1e-6)


def test_samples_at_its_rate_and_holds_between():
    # 50 Hz on a 250 Hz tick: a new sample every 5th tick (20 ms).
    loop = known_ring([rangefinder(rate=50.0)], position=(0.0, 0.0, 3.0))
    stamps = [float(reading(loop).time) for _ in range(11)]
    assert stamps == pytest.approx([0.004] * 5 + [0.024] * 5 + [0.044])


def test_noise_has_the_authored_sigma_and_zero_mean():
    loop = known_ring([Rangefinder(PRIM, rate=0.0, noise_sigma=0.05)], position=(0.0, 0.0, 3.0), seed=11)
    values = np.array([float(reading(loop).distance) for _ in range(4000)])
    # 4000 draws: the sample sigma is within 4 % of 0.05, the mean within 4 sigma/sqrt(n) of 3 m.
    assert values.std() == pytest.approx(0.05, rel=0.04)
    assert abs(values.mean() - 3.0) < 4 * 0.05 / math.sqrt(4000)


def test_min_above_max_is_refused_naming_the_prim():
    with pytest.raises(BuildError, match=rf"{PRIM}: nexus:minDistance \(5.0 m\) must be below nexus:maxDistance \(2.0 m\)"):
        Rangefinder(PRIM, min_distance=5.0, max_distance=2.0)


RANGEFINDER_PRIM = """
            def Xform "Rangefinder" (
                prepend apiSchemas = ["NexusRangefinderAPI"]
            )
            {{
                float3 nexus:mountOffset = (0, 0, -0.04)
{attributes}
            }}
"""


def vehicle_file(folder: Path, **floats: float) -> Path:
    """The Astro Max with a rangefinder 4 cm below its base; ``floats`` author ``float nexus:<name>`` attributes
    (``maxDistance`` defaults to 8 m)."""
    floats.setdefault("maxDistance", 8.0)
    attributes = "\n".join(f"                float nexus:{name} = {value}" for name, value in floats.items())
    return with_base_prims(folder / "astro_max_rangefinder.usda", RANGEFINDER_PRIM.format(attributes=attributes))


def nexus(*args, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "nexus.cli", *args], cwd=cwd, capture_output=True, text=True, timeout=600)


def test_a_vehicle_file_with_a_rangefinder_flies_records_it_and_replays(tmp_path):
    # The short mission climbs to 2 m and lands: the record's range column follows the base's height.
    out = tmp_path / "run"
    flown = nexus("run", "--vehicle", str(vehicle_file(tmp_path)), "--scene", "empty", "--mission", "short",
                  "--device", "cpu", "--out", str(out), cwd=tmp_path)
    assert flown.returncode == 0, flown.stderr
    table = pq.read_table(out / "record.parquet")
    assert {"range.time", "range.distance", "range.valid"} <= set(table.column_names)
    column = {name: table.column(name).to_numpy() for name in ("range.valid", "range.distance", "body/base.pose[2]")}
    valid = column["range.valid"] == 1
    # Valid from 0.2 m up: all but the first moments of the climb and the last of the landing.
    assert valid.sum() > 0.8 * len(valid)
    distance = column["range.distance"][valid]
    assert distance.max() > 1.9  # the short mission's 2 m hover is in range (8 m)
    # The reading is the mount's height (4 cm below the base origin): off by the 2 cm noise, the
    # tilt of the manoeuvres and at most one 20 ms sample period of climb (2.5 cm at 1.25 m/s).
    error = distance - (column["body/base.pose[2]"][valid] - 0.04)
    assert abs(np.median(error)) < 0.01
    assert np.abs(error).max() < 0.12
    assert json.loads((out / "run.json").read_text())["exit_reason"] in ("done", "landed")
    replayed = nexus("replay", str(out), cwd=tmp_path)
    assert replayed.returncode == 0, replayed.stderr + replayed.stdout
    assert "identical" in replayed.stdout


def test_a_bad_range_attribute_names_the_file_the_prim_and_the_attribute(tmp_path):
    path = vehicle_file(tmp_path, maxDistance=-1.0)
    failed = nexus("run", "--vehicle", str(path), "--scene", "empty", "--device", "cpu", "--out", str(tmp_path / "r"),
                   cwd=tmp_path)
    assert failed.returncode != 0
    assert f"{path}: sensor prim {PRIM}: nexus:maxDistance is -1 m; it must be > 0" in failed.stderr


def components_doc_layer() -> str:
    """The whole-layer rangefinder example of docs/components.md, as the doc shows it."""
    doc = (Path(__file__).resolve().parents[2] / "docs" / "components.md").read_text()
    blocks = [block.split("\n```", 1)[0] for block in doc.split("```usda\n")[1:]]
    layers = [block for block in blocks if "NexusRangefinderAPI" in block]
    assert len(layers) == 1, "docs/components.md should show one rangefinder layer"
    return layers[0]


def test_the_components_doc_rangefinder_layer_flies_with_range_columns(tmp_path):
    # The doc says: save it next to vehicles/astro_max_base.usda. In 1 s of the default mission the base
    # starts 0.30 m up and climbs: the mount (4 cm below the base origin) is above the 0.2 m minimum
    # throughout, so every sample is valid and reads the mount's height within the 2 cm noise.
    base = Path(__file__).resolve().parents[2] / "vehicles" / "astro_max_base.usda"
    (tmp_path / "astro_max_base.usda").write_text(base.read_text())
    vehicle = tmp_path / "astro_max_range.usda"
    vehicle.write_text(components_doc_layer())
    out = tmp_path / "run"
    flown = nexus("run", "--vehicle", str(vehicle), "--duration", "1", "--device", "cpu", "--out", str(out), cwd=tmp_path)
    assert flown.returncode == 0, flown.stderr
    table = pq.read_table(out / "record.parquet")
    assert {"range.time", "range.distance", "range.valid"} <= set(table.column_names)
    # 50 Hz over ticks at 4 ms ... 1000 ms: samples taken at 0, 20, ..., 1000 ms.
    np.testing.assert_allclose(np.unique(table.column("range.time").to_numpy()), np.arange(51) * 0.02, atol=1e-6)
    assert (table.column("range.valid").to_numpy() == 1).all()
    error = table.column("range.distance").to_numpy() - (table.column("body/base.pose[2]").to_numpy() - 0.04)
    assert abs(np.median(error)) < 0.01


def test_the_doc_example_pasted_at_a_layer_root_is_refused_naming_the_prim(tmp_path):
    # The fragment of the old doc: its `over "base"` opens a /base that no layer defines.
    layer = components_doc_layer()
    header, body = layer.split(")\n", 1)
    fragment = body[body.index('        over "base"'):body.rindex("    }\n}")]
    fragment = "\n".join(line[8:] for line in fragment.splitlines())
    path = tmp_path / "fragment.usda"
    path.write_text(header.replace("@astro_max_base.usda@", f"@{Path(__file__).resolve().parents[2]}/vehicles/"
                                   "astro_max_base.usda@") + ")\n\n" + fragment + "\n")
    with pytest.raises(BuildError) as caught:
        from nexus.plant.loading import open_stage

        open_stage(path)
    assert str(caught.value) == (
        f"{path}: prim /base/Rangefinder applies NexusRangefinderAPI but Nexus never reads it: /base is only an "
        "'over', and no layer defines it; nest it under the prims it belongs to, e.g. over \"vehicle\" { over "
        "\"body\" { over \"base\" { ... } } } for a sensor on the Astro Max's base")
