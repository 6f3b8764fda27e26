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

from nexus.core import Component
from nexus.core.errors import BuildError
from nexus.core.spec import Input, Output, Param, Spec
from nexus.estimation.pose_twist import PoseTwist
from nexus.plant.body_state import BodyState
from nexus.plant.frames import attitude_ned_frd, enu_to_ned, flu_to_frd
from nexus.schemas.reader import read_connections
from nexus.sensors.schedule import SCHEDULE, SampleClock, due, period_ns, sample_clock

#: The input the estimator reads its body under; a connection names the body prim.
POSE_INPUT = "pose"

TRUTH_ESTIMATOR_SPEC = Spec(
    name="TruthEstimator",
    schema="NexusTruthEstimatorAPI",
    noun="estimator",
    doc="Writes the true pose and twist of one body as the estimate (NED/FRD), for flying without sensor noise "
        "or as the reference a real estimator is judged against.",
    params=(
        Param("rate", "nexus:rate", "float", 0.0, "Hz", "Updates per second; 0 updates every tick", low=0.0),
    ),
    inputs=(
        Input(POSE_INPUT, BodyState, connectable=True,
              doc="The rigid body whose state becomes the estimate (the base body when not authored)."),
        Input("time", wp.float64), Input("time_ns", wp.int64), Input("tick", wp.int64),
    ),
    outputs=(Output("estimate", PoseTwist, recorded=True, doc="Pose and twist, NED/FRD"),),
    state=(SCHEDULE,),
    stage="truth_estimate",
    kind="estimate",
    sampler=True,
)


@wp.kernel
def truth_estimate(
    body: wp.array(dtype=BodyState),
    ned_origin: wp.array(dtype=wp.vec3),
    clock: SampleClock,
    estimate: wp.array(dtype=PoseTwist),
):
    world = wp.tid()
    if due(clock, world) >= wp.int64(0):
        state = body[world]
        rotation = wp.transform_get_rotation(state.pose)
        origin = wp.transform_get_translation(state.pose)
        omega = state.angular_velocity
        # The plant gives the centre of mass's velocity; the body origin moves with
        # v_origin = v_com + ω × (origin − com) = v_com − ω × (R·com).
        velocity = state.velocity - wp.cross(omega, wp.quat_rotate(rotation, state.com))

        out = PoseTwist()
        out.time = clock.time[world]
        out.position = enu_to_ned(origin - ned_origin[world])
        out.attitude = attitude_ned_frd(rotation)
        out.velocity = enu_to_ned(velocity)
        out.rates = flu_to_frd(wp.quat_rotate_inv(rotation, omega))
        estimate[world] = out


class TruthEstimator(Component):
    """Writes the true pose and twist of ``body`` (a body prim path) as the ``estimate``.

    ``ned_origin`` is the plant's device array (``Plant.ned_origin``, world ENU
    [m]); start-up fills it after the build, so the kernel reads it from the
    array each time rather than taking a copy. ``rate`` [Hz]: 0 updates every tick.
    """

    spec = TRUTH_ESTIMATOR_SPEC

    def __init__(self, name: str, ned_origin: wp.array, body: str = "/vehicle/body/base", rate: float | None = None):
        super().__init__(name, {POSE_INPUT: body})
        self.ned_origin = ned_origin
        self.body = body
        self.rate = float(self.spec.param("rate").default if rate is None else rate)
        self.period_ns = 0

    @classmethod
    def from_prim(cls, prim, values, ctx) -> TruthEstimator:
        """The body comes from the prim's ``nexus:inputs:pose`` connection, else the plant's base body."""
        path = str(prim.GetPath())
        body = read_connections(prim, cls.spec, ctx.path).get(POSE_INPUT, ctx.plant.base_path)
        if body not in ctx.plant.body_index:
            raise BuildError(
                f"{ctx.path}: estimator prim {path}: nexus:inputs:pose targets {body}, which is not a rigid body "
                f"of the vehicle; point it at one of {', '.join(sorted(ctx.plant.body_index))}"
            )
        return cls(path, ctx.plant.ned_origin, body=body, rate=values["rate"])

    def prepare(self, ctx) -> None:
        self.period_ns = period_ns(self.rate, ctx.dt_ns)
        self.worlds = ctx.worlds

    def run(self, io) -> None:
        wp.launch(
            truth_estimate,
            dim=self.worlds,
            inputs=[io[POSE_INPUT], self.ned_origin,
                    sample_clock(io["time"], io["time_ns"], io["tick"], self.period_ns, io.state_in["schedule"],
                                 io.state_out["schedule"])],
            outputs=[io["estimate"]],
            device=io.device,
        )
