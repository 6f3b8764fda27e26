"""Several PX4 SITL instances flying the vehicles of one world, all in one lockstep tick.

``nexus run --controller px4 --vehicles K`` (one world): vehicle k is flown by
PX4 instance i = first + k (``px4 -i i``; first is ``--px4-instance``, else
0), on the ports PX4's start-up scripts give instance i
(:mod:`nexus.px4.instance`): its simulator link on TCP 4560 + i, its
ground-station link on UDP 18570 + i and, with ``--px4-mission``, its API
stream on UDP 14540 + i. PX4 gives instance i ``MAV_SYS_ID`` i + 1, so a
ground station on 14550 tells the vehicles apart. A port given as 0 (the
tests) stays 0 for every instance: each listens on a port of its own.

Each vehicle has its own :class:`~nexus.px4.controller.Px4Controller` for its
slot: its link, boot, lockstep, mission commander, ground-station relay and
counts are those of one PX4. The fleet gathers every vehicle's row in one
launch over the slots, then its exchange sends every instance its tick first
and only then waits for the answers, in vehicle order. The instances work on
the tick at the same time (each is a process of its own) and the clock moves
only when all have answered: one instance that is late holds all of them, as
lockstep must. A failure ends the run with the instance, its vehicle and its
port named; closing the run closes every link.

With ``--px4-offboard-policy`` each instance flies the policy for its own
vehicle: the fleet's ``offboard`` stage runs every slot's pilot in vehicle
order, each on its instance's API port (14540 + i) addressed to its system id
(i + 1), observing its own slot's ``estimate`` and ``setpoint`` rows, each
setpoint confirmed (the clock held) before the next instance's goes; a fleet
policy (neighbour features, as ``nexus train --task swap`` exports) also gets
every other vehicle's estimate, moved to the world's frame by its start.
"""

from __future__ import annotations

import logging

import numpy as np
import warp as wp

from nexus.control.policy.features import neighbour_features
from nexus.core import Component, Stage
from nexus.core.errors import BuildError, NexusError
from nexus.px4.api_link import parse_url
from nexus.px4.gather import Px4Row
from nexus.px4.instance import MAX_INSTANCE, SIM_PORT
from nexus.plant.frames import enu_to_ned_np

log = logging.getLogger("nexus")


def instance_port(port: int, k: int) -> int:
    """Vehicle k's port: the first instance's plus k (0, a port of the system's choice, stays 0)."""
    return 0 if port == 0 else port + k


def instance_url(url: str, k: int) -> str:
    """Vehicle k's MAVLink API URL: the first instance's with its port plus k."""
    host, port = parse_url(url)
    return f"udpin:{host}:{instance_port(port, k)}"


def first_instance(port: int) -> int:
    """The PX4 instance whose simulator link is on TCP ``port`` (below PX4's first port, as with 0: instance 0)."""
    return port - SIM_PORT if port >= SIM_PORT else 0


def check_instances(first: int, vehicles: int, where: str) -> None:
    """Refuse more instances than PX4's port ranges give each its own ports (one line naming ``where``)."""
    last = first + vehicles - 1
    if last > MAX_INSTANCE:
        raise BuildError(f"{where}: {vehicles} PX4 instances from instance {first} end at instance {last}, and "
                         f"PX4 instances above {MAX_INSTANCE} share one MAVLink API port (14549); fly at most "
                         f"{MAX_INSTANCE + 1 - first} vehicles from instance {first}")


class Px4FleetController(Component):
    """One PX4 SITL instance per vehicle of one world, all writing their rows of ``controls`` in one tick."""

    def __init__(self, name: str, plant, peers: list, first: int):
        super().__init__(name)
        self.plant = plant
        #: One :class:`~nexus.px4.controller.Px4Controller` per vehicle (``slot`` k flies vehicle k), and the
        #: PX4 instance number (``px4 -i``) of each.
        self.peers = list(peers)
        self.instances = [first + k for k in range(len(self.peers))]
        self.rows = None

    @property
    def air_start(self):
        """A plane fleet's air start (every vehicle's, the file's): the start-up places every slot there."""
        return self.peers[0].air_start

    @property
    def runway_takeoff(self) -> bool:
        """Whether PX4 rolls every plane of the fleet off its runway (the start-up settles them on their wheels)."""
        return self.peers[0].runway_takeoff

    def stages(self) -> list[Stage]:
        # Vehicle 0's declarations serve every slot: the signals' leading axis holds every vehicle.
        own = {s.name: s for s in self.peers[0].stages()}
        gather, exchange, offboard = own["px4_row"], own["exchange"], own.get("offboard")
        return [Stage(gather.name, gather.kind, self._gather, reads=gather.reads, writes=gather.writes),
                *([] if offboard is None else [Stage(offboard.name, offboard.kind, self._offboard, host=True,
                                                     reads=offboard.reads, writes=offboard.writes, batched=True)]),
                Stage(exchange.name, exchange.kind, self._exchange, reads=exchange.reads, writes=exchange.writes,
                      host=True, batched=True)]

    def prepare(self, ctx) -> None:
        if self.rows is None:
            self.rows = wp.zeros(len(self.peers), dtype=Px4Row, device=ctx.device)
        for peer in self.peers:
            peer.row = self.rows
            try:
                peer.prepare(ctx)
            except NexusError as error:
                raise self._named(peer, error) from error

    def _gather(self, io) -> None:
        self.peers[0]._gather(io)  # one launch over every slot (the rows hold them all)

    def _offboard(self, io) -> None:
        """Each instance's setpoint from its own vehicle's rows, in vehicle order, each confirmed before the next
        goes (the clock holds meanwhile: no instance has this tick's sensors yet); one write of every action."""
        actions = io["ctbr"].read_all()
        found = {}

        def neighbours(slot: int):  # a fleet policy's neighbour features, made once a tick when a setpoint goes
            if "rows" not in found:
                estimates = io["estimate"].read_all()
                places = enu_to_ned_np(self.plant.ned_origin.numpy()) + np.asarray(estimates["position"], np.float64)
                found["rows"] = neighbour_features(places, estimates["velocity"], estimates["attitude"],
                                                   len(self.peers))
            return found["rows"][slot]

        peer = None
        try:
            for peer in self.peers:
                action = peer._offboard_action(io, lambda k=peer.slot: neighbours(k))
                if action is not None:
                    actions[peer.slot] = action
        except NexusError as error:
            raise self._named(peer, error) from error
        io["ctbr"].write_all(actions)

    def _exchange(self, io) -> None:
        """Every instance gets its tick, then every answer is awaited: the clock moves when all have answered."""
        peer, times, ends = None, [], []
        try:
            for peer in self.peers:
                times.append(peer._send(io))
            for peer, time_usec in zip(self.peers, times):
                ends.append(peer._answer(time_usec))
        except NexusError as error:
            raise self._named(peer, error) from error
        if all(ends):  # every mission flown (or the run asked to end)
            io.finish()

    def _named(self, peer, error: Exception) -> Exception:
        """``error`` with the instance, its vehicle and its port in front (the same kind, so the exit reason stays)."""
        if peer is None:
            return error
        k = peer.slot
        try:
            return type(error)(f"PX4 instance {self.instances[k]} (vehicle {k}, TCP port {peer.link.port}): {error}")
        except TypeError:  # a kind built otherwise keeps its own words
            return error

    def check_end(self) -> None:
        for peer in self.peers:
            try:
                peer.check_end()
            except NexusError as error:
                raise self._named(peer, error) from error

    def close(self) -> None:
        for peer in self.peers:
            try:
                peer.close()
            except Exception:  # one link's failure to close must not keep the others open
                log.exception("closing PX4 instance %d failed", self.instances[peer.slot])

    @property
    def peer_wait_s(self) -> float:
        """Wall time [s] spent waiting for the instances to connect and boot (their waits follow each other)."""
        return sum(peer.peer_wait_s for peer in self.peers)

    def stats(self) -> dict:
        """Each instance's counts under ``instances``; the waits summed over them, the exchanges and answers of the
        instance with fewest, and lockstep only when every instance is in it."""
        each = [{"instance": i, "vehicle": k, **peer.stats()} for k, (i, peer) in
                enumerate(zip(self.instances, self.peers))]
        return {"instances": each, "waiting_s": round(sum(e["waiting_s"] for e in each), 3),
                "exchanges": min(e["exchanges"] for e in each), "answers": min(e["answers"] for e in each),
                "lockstep": all(e["lockstep"] for e in each)}
