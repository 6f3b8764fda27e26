"""A flight in 3D in the browser, on Newton's viser viewer (``newton.viewer.ViewerViser``).

The vehicle's bodies come from its USD file through the same Newton importer
the run used (``nexus.plant.loading.load_plant``); each frame poses the base's
free joint from the recorded ``body/base.pose`` and lets Newton's forward
kinematics place the rotors. The rotors' own spin is not recorded, so they
are drawn at their joints' rest angles. The flown path and the setpoint path
are line batches. Used by ``nexus view`` (a replay with a time slider) and by
``nexus run --view`` (live).
"""

from __future__ import annotations

import errno
import socket
from pathlib import Path

import newton
import newton.viewer
import numpy as np
import warp as wp

from nexus.core.warp_setup import init_warp
from nexus.plant.loading import load_plant
from nexus.viz.errors import ViewerError

#: Colours [0..1 RGB]: the path the vehicle flew and the path it was asked to fly.
FLOWN_COLOUR, SETPOINT_COLOUR = (0.10, 0.35, 0.90), (0.95, 0.55, 0.05)
#: Most line segments drawn per path (longer paths are thinned evenly).
MAX_SEGMENTS = 2000


def check_port(host: str, port: int, port_option: str = "--port", host_option: str = "--host") -> int:
    """Raise :class:`ViewerError` unless ``host:port`` can be listened on; port 0 picks a free one. Returns the port.

    ``port_option`` and ``host_option`` are the command's names for the two (``nexus run --view`` has
    ``--view-port`` and ``--view-host``), so an error names options the user can pass.
    """
    try:
        family, kind, _, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except socket.gaierror as error:
        raise ViewerError(f"{host_option} {host}: not an address this machine can resolve ({error.strerror}); give an "
                          "address of this machine, such as 127.0.0.1") from None
    with socket.socket(family, kind) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server itself binds
        try:
            probe.bind(address)
        except OSError as error:
            if error.errno == errno.EADDRINUSE:
                raise ViewerError(f"port {port} on {host} is in use (another `nexus view`?); pass {port_option} with a "
                                  f"free port, or {port_option} 0 to let the system pick one") from None
            if error.errno == errno.EADDRNOTAVAIL:
                raise ViewerError(f"{host_option} {host} is not an address of this machine; give one of its addresses, "
                                  "such as 127.0.0.1") from None
            raise ViewerError(f"cannot listen on {host}:{port} ({error.strerror}); choose another {port_option}") from None
        return int(probe.getsockname()[1])


def segments(points: np.ndarray, limit: int = MAX_SEGMENTS) -> tuple[np.ndarray, np.ndarray]:
    """Start and end points of a polyline through ``points`` (rows, 3), thinned to at most ``limit`` segments."""
    points = np.asarray(points, dtype=np.float32)
    if len(points) > limit + 1:
        points = points[np.linspace(0, len(points) - 1, limit + 1).round().astype(int)]
    return points[:-1], points[1:]


class FlightView:
    """One vehicle in Newton's viser viewer: bodies posed from the base's pose, the ground, and path lines."""

    def __init__(self, model, host: str = "127.0.0.1", port: int = 8080, label: str = "Nexus",
                 port_option: str = "--port", host_option: str = "--host"):
        port = check_port(host, port, port_option, host_option)
        self.model = model
        self.viewer = newton.viewer.ViewerViser(host=host, port=port, label=label, verbose=False)
        served = self.viewer.server.get_port()
        if served != port:  # viser moves to the next port when one is taken between our check and its bind
            self.viewer.close()
            raise ViewerError(f"port {port} on {host} was taken while the viewer started; pass {port_option} with a free port")
        self.host, self.port = host, port
        self.viewer.set_model(model)
        self.state = model.state()
        self._joint_q = model.joint_q.numpy().copy()
        self._joint_q_device = wp.array(self._joint_q, dtype=wp.float32, device=model.device)
        self._eval_fk = newton.eval_fk
        self.hidden = False
        self.sim_time = 0.0

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def look_at(self, target, distance: float) -> None:
        """Put the camera ``distance`` [m] from ``target`` (ENU [m]), south-west of it and 25° above."""
        target = np.asarray(target, dtype=np.float64)
        yaw, pitch = 45.0, -25.0  # looking north-east and down [deg]
        front = np.array([np.cos(np.radians(yaw)) * np.cos(np.radians(pitch)),
                          np.sin(np.radians(yaw)) * np.cos(np.radians(pitch)), np.sin(np.radians(pitch))])
        position = target - front * distance
        self.viewer.set_camera(tuple(float(x) for x in position), pitch=pitch, yaw=yaw)

    def paths(self, flown_enu=None, setpoint_enu=None) -> None:
        """Draw the flown path (blue) and the setpoint path (orange), world ENU [m]."""

        for name, points, colour in (("flown", flown_enu, FLOWN_COLOUR), ("setpoint", setpoint_enu, SETPOINT_COLOUR)):
            if points is None or len(points) < 2:
                continue
            starts, ends = segments(points)
            self.viewer.log_lines(f"/paths/{name}", wp.array(starts, dtype=wp.vec3), wp.array(ends, dtype=wp.vec3),
                                  colour, width=0.02)

    def show(self, pose, sim_time: float) -> None:
        """Draw the vehicle with its base at ``pose`` (ENU position, Warp (x, y, z, w) quaternion) at ``sim_time`` [s]."""
        self.sim_time = float(sim_time)
        self._joint_q[:7] = np.asarray(pose, dtype=np.float32)
        if self.hidden:
            self._joint_q[2] = -1000.0  # far below the ground: the scene without the vehicle
        self._joint_q_device.assign(self._joint_q)
        self._eval_fk(self.model, self._joint_q_device, self.model.joint_qd, self.state)
        self.viewer.begin_frame(self.sim_time)
        self.viewer.log_state(self.state)
        self.viewer.end_frame()

    def close(self) -> None:
        self.viewer.close()


def load_model(vehicle: Path, scene: Path):
    """The Newton model of a run's vehicle in its scene, built on the CPU as the run built it."""

    init_warp(False)
    plant, _, _ = load_plant(vehicle, scene, "cpu")
    show_guides(plant.model)
    return plant.model


def show_guides(model) -> None:
    """Make the vehicle's visual-only parts visible in this display copy of the model.

    The vehicle files mark the swept propeller disks ``purpose = "guide"`` so that
    cameras and lidars look through them; Newton imports them without the VISIBLE
    flag, and the viewer would draw rotors without their disks. This model is only
    drawn, never stepped, so giving them the flag changes no physics.
    """

    flags, bodies = model.shape_flags.numpy(), model.shape_body.numpy()
    hidden = (flags == 0) & (bodies >= 0)
    flags[hidden] |= int(newton.ShapeFlags.VISIBLE)
    model.shape_flags.assign(flags)
