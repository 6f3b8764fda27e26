"""Ray for a sweep: a private local instance, or the cluster the user names.

Without an address, the sweep starts its own Ray instance sized to this
machine (or ``--parallel``) that listens on the loopback interface only, with
no dashboard unless asked (Ray's dashboard and job API are how exposed
clusters were taken over), the dashboard (when asked for) on 127.0.0.1, usage
statistics off, and Ray's token authentication on (Ray's default for a new
local instance since 2.5x; a ``RAY_AUTH_MODE=disabled`` in the environment is
warned about), and stops it when the sweep ends. Ray's own notice that token
authentication is on, logged at every ``ray.init``, is kept off the terminal
(docs/sweeps.md says what it means). Its workers run at the sweep's own
priority: Ray lowers its workers' by 15 niceness steps by default
(``worker_niceness``), which on a machine shared with other work made a
sweep on two cores slower than the same runs one after another in one
process (docs/benchmarking.md, the sweep suite).

Loopback only: Ray's GCS, raylet (node manager and object manager), worker
and driver gRPC servers and its runtime-env agent listen on 127.0.0.1 when the
node's address is 127.0.0.1, and on every interface otherwise. ``ray.init``
replaces a node address of 127.0.0.1 (``_node_ip_address="127.0.0.1"``
included; ``RAY_NODE_IP_ADDRESS`` is not read) by the machine's address unless
``ray._private.ray_constants.ENABLE_RAY_CLUSTER`` is false, which on Linux
only ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`` at Ray's import sets (its other
use is ``ray start`` refusing to join a cluster). So :func:`connect` turns that
flag off for the one ``ray.init`` call (Ray may be imported already) and
checks the node address afterwards: anything but a loopback address is a
warning. Measured with ``ss -ltnp`` on Ray 2.60 (docs/sweeps.md): before,
every Ray listener on ``*`` (and the runtime-env agent on the machine's
address); now all on ``[::ffff:127.0.0.1]`` / ``127.0.0.1``, no UDP.
tests/sweep/test_cluster.py checks it through /proc.

With ``--address`` (``auto``, ``HOST:PORT`` or ``ray://HOST:PORT``) it joins
that cluster and leaves it running. A Ray instance already started in this
process by its own ``ray.init`` is used as it was started.
"""

from __future__ import annotations

import logging
import os
from contextlib import contextmanager
from dataclasses import dataclass

from nexus.sweep.spec import SweepError

log = logging.getLogger("nexus")


@dataclass
class Cluster:
    #: We started it (and stop it at the end).
    owned: bool
    #: CPUs Ray counts across the cluster.
    cpus: float
    gpus: float
    #: Whether workers share this machine's disk (a local instance): then runs write into DIR directly.
    local: bool
    address: str | None = None

    def close(self) -> None:
        if self.owned:
            import ray  # noqa: PLC0415  (reason: heavy optional dependency, nexus[ray])

            ray.shutdown()


def _import_ray():
    try:
        import ray  # noqa: PLC0415  (reason: heavy optional dependency, nexus[ray]; its absence is one line)
    except ImportError:
        raise SweepError("nexus sweep needs Ray: pip install 'nexus[ray]' (or pip install ray)") from None
    return ray


#: Ray settings of the sweep's own instance: workers as nice as the sweep itself (Ray adds this to the
#: niceness they inherit; its default, 15, lets every other job on the machine go first).
OWN_SYSTEM_CONFIG = {"worker_niceness": 0}

#: Node addresses whose Ray servers bind the loopback interface only.
LOOPBACK = ("127.0.0.1", "::1")


@contextmanager
def _loopback_node():
    """Let ``ray.init`` keep 127.0.0.1 as the node address (see the module's docstring)."""
    try:
        from ray._private import ray_constants  # noqa: PLC0415  (reason: optional Ray, and a private module)
    except ImportError:
        ray_constants = None
    if not hasattr(ray_constants, "ENABLE_RAY_CLUSTER"):  # another Ray: connect's check after ray.init warns
        yield
        return
    before = ray_constants.ENABLE_RAY_CLUSTER
    ray_constants.ENABLE_RAY_CLUSTER = False
    try:
        yield
    finally:
        ray_constants.ENABLE_RAY_CLUSTER = before


#: The start of Ray's notice, at every ``ray.init`` that starts or joins a cluster with token authentication on
#: by default, that it is on (``ray._private.authentication.authentication_token_setup``).
TOKEN_NOTICE = "Token authentication is enabled for this Ray cluster"


class _DropTokenNotice(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(TOKEN_NOTICE)


@contextmanager
def _without_token_notice():
    """Keep Ray's token notice off the terminal for the one ``ray.init`` call (docs/sweeps.md says what it means)."""
    logger = logging.getLogger("ray._private.authentication.authentication_token_setup")
    quiet = _DropTokenNotice()
    logger.addFilter(quiet)
    try:
        yield
    finally:
        logger.removeFilter(quiet)


def node_address(ray) -> str | None:
    """The address the local Ray node was started with (its servers' bind address), or None when unknown."""
    try:
        return ray._private.worker.global_worker.node.node_ip_address
    except AttributeError:
        return None


def connect(address: str | None, parallel: int | None, dashboard: bool = False, gpus: int | None = None) -> Cluster:
    """Start or join Ray; a cluster that cannot be reached is a one-line :class:`SweepError`."""
    ray = _import_ray()
    if address is not None and address.startswith("ray://"):
        try:
            import grpc  # noqa: F401, PLC0415  (reason: Ray Client's transport, what ray[client] adds to plain ray)
        except ImportError:
            raise SweepError(f"--address {address}: a ray:// address needs Ray Client, which plain ray lacks; "
                             "pip install 'nexus[ray]' (it installs ray[client]) or pip install 'ray[client]'") from None
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    if ray.is_initialized():
        resources = ray.cluster_resources()
        return Cluster(False, resources.get("CPU", 1.0), resources.get("GPU", 0.0), local=address is None)
    if address is None:
        cpus = parallel or os.cpu_count() or 1
        try:
            if os.environ.get("RAY_AUTH_MODE", "").lower() == "disabled":
                log.warning("RAY_AUTH_MODE=disabled: the sweep's Ray instance takes connections without a token "
                            "from any process on this machine; unset it to keep Ray's token authentication")
            with _loopback_node(), _without_token_notice():
                ray.init(num_cpus=cpus, num_gpus=gpus, include_dashboard=dashboard, dashboard_host="127.0.0.1",
                         log_to_driver=False, logging_level="warning", _system_config=OWN_SYSTEM_CONFIG)
        except Exception as error:  # noqa: BLE001 (Ray raises many kinds)
            raise SweepError(f"could not start a local Ray instance: {type(error).__name__}: {error}") from None
        node = node_address(ray)
        if node not in LOOPBACK:
            log.warning("the sweep's Ray instance runs on node address %s, not 127.0.0.1: its servers listen on every "
                        "interface of this machine (Ray's token authentication is what refuses other machines)", node)
        resources = ray.cluster_resources()
        return Cluster(True, resources.get("CPU", float(cpus)), resources.get("GPU", 0.0), local=True)
    try:
        with _without_token_notice():
            ray.init(address=address, log_to_driver=False, logging_level="warning")
    except Exception as error:  # noqa: BLE001
        text = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise SweepError(f"--address {address}: cannot reach a Ray cluster there ({text}); start one with "
                         "`ray start --head` or check the address") from None
    resources = ray.cluster_resources()
    return Cluster(True, resources.get("CPU", 1.0), resources.get("GPU", 0.0), local=False, address=address)
