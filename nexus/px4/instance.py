"""PX4 SITL instance K: the ports, paths and ids it uses, and claiming a K no one else on this host uses.

``px4 -i K`` (PX4's own multi-instance scheme, read from its source and its
``sitl_multiple_run.sh``): its simulator link connects to TCP 4560+K (Nexus
listens, PX4 is the client); its MAVLink API stream sends from UDP 14580+K to
the offboard port 14540+K (every K above 9 shares 14549); its ground-station
stream uses UDP 18570+K (to 14550); ``MAV_SYS_ID`` is K+1; it takes the
host-wide lock ``/tmp/px4_lock-K`` and works in ``rootfs/K`` unless ``-w``
names another folder.

:func:`claim_instance` picks the lowest K whose ports and PX4 lock are free and
holds an advisory lock file for it until released: the kernel drops the lock
when the holding process ends, however it ends, so a crashed run never keeps
its K.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import socket
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

import click

#: The simulator link of instance 0 [TCP port]; instance K adds K.
SIM_PORT = 4560
#: Where instance K's MAVLink API stream goes (the offboard port) [UDP port]; K > 9 share ``OFFBOARD_PORT + 9``.
OFFBOARD_PORT = 14540
#: Instance K's own end of its API stream [UDP port].
ONBOARD_PORT = 14580
#: Instance K's own end of its ground-station stream [UDP port].
GCS_LOCAL_PORT = 18570
#: The largest K :func:`claim_instance` tries (PX4 itself allows more; past 9 the offboard port is shared).
MAX_INSTANCE = 9


class InstanceBusy(RuntimeError):
    """Every PX4 instance number up to :data:`MAX_INSTANCE` is in use on this host."""


@dataclass(frozen=True)
class Px4Instance:
    """The numbers PX4 started with ``-i k`` uses."""

    k: int

    def __post_init__(self):
        if isinstance(self.k, bool) or not isinstance(self.k, int) or self.k < 0:
            raise ValueError(f"PX4 instance {self.k!r}: give a whole number, 0 or more")

    @property
    def sim_port(self) -> int:
        """The TCP port Nexus listens on for this instance's simulator link."""
        return SIM_PORT + self.k

    @property
    def offboard_port(self) -> int:
        """The UDP port this instance's MAVLink API stream goes to (a mission commander listens there)."""
        return OFFBOARD_PORT + min(self.k, 9)

    @property
    def onboard_port(self) -> int:
        return ONBOARD_PORT + self.k

    @property
    def gcs_local_port(self) -> int:
        return GCS_LOCAL_PORT + self.k

    @property
    def mavlink_url(self) -> str:
        """pymavlink/MAVSDK address on which this instance's API stream arrives."""
        return f"udpin:127.0.0.1:{self.offboard_port}"

    @property
    def system_id(self) -> int:
        """``MAV_SYS_ID`` of this instance."""
        return self.k + 1

    @property
    def px4_lock(self) -> Path:
        """The host-wide lock PX4 itself takes for this instance."""
        return Path(tempfile.gettempdir()) / f"px4_lock-{self.k}"

    def controller_options(self, host: str = "127.0.0.1") -> dict:
        """The PX4 controller's host and port for this instance (``RunConfig.controller_options``)."""
        return {"host": host, "port": self.sim_port}


def _tcp_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _udp_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        try:
            sock.bind(("0.0.0.0", port))
        except OSError:
            return False
    return True


def _lock_free(path: Path) -> bool:
    """Whether no process holds ``path`` locked (a PX4 running as that instance does)."""
    if not path.exists():
        return True
    try:
        with open(path, "a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            fcntl.flock(handle, fcntl.LOCK_UN)
    except OSError:
        return False
    return True


class Claim:
    """Instance K held by this process (an flock on a file of Nexus's own) until :meth:`release`."""

    def __init__(self, instance: Px4Instance, handle):
        self.instance, self._handle = instance, handle

    def release(self) -> None:
        if self._handle is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(self._handle, fcntl.LOCK_UN)
            self._handle.close()
            self._handle = None

    def __enter__(self) -> Claim:
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def claim_path(k: int, folder: Path | None = None) -> Path:
    return Path(folder or tempfile.gettempdir()) / f"nexus-px4-instance-{k}.lock"


def claim_instance(first: int = 0, last: int = MAX_INSTANCE, folder: Path | None = None) -> Claim:
    """The lowest free instance K in [first, last], held until released (or this process ends).

    Free means: no other Nexus process holds K's claim, PX4's own lock for K is not held,
    and K's simulator TCP port and its UDP ports can be bound on this host.
    """
    for k in range(first, last + 1):
        instance = Px4Instance(k)
        path = claim_path(k, folder)
        handle = open(path, "a")  # noqa: SIM115 (held open: the lock lives as long as the handle)
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            continue
        free = (_lock_free(instance.px4_lock) and _tcp_free(instance.sim_port)
                and all(_udp_free(p) for p in (instance.onboard_port, instance.gcs_local_port)))
        if k <= 9:
            free = free and _udp_free(instance.offboard_port)
        if free:
            handle.truncate(0)
            handle.write(f"{os.getpid()}\n")
            handle.flush()
            return Claim(instance, handle)
        fcntl.flock(handle, fcntl.LOCK_UN)
        handle.close()
    raise InstanceBusy(f"every PX4 instance from {first} to {last} is in use on this host (ports 4560+K, 14540+K, "
                       f"14580+K, 18570+K or /tmp/px4_lock-K); wait for runs to end, or stop PX4 processes left over")


def claim_instances(count: int, folder: Path | None = None) -> list[Claim]:
    """``count`` free instances with consecutive numbers K..K+count-1 (the lowest K), each held as
    :func:`claim_instance` holds one: the instances of the vehicles of one world."""
    for first in range(0, MAX_INSTANCE - count + 2):
        claims: list[Claim] = []
        for k in range(first, first + count):
            try:
                claims.append(claim_instance(k, k, folder))
            except InstanceBusy:
                break
        if len(claims) == count:
            return claims
        for claim in claims:
            claim.release()
    raise InstanceBusy(f"no {count} consecutive PX4 instances from 0 to {MAX_INSTANCE} are free on this host (ports "
                       "4560+K, 14540+K, 14580+K, 18570+K or /tmp/px4_lock-K); wait for runs to end, or fly fewer "
                       "vehicles")


def instance_options(ctx, options, k: int, mission_url: str):
    """``nexus run --px4-instance K``: the run's PX4 link on K's port and the mission on K's MAVLink URL.

    Refuses (a click usage error) another controller, or ``--px4-port``/``--px4-mission-url`` given as well
    with other values.
    """

    if options.controller != "px4":
        raise click.UsageError("--px4-instance needs --controller px4")
    instance = Px4Instance(k)
    given = click.core.ParameterSource.COMMANDLINE
    if ctx.get_parameter_source("px4_port") == given and options.controller_options.port != instance.sim_port:
        raise click.UsageError(f"--px4-port {options.controller_options.port} and --px4-instance {k} "
                               f"(port {instance.sim_port}) disagree; give one of them")
    if ctx.get_parameter_source("px4_mission_url") == given and mission_url != instance.mavlink_url:
        raise click.UsageError(f"--px4-mission-url {mission_url} and --px4-instance {k} ({instance.mavlink_url}) "
                               "disagree; give one of them")
    options = replace(options, controller_options=replace(options.controller_options, port=instance.sim_port,
                                                          gcs_port=instance.gcs_local_port))
    if options.controller_options.offboard_policy is not None:  # the offboard setpoints go to K's MAVLink port too
        if ctx.get_parameter_source("px4_offboard_url") == given and \
                options.controller_options.offboard_url != instance.mavlink_url:
            raise click.UsageError(f"--px4-offboard-url {options.controller_options.offboard_url} and --px4-instance "
                                   f"{k} ({instance.mavlink_url}) disagree; give one of them")
        options = replace(options, controller_options=replace(options.controller_options,
                                                              offboard_url=instance.mavlink_url))
    return options, instance.mavlink_url
