"""Contact between the vehicles of a world: each tick's touching points per vehicle, and a log of collisions.

With several vehicles sharing a world (``--vehicles K``, contact on: ``plant.shared_worlds``) MuJoCo Warp
collides them with each other. Each tick this reads the contacts of the step (as
:mod:`nexus.plant.contact_slots` attributes them) and keeps the touching ones (distance 0 or less) whose
two geoms belong to two different vehicles of one world:

* ``vehicle_contact`` (recorded): each vehicle's touching points against the other vehicles this tick;
* a collision log, kept on the device and read once at the end into run.json's ``collisions``: a
  collision begins on the first tick two vehicles touch and lasts while they keep touching; it holds
  the tick it began, the world, the two vehicles, and the impulse of their contact over it [N·s]. Every
  collision is logged (a pair that parts and touches again starts a new one), up to :data:`EVENTS_KEPT`
  of them; run.json says how many there were in all.

The impulse is what the contact gave the pair's second vehicle [N·s, world ENU] (the first got its
opposite), over the collision's ticks: each touching point's force times the tick, summed. Its length,
``impulse_n_s``, is the momentum the collision moved from one vehicle to the other, m·Δv of the one struck
(gravity and the rotors' thrust act besides, not in it). Each point's force comes from MuJoCo's constraint
force for it (``efc_force`` from the contact's ``efc_address``), decoded as ``mujoco_warp``'s
``contact_force_fn`` decodes it (adhesion, which Nexus's vehicles lack, aside). With the pyramidal friction
cone (MuJoCo's default, Newton's too) a contact of ``condim`` n has 2(n-1) rows at consecutive addresses, one
per edge of the pyramid, the normal plus or minus mu_i times tangent i: the normal force is the sum of the
2(n-1) rows (n = 1: the one row), tangent i's force mu_i times the difference of its two rows. With the
elliptic cone the rows are the normal and tangent forces themselves. Turned from the contact's frame into the
world's, the points' forces add as vectors. run.json also gives ``normal_impulse_n_s``, the normal forces
summed as numbers: it says how hard the shapes pressed, but it is no momentum (two thin boxes meeting end to
end touch along a sideways normal, friction carrying the push: 7.95 N·s of normal impulse moved 4.75 N·s of
momentum in tests/fleet/test_collisions.py's head-on collision). MuJoCo's step applies ``dt · Jᵀ·efc_force``
to the velocities, so with one substep a tick (the default) the sum is the impulse the steps gave; with several
it counts the last substep's force for the whole tick. Each point's share is summed in whole
nano-newton-seconds, so the sum does not depend on the order of the GPU's atomic adds.

With ``end_on_collision`` (``--end-on-collision``) a collision ends its world's flight: every vehicle of
the world that still flies gets the done flag :data:`COLLIDED` on the tick it begins (exit reason
``collision``; one that crashed on that tick keeps ``crashed``), and the collision's impulse is that tick's.

run.json lists the collisions by tick, world and vehicles. Past :data:`EVENTS_KEPT`, which of the collisions
that began on one tick were kept depends on the order the GPU's threads took their places in the log.

Built into a flight only when the vehicles of a world share it: a flight of one vehicle a world (or of
``--no-vehicle-contact``) keeps its ring and its bits. It writes and reads nothing the physics uses.
"""

from __future__ import annotations

import numpy as np
import warp as wp

from nexus.core import Component, Read, Stage
from nexus.core.spec import Output, Spec
from nexus.plant.contact_slots import contact_slots, geom_slots

#: The done flag of a world a collision ended (1 done, 2 failed, 3 battery empty, 4 crashed, 5 EKF diverged).
COLLIDED = wp.constant(6)
COLLIDED_REASON = "collision"
#: Collisions the log keeps (the first ones logged; run.json counts every one).
EVENTS_KEPT = 1000
#: MuJoCo's pyramidal friction cone (``mjCONE_PYRAMIDAL``; 1 is the elliptic one).
PYRAMIDAL = wp.constant(0)
#: A contact's friction coefficients (MuJoCo Warp's ``contact.friction``: two sliding, one torsional, two rolling).
vec5 = wp.types.vector(length=5, dtype=wp.float32)
#: The unit the impulse is summed in [N·s]: a nano-newton-second.
IMPULSE_UNIT = 1.0e-9

VEHICLE_COLLISION_SPEC = Spec(
    name="VehicleCollision",
    doc="Counts each vehicle's touching points against the other vehicles of its world and logs each collision "
        "(its tick, world, vehicles and impulse); by option a collision ends its world.",
    outputs=(Output("vehicle_contact", wp.int32, recorded=True,
                    doc="The vehicle's touching contact points against the other vehicles of its world this tick"),),
    stage="collision",
    kind="state",
)


@wp.func
def contact_force(
    cone: wp.int32,
    efc_address: wp.array2d(dtype=wp.int32),
    condim: wp.array(dtype=wp.int32),
    friction: wp.array(dtype=vec5),
    frame: wp.array(dtype=wp.mat33),
    efc_force: wp.array2d(dtype=wp.float32),
    world: wp.int32,
    contact: wp.int32,
) -> wp.vec4:
    """A contact's force on its second geom [N, world ENU] (x, y, z) and its normal force [N] (w), from its
    constraint rows (see the module doc); zeros when it has none."""
    first = efc_address[contact, 0]
    if first < 0:
        return wp.vec4(0.0)
    dims = condim[contact]
    local = wp.vec3(0.0)  # normal, first tangent, second tangent [N]
    if cone == PYRAMIDAL:
        if dims == 1:
            local[0] = efc_force[world, first]
        else:
            mu = friction[contact]
            for edge in range(dims - 1):
                up = wp.float32(0.0)
                down = wp.float32(0.0)
                if first + 2 * edge < efc_force.shape[1]:
                    up = efc_force[world, first + 2 * edge]
                if first + 2 * edge + 1 < efc_force.shape[1]:
                    down = efc_force[world, first + 2 * edge + 1]
                local[0] = local[0] + up + down
                if edge < 2:
                    local[edge + 1] = (up - down) * mu[edge]
    else:
        for row in range(wp.min(dims, 3)):
            address = efc_address[contact, row]
            if address >= 0 and address < efc_force.shape[1]:
                local[row] = efc_force[world, address]
    force = wp.transpose(frame[contact]) @ local  # the frame's rows are the normal and the tangents
    return wp.vec4(force[0], force[1], force[2], local[0])


@wp.kernel
def clear_tick(
    slots: wp.int32,
    # Out:
    count_out: wp.array(dtype=wp.int32),
    touching_out: wp.array(dtype=wp.int32),
    impulse_out: wp.array2d(dtype=wp.int64),
):
    pair = wp.tid()
    if pair < slots:
        count_out[pair] = 0
    touching_out[pair] = 0
    for axis in range(4):
        impulse_out[pair, axis] = wp.int64(0)


@wp.kernel
def gather_vehicle_contacts(
    # Data in:
    nacon_in: wp.array(dtype=wp.int32),
    contact_worldid_in: wp.array(dtype=wp.int32),
    contact_geom_in: wp.array(dtype=wp.vec2i),
    contact_dist_in: wp.array(dtype=wp.float32),
    contact_dim_in: wp.array(dtype=wp.int32),
    contact_friction_in: wp.array(dtype=vec5),
    contact_frame_in: wp.array(dtype=wp.mat33),
    contact_efc_address_in: wp.array2d(dtype=wp.int32),
    efc_force_in: wp.array2d(dtype=wp.float32),
    # In:
    cone: wp.int32,
    geom_slot: wp.array2d(dtype=wp.int32),
    vehicles: wp.int32,
    units_per_newton: wp.float64,
    # Out:
    count_out: wp.array(dtype=wp.int32),
    touching_out: wp.array(dtype=wp.int32),
    impulse_out: wp.array2d(dtype=wp.int64),
):
    """One thread per contact: a touching point between two vehicles of a world counts for both, marks their pair
    and adds its impulse on the pair's second vehicle (x, y, z) and its normal impulse to the pair's, in whole
    units (``units_per_newton`` = dt over the unit)."""
    i = wp.tid()
    if i >= nacon_in[0] or contact_dist_in[i] > 0.0:
        return
    world = contact_worldid_in[i]
    slots = contact_slots(geom_slot, world, contact_geom_in[i])
    if slots[0] < 0 or slots[1] < 0 or slots[0] // vehicles != slots[1] // vehicles:
        return
    wp.atomic_add(count_out, slots[0], 1)
    wp.atomic_add(count_out, slots[1], 1)
    low = wp.min(slots[0], slots[1])
    high = wp.max(slots[0], slots[1])
    pair = (low // vehicles) * vehicles * vehicles + (low % vehicles) * vehicles + high % vehicles
    touching_out[pair] = 1
    force = contact_force(cone, contact_efc_address_in, contact_dim_in, contact_friction_in, contact_frame_in,
                          efc_force_in, world, i)
    if slots[1] != high:  # the force on the pair's first vehicle: the second gets its opposite
        force = wp.vec4(-force[0], -force[1], -force[2], force[3])
    for axis in range(4):
        wp.atomic_add(impulse_out, pair, axis, wp.int64(wp.round(wp.float64(force[axis]) * units_per_newton)))


@wp.kernel
def log_collisions(
    vehicles: wp.int32,
    first_world: wp.int32,
    end_on_collision: wp.int32,
    running: wp.array(dtype=wp.int32),
    tick: wp.array(dtype=wp.int64),
    touching: wp.array(dtype=wp.int32),
    impulse: wp.array2d(dtype=wp.int64),
    # In and out:
    pair_event: wp.array(dtype=wp.int32),
    event_count: wp.array(dtype=wp.int32),
    # Out:
    event_tick: wp.array(dtype=wp.int64),
    event_who: wp.array(dtype=wp.vec3i),
    event_impulse: wp.array2d(dtype=wp.int64),
    done: wp.array(dtype=wp.int32),
):
    """One thread per (world, vehicle, vehicle) pair, the first vehicle the lower: opens a collision when the pair
    starts touching, adds the tick's impulse while it touches, closes it when they part."""
    pair = wp.tid()
    world = pair // (vehicles * vehicles)
    low = (pair // vehicles) % vehicles
    high = pair % vehicles
    if low >= high:
        return
    a = world * vehicles + low
    b = world * vehicles + high
    if running[a] == 0 and running[b] == 0:
        return
    if touching[pair] == 0:
        pair_event[pair] = -1
        return
    event = pair_event[pair]
    if event < 0:
        event = wp.atomic_add(event_count, 0, 1)
        pair_event[pair] = event
        if event < event_tick.shape[0]:
            now = tick[a]
            if running[a] == 0:
                now = tick[b]
            event_tick[event] = now
            event_who[event] = wp.vec3i(first_world + world, low, high)
            for axis in range(4):
                event_impulse[event, axis] = wp.int64(0)
        if end_on_collision != 0:
            for vehicle in range(vehicles):
                if done[world * vehicles + vehicle] == 0:
                    done[world * vehicles + vehicle] = COLLIDED
    if event < event_tick.shape[0]:
        for axis in range(4):
            event_impulse[event, axis] = event_impulse[event, axis] + impulse[pair, axis]


class VehicleCollision(Component):
    """Counts and logs the contact between the vehicles of each world (see the module doc)."""

    spec = VEHICLE_COLLISION_SPEC

    def __init__(self, plant, end_on_collision: bool = False, events_kept: int = EVENTS_KEPT,
                 name: str = "/plant/vehicle_collision"):
        super().__init__(name)
        self.plant = plant
        self.end_on_collision = bool(end_on_collision)
        self.events_kept = int(events_kept)
        self._dt = 0.0
        self._first_world = 0
        self._geom_slot = None
        self._cone = 0
        self._scratch = None
        self._log = None

    @staticmethod
    def fits(plant) -> bool:
        """Whether ``plant``'s vehicles share their worlds and its solver gives the contacts this reads."""
        return bool(plant.shared_worlds) and getattr(plant.solver, "mjw_data", None) is not None

    def stages(self) -> list[Stage]:
        reads = (Read("running", wp.int32, (1,), default=1), Read("tick", wp.int64, (1,)))
        return [Stage(self.spec.stage, self.spec.kind, self._run, reads=reads, writes=self.writes(), finishes=True)]

    def prepare(self, ctx) -> None:
        plant, device = self.plant, ctx.device
        pairs = plant.worlds * plant.vehicles  # worlds x vehicles x vehicles
        self._dt = float(ctx.dt)
        self._first_world = int(getattr(ctx, "first_world", 0) or 0)
        self._geom_slot = geom_slots(plant)
        self._cone = int(plant.solver.mjw_model.opt.cone)
        self._scratch = {"touching": wp.zeros(pairs, dtype=wp.int32, device=device),
                         "impulse": wp.zeros((pairs, 4), dtype=wp.int64, device=device)}
        kept = max(self.events_kept, 1)
        self._log = {"pair_event": wp.full(pairs, -1, dtype=wp.int32, device=device),
                     "event_count": wp.zeros(1, dtype=wp.int32, device=device),
                     "event_tick": wp.zeros(kept, dtype=wp.int64, device=device),
                     "event_who": wp.zeros(kept, dtype=wp.vec3i, device=device),
                     "event_impulse": wp.zeros((kept, 4), dtype=wp.int64, device=device)}

    def external_state(self) -> dict[str, wp.array]:
        """The log and each pair's open collision: a snapshot of the tick carries them."""
        return dict(self._log or {})

    def _run(self, io) -> None:
        plant, data, log = self.plant, self.plant.solver.mjw_data, self._log
        count, touching, impulse = io["vehicle_contact"], self._scratch["touching"], self._scratch["impulse"]
        wp.launch(clear_tick, touching.shape[0], inputs=[plant.worlds], outputs=[count, touching, impulse],
                  device=io.device)
        contact = data.contact
        wp.launch(
            gather_vehicle_contacts, data.naconmax,
            inputs=[data.nacon, contact.worldid, contact.geom, contact.dist, contact.dim, contact.friction,
                    contact.frame, contact.efc_address, data.efc.force, self._cone, self._geom_slot, plant.vehicles,
                    self._dt / IMPULSE_UNIT],
            outputs=[count, touching, impulse], device=io.device,
        )
        wp.launch(
            log_collisions, touching.shape[0],
            inputs=[plant.vehicles, self._first_world, int(self.end_on_collision), io["running"],
                    io["tick"], touching, impulse, log["pair_event"], log["event_count"]],
            outputs=[log["event_tick"], log["event_who"], log["event_impulse"], io.done], device=io.device,
        )

    def report(self, dt_s: float) -> dict:
        """What run.json's ``collisions`` holds: every collision logged, by tick, world and vehicles, and how many
        there were in all."""
        log = self._log
        total = int(log["event_count"].numpy()[0])
        kept = min(total, self.events_kept)
        ticks = log["event_tick"].numpy()[:kept]
        who = log["event_who"].numpy()[:kept]
        impulse = log["event_impulse"].numpy()[:kept] * IMPULSE_UNIT
        order = np.lexsort((who[:, 2], who[:, 1], who[:, 0], ticks)) if kept else []
        events = [{"tick": int(ticks[e]), "time_s": round(int(ticks[e]) * dt_s, 9), "world": int(who[e, 0]),
                   "vehicles": [int(who[e, 1]), int(who[e, 2])],
                   "impulse_n_s": round(float(np.linalg.norm(impulse[e, :3])), 6),
                   "impulse_enu_n_s": [round(float(v), 6) for v in impulse[e, :3]],
                   "normal_impulse_n_s": round(float(impulse[e, 3]), 6)}
                  for e in order]
        return {"count": total, "kept": kept, "end_on_collision": self.end_on_collision, "events": events}


def collision_line(report: dict) -> str | None:
    """The line run.log (and the console) gets for a run's collision report (:meth:`VehicleCollision.report`),
    or None without a collision."""
    if not report or not report["count"]:
        return None
    first = report["events"][0]
    a, b = first["vehicles"]
    what = (f"vehicles {a} and {b} of world {first['world']} collided at tick {first['tick']} "
            f"({first['time_s']:.3f} s), an impulse of {first['impulse_n_s']:.3f} N·s")
    if report["count"] > 1:
        what = f"{report['count']} collisions between vehicles, the first: {what}"
    return what + ("; the world's flight ended there" if report["end_on_collision"] else "")
