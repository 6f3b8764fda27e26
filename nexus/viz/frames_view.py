"""``nexus view`` of a run with ray-traced sensors: camera images in the panel, lidar sweeps in the 3-D view.

A **Sensors** folder under the Replay panel holds one image per camera and
thermal camera: the frame at the slider's time (:meth:`SensorStream.index_at`)
of the selected world, scaled up by a whole factor (nearest pixel) so a small
sensor stays sharp, with a caption (frame number, the time it shows, and the
colour scale of depth and temperature). A camera with several channels gets
a dropdown to pick the one shown. Each lidar's last whole sweep is a point
cloud in the 3-D view, placed in the world from the body's recorded pose at
each column's time and the lidar's mount (:func:`nexus.viz.frames.sweep_in_world`),
coloured by range (drawn half a point, 3 cm, above where the points are, so that
the ground grid does not hide the ground returns); **Show lidar** hides it. Frames are read once per world and
only what changed is sent.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from nexus.render.preview import MIN_WIDTH, preview_factor, to_rgb, upscale
from nexus.viz.frames import SensorStream, range_colours, sweep_in_world

#: Image panels are scaled up to at least this many pixels wide, as the MP4 previews are.
PANEL_WIDTH = MIN_WIDTH
#: Size of a lidar point in the 3-D view [m].
POINT_SIZE = 0.06
#: The cloud is drawn this much above where its points are [m] (drawing only): a ground return at z = 0 would
#: otherwise sink into viser's ground grid and not be seen.
POINT_LIFT = POINT_SIZE / 2.0


class SensorPanels:
    """The Sensors folder of a replay: image panels and lidar clouds that follow the slider.

    ``poses_for(world)`` gives a world's recorded base pose rows: (times (rows,) [s], poses (rows, 7) ENU
    position and (x, y, z, w) quaternion). ``offset_for(world)`` what the view adds to that world's positions
    (a grid cell of a worlds replay; zero for one vehicle).
    """

    def __init__(self, server, streams: list[SensorStream], poses_for: Callable[[int], tuple],
                 offset_for: Callable[[int], np.ndarray] | None = None):
        self.server = server
        self.streams = streams
        self.poses_for = poses_for
        self.offset_for = offset_for or (lambda world: np.zeros(3))
        self.images: dict[str, object] = {}
        self.choices: dict[str, object] = {}
        self.clouds: dict[str, object] = {}
        self.shown: dict[str, tuple] = {}
        self.world = -1
        self.notes: list[str] = []
        gui = server.gui
        with gui.add_folder("Sensors", order=-0.5):  # right under Replay
            for stream in self.cameras:
                channels = stream.channels
                if len(channels) > 1:
                    self.choices[stream.name] = gui.add_dropdown(f"{stream.short} shows", tuple(channels),
                                                                 initial_value=channels[0])
                blank = np.zeros((stream.size[1], stream.size[0], 3), dtype=np.uint8)
                self.images[stream.name] = gui.add_image(upscale(blank, PANEL_WIDTH, even=False),
                                                         label=f"{stream.short}: no frame yet", format="png")
            self.show_lidar = gui.add_checkbox("Show lidar", initial_value=True) if self.lidars else None
            self.lidar_captions = {s.name: gui.add_markdown(f"{s.short}: no whole sweep yet") for s in self.lidars}
        for stream in self.streams:
            if not stream.prim.known:
                self.notes.append(f"{stream.name}: not in the vehicle file as it is now; drawn with a zero mount")

    @property
    def cameras(self) -> list[SensorStream]:
        return [s for s in self.streams if s.kind in ("camera", "thermal")]

    @property
    def lidars(self) -> list[SensorStream]:
        return [s for s in self.streams if s.kind == "lidar"]

    def changed(self) -> bool:
        """Whether a control of the Sensors folder asks for a redraw (a channel picked, Show lidar)."""
        for stream in self.cameras:
            shown = self.shown.get(stream.name)
            if shown is not None and shown[1] != self._channel(stream):
                return True
        return any(self.shown.get(s.name, (None, None))[1] != self._lidar_on() for s in self.lidars)

    def _channel(self, stream: SensorStream) -> str:
        choice = self.choices.get(stream.name)
        return str(choice.value) if choice is not None else stream.channels[0]

    def _lidar_on(self) -> bool:
        return bool(self.show_lidar.value) if self.show_lidar is not None else False

    def show(self, time: float, world: int = 0) -> None:
        """Show world ``world``'s frames at sim time ``time`` [s]; send only what changed."""
        if world != self.world:
            self.shown.clear()
            self.world = world
        for stream in self.cameras:
            self._show_image(stream, time, world)
        for stream in self.lidars:
            self._show_sweep(stream, time, world)

    def _show_image(self, stream: SensorStream, time: float, world: int) -> None:
        index, channel = stream.index_at(time, world), self._channel(stream)
        if self.shown.get(stream.name) == (index, channel):
            return
        self.shown[stream.name] = (index, channel)
        handle = self.images[stream.name]
        if index < 0:
            handle.label = f"{stream.short}: no frame yet"
            return
        frames = stream.frames(world)
        scale = stream.scale(channel, world)
        handle.image = camera_image(frames[channel][index], scale)
        handle.label = caption(stream, index, frames["time"][index], scale, stream.count(world))

    def _show_sweep(self, stream: SensorStream, time: float, world: int) -> None:
        index, on = stream.index_at(time, world), self._lidar_on()
        if self.shown.get(stream.name) == (index, on):
            return
        self.shown[stream.name] = (index, on)
        node = f"/sensors/{stream.short}"
        if index < 0 or not on:
            if node in self.clouds:
                self.clouds[node].visible = False
            self.lidar_captions[stream.name].content = f"{stream.short}: " + ("no whole sweep yet" if on else "hidden")
            return
        pose_time, poses = self.poses_for(world)
        if not len(pose_time):
            return
        points, ranges = sweep_in_world(stream, index, pose_time, poses, world)
        points = (points + self.offset_for(world) + (0.0, 0.0, POINT_LIFT)).astype(np.float32)
        scale = stream.scale("range", world)
        colours = range_colours(ranges, scale.high)
        if not len(points):  # viser wants at least one point: one under the ground
            points, colours = np.array([[0.0, 0.0, -1000.0]], np.float32), np.zeros((1, 3), np.uint8)
        self.clouds[node] = self.server.scene.add_point_cloud(node, points, colours, point_size=POINT_SIZE,
                                                              precision="float32", point_shape="circle")
        frames = stream.frames(world)
        self.lidar_captions[stream.name].content = (f"{stream.short}: sweep {index + 1} of {stream.count(world)}, "
                                      f"{frames['time'][index]:.2f} to {frames['end'][index]:.2f} s, "
                                      f"{len(ranges)} returns, coloured by range 0 to {scale.high:g} m")


def camera_image(image: np.ndarray, scale) -> np.ndarray:
    """One frame as the panel shows it: RGB by ``scale``, scaled up by a whole factor to the panel's width."""
    return upscale(to_rgb(image, scale), PANEL_WIDTH, even=False)


def caption(stream: SensorStream, index: int, time: float, scale, count: int) -> str:
    """The image's label: sensor, frame, the time it shows, and its colour scale."""
    text = f"{stream.short} {scale.channel}: frame {index + 1} of {count}, {time:.2f} s"
    if scale.channel == "depth":
        text += f" (white 0 m, black {scale.high:g} m+)"
    elif scale.channel == "temperature":
        text += f" ({scale.low:.1f} K black to {scale.high:.1f} K yellow)"
    factor = preview_factor(stream.size[0], PANEL_WIDTH)
    return text + (f", shown {factor}x" if factor > 1 else "")
