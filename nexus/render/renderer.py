"""The renderer: its own copy of the scene and vehicle, posed from the loop's body poses and ray-traced.

Both render modes use this class: the peer process (:mod:`nexus.render.peer`)
and ``--render inline``. It loads the vehicle and scene files itself, so it
never touches the flight's model or state, and a render cannot change a bit
of the physics. Newton's ray tracer runs with fast math off, so a CPU render
of the same poses gives the same bytes in any process.
"""

from __future__ import annotations

from pathlib import Path

from newton.sensors import SensorCamera
import numpy as np
import warp as wp

from nexus.plant.loading import load_plant
from nexus.render.request import ViewSpec, output_layout
from nexus.render.views import camera_mount, lidar_column_mounts, lidar_elevations, lidar_rays, sensor_transforms

#: The shape-index image's "nothing hit" value (Newton's default clear value).
NO_SHAPE = 0xFFFFFFFF
#: A segmentation pixel that hit nothing.
NO_LABEL = 0xFFFFFFFF
#: Where the bodies are put for a lidar sweep [m]: below the ground plane, beyond any range.
HIDDEN_AT = (0.0, 0.0, -1.0e5)


def temperature_of(stages, label: str, ambient: float) -> float:
    """``nexus:temperature`` [K] of the prim a shape came from, or of its nearest ancestor that has one."""
    for stage in stages:
        prim = stage.GetPrimAtPath(label) if label.startswith("/") else None
        while prim is not None and prim.IsValid() and prim.GetPath().pathString != "/":
            attribute = prim.GetAttribute("nexus:temperature")
            if attribute and attribute.HasAuthoredValue():
                return float(attribute.Get())
            prim = prim.GetParent()
    return ambient


class _Sensor:
    """What the renderer keeps for one sensor: its rays, outputs and view mapping."""

    def __init__(self, spec: ViewSpec, worlds: int, camera, device: str):
        self.spec = spec
        self.layout = output_layout(spec, worlds)
        if spec.kind == "lidar":
            rays = lidar_rays(lidar_elevations(spec.height, spec.fov))
            self.rays = wp.array(rays.reshape(spec.height, 1, 1, 2, 3), dtype=wp.vec3f, device=device)
            self.mounts = lidar_column_mounts(spec.width)  # (columns, 4)
            self.views = worlds * spec.width
            self.world_indices = wp.array(np.repeat(np.arange(worlds, dtype=np.int32), spec.width), dtype=wp.int32,
                                          device=device)
            self.depth = camera.allocate_image_depth(self.views, 1, spec.height)
        else:
            self.rays = SensorCamera.compute_camera_rays_pinhole(spec.width, spec.height, camera_fov=spec.fov,
                                                                  device=device)
            self.mounts = camera_mount(spec.tilt)[np.newaxis]
            self.views = worlds
            self.world_indices = wp.array(np.arange(worlds, dtype=np.int32), dtype=wp.int32, device=device)
            h, w = spec.height, spec.width
            wants = set(spec.outputs)
            self.color = camera.allocate_image_color(worlds, w, h) if "color" in wants else None
            self.depth = camera.allocate_image_depth_forward(worlds, w, h) if "depth" in wants else None
            self.normal = camera.allocate_image_normal(worlds, w, h) if "normal" in wants else None
            needs_shapes = "segmentation" in wants or spec.kind == "thermal"
            self.shapes = camera.allocate_image_shape_index(worlds, w, h) if needs_shapes else None
        self.transforms = wp.zeros(self.views, dtype=wp.transformf, device=device)


class SceneRenderer:
    """Renders the sensors of ``specs`` for ``worlds`` worlds of ``vehicle`` in ``scene`` on ``device``."""

    def __init__(self, vehicle: str | Path, scene: str | Path, worlds: int, device: str, specs: list[ViewSpec]):
        plant, vehicle_stage, scene_stage = load_plant(vehicle, scene, device, worlds=worlds)
        self.model = plant.model
        self.state = self.model.state()
        self.worlds = worlds
        self.bodies_per_world = plant.bodies_per_world
        self.device = device
        config = SensorCamera.RenderConfig(enable_fast_math=False)  # the same bytes in every process
        self.camera = SensorCamera(self.model, default_render_config=config, load_textures=False)
        self.camera.create_default_light()
        self.sensors = {spec.name: _Sensor(spec, worlds, self.camera, device) for spec in specs}
        #: Prim path of each segmentation id (the shapes' labels, sorted; one id for a prim in every world).
        labels = [str(label) for label in self.model.shape_label]
        self.labels = sorted(set(labels))
        index = {label: i for i, label in enumerate(self.labels)}
        self._label_of_shape = np.array([index[label] for label in labels] + [NO_LABEL], dtype=np.uint32)
        stages = (scene_stage, vehicle_stage)
        self._temperatures = {
            spec.name: np.array([temperature_of(stages, label, spec.ambient) for label in labels] + [spec.sky],
                                dtype=np.float32)
            for spec in specs if spec.kind == "thermal"
        }

    def shape_lookup(self, shapes: np.ndarray, table: np.ndarray) -> np.ndarray:
        """Per-pixel values of ``table`` (one per shape, then one for "no shape") from a shape-index image."""
        index = np.where(shapes == NO_SHAPE, len(table) - 1, np.minimum(shapes, len(table) - 1))
        return table[index]

    def render(self, name: str, body_q: np.ndarray, sensor_poses: np.ndarray | None = None) -> dict[str, np.ndarray]:
        """One frame of sensor ``name``: the scene posed by ``body_q`` (every body of every world, (bodies, 7)).

        ``sensor_poses``: for a lidar, the pose of its body when each column was taken, (worlds, columns, 7);
        else the pose in ``body_q`` is used.
        """
        sensor = self.sensors[name]
        spec = sensor.spec
        if spec.kind == "lidar":
            # Each column is cast from its own pose while the bodies could be drawn at one pose only: the
            # vehicle would be in the way of its own early columns. A lidar does not see its own vehicle
            # (a real one masks it out): the bodies go far below the ground, out of every ray's reach.
            body_q = np.array(body_q, dtype=np.float32, copy=True)
            body_q[:, :3] = HIDDEN_AT
        self.state.body_q.assign(np.ascontiguousarray(body_q, dtype=np.float32))
        self.model.bvh_refit_shapes(self.state)
        offset = np.array(spec.offset, dtype=np.float64)
        if spec.kind == "lidar":
            poses = np.asarray(sensor_poses, dtype=np.float64).reshape(self.worlds, spec.width, 7)
            transforms = sensor_transforms(poses, offset, sensor.mounts[np.newaxis])
        else:
            bodies = spec.body + np.arange(self.worlds) * self.bodies_per_world
            transforms = sensor_transforms(np.asarray(body_q, dtype=np.float64)[bodies], offset, sensor.mounts)
        sensor.transforms.assign(transforms.reshape(-1, 7).astype(np.float32))
        if spec.kind == "lidar":
            self.camera.update(self.state, sensor.transforms, sensor.rays, depth_image=sensor.depth,
                               world_indices=sensor.world_indices)
            # (worlds x columns views, 1, channels) -> (worlds, channels, columns)
            depth = sensor.depth.numpy().reshape(self.worlds, spec.width, spec.height)
            return {"range": depth.transpose(0, 2, 1).copy()}  # a copy: depth is the next render's buffer
        self.camera.update(self.state, sensor.transforms, sensor.rays, color_image=sensor.color,
                           forward_depth_image=sensor.depth, normal_image=sensor.normal,
                           shape_index_image=sensor.shapes, world_indices=sensor.world_indices)
        out: dict[str, np.ndarray] = {}
        if spec.kind == "thermal":
            out["temperature"] = self.shape_lookup(sensor.shapes.numpy(), self._temperatures[name])
            return out
        for channel in spec.outputs:
            if channel == "color":
                out["color"] = sensor.color.numpy().view(np.uint8).reshape(self.worlds, spec.height, spec.width, 4).copy()
            elif channel == "depth":
                out["depth"] = sensor.depth.numpy().copy()
            elif channel == "normal":
                out["normal"] = sensor.normal.numpy().reshape(self.worlds, spec.height, spec.width, 3).copy()
            elif channel == "segmentation":
                out["segmentation"] = self.shape_lookup(sensor.shapes.numpy(), self._label_of_shape)
        return out
