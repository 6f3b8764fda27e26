"""A crash ends a world's run: ground contact at more than :data:`CRASH_SPEED` of vertical speed.

A world crashes on the first tick whose physics step found the vehicle touching something (a contact
point MuJoCo Warp found at distance 0 or less, counted for the vehicle whose geom it touches by
:mod:`nexus.plant.contact_slots`: the ground, an obstacle of the scene, or another vehicle of its world)
while the base came down faster than :data:`CRASH_SPEED` [m/s] into that step. The speed is the base's
downward speed at the end of the tick before: MuJoCo's collision test sees the state the step starts from,
so the contact began within that step, at the speed the vehicle brought into it. A world that crashed
gets the done flag :data:`CRASHED`; its clock stops after the tick (as for a battery that ran out), so the
run's exit reason is ``crashed``, with the tick and the impact speed in run.json's ``crash`` and in run.log.

The limit is the speed of a fall from 0.46 m (v² = 2·g·h): 3 m/s, three to four times the
landings Nexus ships (its missions and PX4 land at 0.7 m/s; the hardest touchdown of every shipped
scenario and mission is in docs/running.md, "Crashes"). A vehicle resting where it settled touches
at no speed, so the start never counts.

It also keeps the hardest touchdown of every world that did not crash (the fastest contact-making
descent and its tick): how close a landing came to the limit.

Built into every ``nexus run`` flight whose solver is MuJoCo (the default), whatever the controller;
not into ``nexus train``'s environments, whose episodes end by their own rules. It writes and reads
nothing the physics uses: a flight that does not crash keeps its bits.
"""

from __future__ import annotations

import numpy as np
import warp as wp

from nexus.core import Component, Read, Stage
from nexus.core.spec import Spec, StateVar
from nexus.plant.body_state import BodyState
from nexus.plant.contact_slots import count_touching, geom_slots, touched_slots

#: Vertical speed [m/s] above which touching the ground (or an obstacle) is a crash.
CRASH_SPEED = 3.0
#: The done flag a world gets when it crashes (1 is a mission's "done", 2 a failed world, 3 an empty pack).
CRASHED = wp.constant(4)
#: Up to this many worlds each world's thread counts its own contacts (one launch a tick, each thread reading every
#: contact: a few on the ground, none in the air); from it one thread per contact slot counts them first (two
#: launches, each contact read once). The same counts either way.
COUNT_IN_CHECK_WORLDS = 16
CRASHED_REASON = "crashed"

CRASH_SPEC = Spec(
    name="CrashDetector",
    doc="Ends a world's run when the vehicle touches the ground or an obstacle coming down faster than the crash "
        "speed; keeps the crash's tick and speed and the hardest touchdown.",
    state=(
        StateVar("descent", wp.float32, (1,), 0.0, "the base's downward speed at the end of the last tick [m/s]"),
        StateVar("touchdown", wp.float64, (2,), 0.0,
                 "the hardest touchdown's speed [m/s] and its tick (a whole number); 0, 0 before any"),
        StateVar("crash", wp.float64, (2,), -1.0,
                 "the crash's tick (a whole number) and speed [m/s]; -1, -1 before one"),
    ),
    stage="crash",
    kind="state",
)


@wp.kernel
def check_crash(
    body: wp.array(dtype=BodyState),
    running: wp.array(dtype=wp.int32),
    tick: wp.array(dtype=wp.int64),
    touching: wp.array(dtype=wp.int32),
    # With ``count_here`` 1 the thread counts its world's contacts itself (``touching`` is not read):
    count_here: wp.int32,
    nacon: wp.array(dtype=wp.int32),
    world_of: wp.array(dtype=wp.int32),
    geom: wp.array(dtype=wp.vec2i),
    dist: wp.array(dtype=wp.float32),
    geom_slot: wp.array2d(dtype=wp.int32),
    crash_speed: wp.float32,
    descent_in: wp.array2d(dtype=wp.float32),
    touchdown_in: wp.array2d(dtype=wp.float64),
    crash_in: wp.array2d(dtype=wp.float64),
    descent_out: wp.array2d(dtype=wp.float32),
    touchdown_out: wp.array2d(dtype=wp.float64),
    crash_out: wp.array2d(dtype=wp.float64),
    done: wp.array(dtype=wp.int32),
):
    world = wp.tid()
    came_down = descent_in[world, 0]
    hardest = touchdown_in[world, 0]
    hardest_tick = touchdown_in[world, 1]
    crash_tick = crash_in[world, 0]
    crash_at = crash_in[world, 1]
    touches = wp.int32(0)
    if count_here != 0:  # what count_touching adds for this world's slot, contact by contact
        for i in range(nacon[0]):
            slots = touched_slots(i, world_of, geom, dist, geom_slot)
            if slots[0] == world:
                touches += 1
            if slots[1] == world:
                touches += 1
    else:
        touches = touching[world]
        touching[world] = 0  # counted afresh after the next step
    if running[world] != 0:
        now = wp.float64(tick[world])
        if touches > 0 and wp.float64(came_down) > hardest:
            hardest = wp.float64(came_down)
            hardest_tick = now
        if touches > 0 and came_down > crash_speed and done[world] == 0:
            done[world] = CRASHED
            crash_tick = now
            crash_at = wp.float64(came_down)
        descent_out[world, 0] = -body[world].velocity[2]  # ENU: z up
    else:
        descent_out[world, 0] = came_down
    touchdown_out[world, 0] = hardest
    touchdown_out[world, 1] = hardest_tick
    crash_out[world, 0] = crash_tick
    crash_out[world, 1] = crash_at


class CrashDetector(Component):
    """Ends a world that touches something coming down faster than :data:`CRASH_SPEED` (see the module doc)."""

    spec = CRASH_SPEC

    def __init__(self, plant, crash_speed: float = CRASH_SPEED, name: str = "/plant/crash"):
        super().__init__(name)
        self.plant = plant
        self.crash_speed = float(crash_speed)
        self._body = f"body/{plant.body_label(plant.base_path)}"
        self._store = None
        self._first_world = 0
        self._touching = None
        self._geom_slot = None

    @staticmethod
    def fits(plant) -> bool:
        """Whether ``plant``'s solver gives the contacts this reads (MuJoCo's)."""
        return getattr(plant.solver, "mjw_data", None) is not None

    def stages(self) -> list[Stage]:
        reads = (Read(self._body, BodyState, (1,)), Read("running", wp.int32, (1,), default=1),
                 Read("tick", wp.int64, (1,)))
        return [Stage(self.spec.stage, self.spec.kind, self._run, reads=reads, finishes=True)]

    def prepare(self, ctx) -> None:
        self._store = ctx.states
        self._first_world = int(getattr(ctx, "first_world", 0) or 0)
        self._touching = wp.zeros(self.plant.worlds, dtype=wp.int32, device=ctx.device)
        self._geom_slot = geom_slots(self.plant)  # each contact counts for the vehicles it touches

    def _run(self, io) -> None:
        data = self.plant.solver.mjw_data
        contacts = [data.nacon, data.contact.worldid, data.contact.geom, data.contact.dist, self._geom_slot]
        count_here = self.plant.worlds <= COUNT_IN_CHECK_WORLDS
        if not count_here:
            wp.launch(count_touching, data.naconmax, inputs=contacts, outputs=[self._touching], device=io.device)
        wp.launch(
            check_crash, self.plant.worlds,
            inputs=[io[self._body], io["running"], io["tick"], self._touching, int(count_here), *contacts,
                    self.crash_speed, io.state_in["descent"], io.state_in["touchdown"], io.state_in["crash"]],
            outputs=[io.state_out["descent"], io.state_out["touchdown"], io.state_out["crash"], io.done],
            device=io.device,
        )

    def report(self, dt_s: float) -> dict:
        """What run.json's ``crash`` holds: the limit, then world 0's crash (or null) and hardest touchdown; with
        many worlds, every crashed world's."""
        state = self._store.of(self)
        crash, touchdown = state["crash"].numpy(), state["touchdown"].numpy()
        out: dict = {"limit_m_s": self.crash_speed}

        def crash_of(world: int) -> dict | None:
            if crash[world, 0] < 0:
                return None
            tick = int(crash[world, 0])
            return {"tick": tick, "time_s": round(tick * dt_s, 9), "speed_m_s": round(float(crash[world, 1]), 3)}

        out["crashed"] = crash_of(0)
        out["hardest_touchdown_m_s"] = round(float(touchdown[0, 0]), 3)
        out["hardest_touchdown_tick"] = int(touchdown[0, 1]) if touchdown[0, 0] > 0 else None
        if self.plant.worlds > 1:
            out["worlds"] = int(self.plant.worlds)
            vehicles = self.plant.vehicles  # several a world: a slot is vehicle s % K of world s // K
            out["crashed_worlds"] = [{"world": self._first_world + w // vehicles,
                                      **({"vehicle": w % vehicles} if vehicles > 1 else {}), **crash_of(w)}
                                     for w in np.flatnonzero(crash[:, 0] >= 0).tolist()]
            out["hardest_touchdowns_m_s"] = [round(float(v), 3) for v in touchdown[:, 0]]
        return out


def crash_line(report: dict) -> str | None:
    """The line run.log (and the console) gets for a run's crash report (:meth:`CrashDetector.report`), or None."""
    if not report:
        return None
    limit = report["limit_m_s"]
    crashed = report.get("crashed_worlds")
    if crashed:
        first = min(crashed, key=lambda c: (c["tick"], c["world"], c.get("vehicle", 0)))
        if "vehicle" in first:  # a fleet: 'worlds' counts its vehicles
            return (f"{len(crashed)} of {report['worlds']} vehicles crashed, the first (vehicle {first['vehicle']} of "
                    f"world {first['world']}) at tick {first['tick']} ({first['time_s']:.3f} s): it touched down at "
                    f"{first['speed_m_s']:.2f} m/s, over the {limit:g} m/s a crash is")
        return (f"{len(crashed)} of {report['worlds']} worlds crashed, the first (world {first['world']}) at tick "
                f"{first['tick']} ({first['time_s']:.3f} s): it touched down at {first['speed_m_s']:.2f} m/s, over the "
                f"{limit:g} m/s a crash is")
    one = report["crashed"]
    if one is None or "crashed_worlds" in report:
        return None
    return (f"crashed at tick {one['tick']} ({one['time_s']:.3f} s): the vehicle touched down at "
            f"{one['speed_m_s']:.2f} m/s, over the {limit:g} m/s a crash is")

