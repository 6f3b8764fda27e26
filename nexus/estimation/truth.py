"""The truth estimator: the plant's own state of one body, handed on as the estimate.

It is not an estimator in the filtering sense. It reads the body's true state
(``BodyState``, world ENU, body FLU) and rewrites it in the frames the guidance
and the controller expect: position [m] NED relative to the NED origin (where
the base settled at start-up), attitude FRD→NED, velocity [m/s] NED of the
body's origin (not its centre of mass), body rates [rad/s] FRD. Use it to
fly without sensor noise, or as the reference a real estimator is judged
against.

The body is the one its ``pose`` input is connected to
(``nexus:inputs:pose``), the base body unless the prim names another.
``rate`` follows the sensors' due-time rule: 0, or a rate at least the tick
rate, updates every tick; otherwise the k-th update after the first falls due
k periods after it, compared in whole nanoseconds.
"""

from __future__ import annotations

import warp as wp

from nexus.core import Component, Read, Stage, Write
from nexus.core.errors import BuildError
from nexus.core.types import BodyState, PoseTwist
from nexus.plant.frames import attitude_ned_frd, enu_to_ned, flu_to_frd
from nexus.sensors.schedule import check_rate, new_schedule, period_ns, take_if_due

#: The input the estimator reads its body under; a connection names the body prim.
POSE_INPUT = "pose"


@wp.kernel
def truth_estimate(
    body: wp.array(dtype=BodyState),
    ned_origin: wp.array(dtype=wp.vec3),
    time: wp.array(dtype=wp.float64),
    time_ns: wp.array(dtype=wp.int64),
    period_ns: wp.int64,
    schedule: wp.array(dtype=wp.int64),
    estimate: wp.array(dtype=PoseTwist),
):
    if take_if_due(time_ns[0], period_ns, schedule) >= wp.int64(0):
        state = body[0]
        rotation = wp.transform_get_rotation(state.pose)
        origin = wp.transform_get_translation(state.pose)
        omega = state.angular_velocity
        # The plant gives the centre of mass's velocity; the body origin moves with
        # v_origin = v_com + ω × (origin − com) = v_com − ω × (R·com).
        velocity = state.velocity - wp.cross(omega, wp.quat_rotate(rotation, state.com))

        out = PoseTwist()
        out.time = time[0]
        out.position = enu_to_ned(origin - ned_origin[0])
        out.attitude = attitude_ned_frd(rotation)
        out.velocity = enu_to_ned(velocity)
        out.rates = flu_to_frd(wp.quat_rotate_inv(rotation, omega))
        estimate[0] = out


class TruthEstimator(Component):
    """Writes the true pose and twist of ``body`` (a body prim path) as the ``estimate``.

    ``ned_origin`` is the plant's device array (``Plant.ned_origin``, world ENU
    [m]); start-up fills it after the build, so the kernel reads it from the
    array each time rather than taking a copy. ``rate`` [Hz]: 0 updates every tick.
    """

    def __init__(
        self,
        name: str,
        ned_origin: wp.array,
        body: str = "/vehicle/body/base",
        rate: float = 0.0,
    ):
        super().__init__(name, {POSE_INPUT: body})
        self.ned_origin = ned_origin
        self.body = body
        self.rate = check_rate(rate, f"estimator prim {name}")
        self.schedule = None
        self.period_ns = 0

    def stages(self) -> list[Stage]:
        reads = (
            Read(POSE_INPUT, BodyState, (1,)),
            Read("time", wp.float64, (1,)),
            Read("time_ns", wp.int64, (1,)),
        )
        return [Stage("truth_estimate", "estimate", self._run, reads=reads, writes=(Write("estimate", PoseTwist, (1,)),))]

    def prepare(self, ctx) -> None:
        self.period_ns = period_ns(self.rate, ctx.dt_ns)
        self.schedule = new_schedule(ctx.device)

    def _run(self, io) -> None:
        wp.launch(
            truth_estimate,
            dim=1,
            inputs=[io[POSE_INPUT], self.ned_origin, io["time"], io["time_ns"], wp.int64(self.period_ns), self.schedule],
            outputs=[io["estimate"]],
            device=io.device,
        )


def build_truth_estimator(prim, ctx) -> TruthEstimator:
    """The component for a prim applying ``NexusTruthEstimatorAPI``.

    ``ctx`` is :class:`nexus.assembly.PrimContext`. The body comes from the
    prim's ``nexus:inputs:pose`` connection, else the plant's base body.
    """
    path = str(prim.GetPath())
    relationship = prim.GetRelationship(f"nexus:inputs:{POSE_INPUT}")
    targets = relationship.GetTargets() if relationship else []
    if len(targets) > 1:
        raise BuildError(f"{ctx.path}: estimator prim {path}: nexus:inputs:pose names {len(targets)} bodies; name one")
    body = str(targets[0].GetPrimPath()) if targets else ctx.plant.base_path
    if body not in ctx.plant.body_index:
        raise BuildError(
            f"{ctx.path}: estimator prim {path}: nexus:inputs:pose targets {body}, which is not a rigid body "
            f"of the vehicle; point it at one of {', '.join(sorted(ctx.plant.body_index))}"
        )
    rate_attribute = prim.GetAttribute("nexus:rate")
    rate = float(rate_attribute.Get()) if rate_attribute and rate_attribute.Get() is not None else 0.0
    if not 0.0 <= rate < float("inf"):
        raise BuildError(f"{ctx.path}: estimator prim {path}: nexus:rate must be 0 (every tick) or positive, got {rate} Hz")
    return TruthEstimator(path, ctx.plant.ned_origin, body=body, rate=rate)
