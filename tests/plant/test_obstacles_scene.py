"""scenes/obstacles.usda: six static obstacles at their documented places, their colours and temperatures, the
waypoint mission that flies past them, and the Astro Max's visual shapes (drawn, never colliding, weightless).

Every expected number below is written by hand from docs/scenes.md, not read back from the scene file.
"""

from pathlib import Path
from types import SimpleNamespace

import newton
import numpy as np
import pytest

from nexus.runtime.assembly import assemble
from nexus.core import Loop
from nexus.core.errors import BuildError
from nexus.guidance.tracking import WAYPOINTS_SPEC, WaypointsGuidance
from nexus.plant.frames import quat_to_matrix_np
from nexus.plant.hover import hover_command, hover_speed
from nexus.plant.temperature import read_temperatures
from nexus.plant.usd_files import open_stage
from nexus.schemas.reader import read_prim
from tests.plant.conftest import plant_only
from tests.plant.test_physics import Watcher, base

SCENE = Path(__file__).resolve().parents[2] / "scenes" / "obstacles.usda"

#: name -> (type, centre [m, ENU], half-extents [m] of a box or (radius, half height) of a pole,
#: displayColor (linear RGB), temperature [K]).
OBSTACLES = {
    "box_red": ("box", (3.0, -2.5, 0.5), (0.5, 0.5, 0.5), (0.8, 0.05, 0.05), 300.0),
    "box_yellow": ("box", (3.0, 3.0, 0.75), (0.75, 0.75, 0.75), (0.9, 0.75, 0.05), 293.0),
    "box_blue": ("box", (3.0, 8.5, 1.0), (0.5, 0.5, 1.0), (0.05, 0.2, 0.8), 288.0),
    "pole_warm": ("pole", (6.0, -2.0, 2.0), (0.15, 2.0), (0.95, 0.4, 0.02), 320.0),
    "pole_steel": ("pole", (-2.0, 6.0, 2.0), (0.1, 2.0), (0.55, 0.55, 0.6), 293.0),
    "wall_cold": ("box", (8.5, 3.0, 1.5), (0.1, 4.0, 1.5), (0.4, 0.75, 0.8), 280.0),
}
#: The west face of the wall [m, ENU x].
WALL_FACE_X = 8.4
#: The vehicle's collision boxes in the base frame (docs/vehicles.md): centre and half-extents [m].
COLLIDERS = {"hub": ((0.0, 0.0, 0.0), (0.15, 0.1, 0.075)),
             "skid_left": ((0.0, 0.22, -0.285), (0.225, 0.015, 0.015)),
             "skid_right": ((0.0, -0.22, -0.285), (0.225, 0.015, 0.015))}
#: The base origin above the ground at rest [m] (docs/vehicles.md).
REST_HEIGHT = 0.30


@pytest.fixture(scope="module")
def astro_obstacles():
    """The Astro Max in the obstacles scene with the hold controller, built once for the module."""
    return assemble("astro_max_base", "obstacles", controller="hold")


def shape_index(model, path: str) -> int:
    labels = list(model.shape_label)
    assert path in labels, f"no shape {path}"
    return labels.index(path)


def srgb_to_linear(c):
    """The sRGB transfer function inverted (IEC 61966-2-1); Newton stores shape colours as sRGB."""
    c = np.asarray(c, dtype=np.float64)
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def test_each_obstacle_is_a_static_colliding_shape_at_its_documented_place(astro_obstacles):
    model = astro_obstacles.plant.model
    flags, bodies, types = model.shape_flags.numpy(), model.shape_body.numpy(), model.shape_type.numpy()
    transforms, scales, colours = model.shape_transform.numpy(), model.shape_scale.numpy(), model.shape_color.numpy()
    for name, (kind, centre, size, colour, _) in OBSTACLES.items():
        i = shape_index(model, f"/scene/obstacles/{name}")
        assert bodies[i] == -1, f"{name} belongs to body {bodies[i]}; an obstacle is static"
        assert flags[i] & int(newton.ShapeFlags.COLLIDE_SHAPES), f"{name} does not collide"
        assert flags[i] & int(newton.ShapeFlags.VISIBLE), f"{name} is not drawn"
        expected_type = newton.GeoType.BOX if kind == "box" else newton.GeoType.CYLINDER
        assert types[i] == int(expected_type), name
        np.testing.assert_allclose(transforms[i][:3], centre, atol=1e-6, err_msg=name)
        np.testing.assert_allclose(transforms[i][3:], (0.0, 0.0, 0.0, 1.0), atol=1e-6, err_msg=name)  # upright
        np.testing.assert_allclose(scales[i][: len(size)], size, atol=1e-6, err_msg=name)
        np.testing.assert_allclose(srgb_to_linear(colours[i]), colour, atol=2e-3, err_msg=name)
        # Every obstacle stands on the ground: its bottom at z = 0.
        half_height = size[2] if kind == "box" else size[1]
        assert centre[2] - half_height == 0.0
    ground = shape_index(model, "/scene/ground")
    assert bodies[ground] == -1 and types[ground] == int(newton.GeoType.PLANE)
    # 1 ground + 6 obstacles; the vehicle's 3 colliders (hub, two skids) are counted per world below.
    static = (bodies < 0) & ((flags & int(newton.ShapeFlags.COLLIDE_SHAPES)) != 0)
    assert static.sum() == 7
    # Static shapes that are not planes: no known contact bound, so MuJoCo Warp sizes its contact buffers itself.
    assert astro_obstacles.plant.contact_capacity is None


def test_each_obstacle_has_a_temperature_in_kelvin():
    temperatures = read_temperatures(open_stage(SCENE), SCENE)
    expected = {f"/scene/obstacles/{name}": t for name, (*_, t) in OBSTACLES.items()}
    expected["/scene/ground"] = 293.0
    assert temperatures == expected
    assert all(isinstance(t, float) and t > 0.0 for t in temperatures.values())


@pytest.mark.parametrize(("authored", "error"), [
    ("float nexus:temperature = 0", "nexus:temperature is 0 K; it must be > 0"),
    ("double nexus:temperature = 280", "attribute 'nexus:temperature' is double, but its schema declares float"),
])
def test_a_bad_temperature_is_refused_with_the_prim_named(tmp_path, authored, error):
    text = SCENE.read_text()
    assert text.count("float nexus:temperature = 280") == 1  # the wall's
    bad = tmp_path / "bad.usda"
    bad.write_text(text.replace("float nexus:temperature = 280", authored))
    with pytest.raises(BuildError, match="wall_cold") as caught:
        read_temperatures(open_stage(bad), bad)
    assert error in str(caught.value)


def test_the_mission_passes_every_obstacle_at_1_5_to_3_m_and_lands_where_it_took_off():
    stage = open_stage(SCENE)
    prim = stage.GetPrimAtPath("/scene/trajectory")
    guidance = WaypointsGuidance.from_prim(prim, read_prim(prim, WAYPOINTS_SPEC, SCENE), SimpleNamespace(path=SCENE))
    reference = guidance.plan(np.zeros(3), 0.0, 0.0)  # from the NED origin, facing north
    assert 30.0 <= reference.duration <= 36.0  # about 33 s
    times = np.arange(0.0, reference.duration + 1e-9, 0.01)
    ned = reference.sample(times)[0]
    path = np.stack([ned[:, 1], ned[:, 0], REST_HEIGHT - ned[:, 2]], axis=1)  # the base origin [m, ENU]
    assert path[:, 2].max() == pytest.approx(REST_HEIGHT + 2.5)
    for name, (kind, centre, size, _, _) in OBSTACLES.items():
        if kind == "box":
            gap = np.linalg.norm(np.maximum(np.abs(path - centre) - size, 0.0), axis=1)
        else:
            radial = np.maximum(np.hypot(path[:, 0] - centre[0], path[:, 1] - centre[1]) - size[0], 0.0)
            gap = np.hypot(radial, np.maximum(path[:, 2] - (centre[2] + size[1]), 0.0))
        assert 1.5 <= gap.min() <= 3.0, f"the mission passes {name} at {gap.min():.2f} m"
    # Straight up, straight down: the climb and the landing stay on the start's vertical.
    near_ground = path[:, 2] < REST_HEIGHT + 2.4
    np.testing.assert_allclose(path[near_ground, :2], 0.0, atol=1e-6)
    # Ends on the start, the goal 0.3 m below it (the gear takes the weight).
    np.testing.assert_allclose(path[-1], (0.0, 0.0, REST_HEIGHT - 0.3), atol=1e-6)


def test_the_vehicle_visual_shapes_are_drawn_but_neither_collide_nor_weigh(astro_obstacles):
    plant = astro_obstacles.plant
    model = plant.model
    flags = model.shape_flags.numpy()
    collide = int(newton.ShapeFlags.COLLIDE_SHAPES) | int(newton.ShapeFlags.COLLIDE_PARTICLES)
    visuals = [f"/vehicle/body/base/{part}_{k}" for part in ("arm", "motor") for k in range(1, 5)]
    visuals += [f"/vehicle/body/rotor_{k}/{part}" for k in range(1, 5) for part in ("bell", "blades")]
    for path in visuals:
        i = shape_index(model, path)
        assert flags[i] & int(newton.ShapeFlags.VISIBLE), f"{path} is not drawn"
        assert not flags[i] & collide, f"{path} collides"
    for k in range(1, 5):  # the swept disks stay hidden guides
        assert flags[shape_index(model, f"/vehicle/body/rotor_{k}/disk")] == 0
    # Masses as authored (docs/vehicles.md): base 5.031 kg, four rotors of 0.2 kg, 5.831 kg in all.
    masses = model.body_mass.numpy()[: plant.bodies_per_world]
    np.testing.assert_allclose(masses, [5.031, 0.2, 0.2, 0.2, 0.2], rtol=1e-6)
    assert plant.mass == pytest.approx(5.831, rel=1e-6)
    np.testing.assert_allclose(np.diag(model.body_inertia.numpy()[0]), (0.178, 0.176, 0.291), rtol=1e-6)
    # MuJoCo gets the colliders only: 7 static shapes, the hub and two skids; no visual geom.
    assert plant.solver.mjw_model.ngeom == 10
    np.testing.assert_allclose(plant.solver.mjw_model.body_mass.numpy()[0][1:], [5.031, 0.2, 0.2, 0.2, 0.2], rtol=1e-6)


def collider_corners(pose) -> np.ndarray:
    """World positions [m] of the 24 corners of the vehicle's collision boxes at a base pose (position, xyzw)."""
    rotation = quat_to_matrix_np(np.asarray(pose[3:7], dtype=np.float64))
    signs = np.array([(x, y, z) for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=np.float64)
    local = np.concatenate([np.asarray(c) + signs * np.asarray(h) for c, h in COLLIDERS.values()])
    return np.asarray(pose[:3], dtype=np.float64) + local @ rotation.T


def test_a_vehicle_flying_into_the_wall_is_stopped_on_its_side(astro_obstacles):
    # Hovering (open loop) 1.5 m up, the front ends of its skids 0.3 m west of the wall, moving east at 1 m/s:
    # without the wall the skids would cross x = 8.4 m after 0.3 s and be 1.2 m beyond it after 1.5 s.
    plant = astro_obstacles.plant
    start_x = WALL_FACE_X - 0.225 - 0.3
    loop = Loop(plant_only(astro_obstacles) + [Watcher()], device="cpu", mode="captured").build()
    plant.reset(base_position=(start_x, 3.0, 1.5), base_velocity=(1.0, 0.0, 0.0), rotor_speed=hover_speed(plant))
    astro_obstacles.controller.set([hover_command(plant)] * 4)
    loop.run_kinds(["control"])
    front, vxs = [], []
    for _ in range(375):  # 1.5 s at 250 Hz
        loop.run(1)
        state = base(loop)
        front.append(collider_corners(state.pose)[:, 0].max())
        vxs.append(state.velocity[0])
    front, vxs = np.array(front), np.array(vxs)
    assert vxs[:50].min() > 0.99  # flying freely for the first 0.2 s
    # The skids hit the face and the vehicle pitches against it (its open-loop thrust, tilted, keeps pushing),
    # but no corner of a collision box gets through: at most 1 cm into the wall.
    assert front.max() < WALL_FACE_X + 0.01, f"a collider corner reached x = {front.max():.3f} m"
    assert front[-1] > WALL_FACE_X - 0.05  # still at the wall, not bounced far off
    assert vxs[75:125].min() < 0.5  # the impact took most of the speed within 0.2 s of contact
