"""Ray for a sweep: a private local instance, or the cluster the user names.

Without an address, the sweep starts its own Ray instance sized to this
machine (or ``--parallel``), with no dashboard unless asked (Ray's dashboard
and job API are how exposed clusters were taken over), the dashboard (when
asked for) on 127.0.0.1, usage statistics off, and Ray's token
authentication on (Ray's default for a new local instance since 2.5x; a
``RAY_AUTH_MODE=disabled`` in the environment is warned about), and stops it
when the sweep ends. Ray 2.60 cannot be told to keep its own gRPC servers on the loopback
interface: ``ray.init`` replaces a node address of 127.0.0.1 by the
machine's address, and the GCS, raylet and workers listen on every
interface (measured with ``ss -ltnp``); the token is what refuses other
machines. docs/sweeps.md says how to keep a cluster private.
With ``--address`` (``auto``, ``HOST:PORT`` or ``ray://HOST:PORT``) it joins
that cluster and leaves it running. A Ray instance already started in this
process (a test's ``ray.init(num_cpus=2)``) is used as it is.
"""

from __future__ import annotations

import logging
import os
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
            import ray

            ray.shutdown()


def _import_ray():
    try:
        import ray
    except ImportError:
        raise SweepError("nexus sweep needs Ray: pip install 'nexus[ray]' (or pip install ray)") from None
    return ray


def connect(address: str | None, parallel: int | None, dashboard: bool = False, gpus: int | None = None) -> Cluster:
    """Start or join Ray; a cluster that cannot be reached is a one-line :class:`SweepError`."""
    ray = _import_ray()
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    if ray.is_initialized():
        resources = ray.cluster_resources()
        return Cluster(False, resources.get("CPU", 1.0), resources.get("GPU", 0.0), local=address is None)
    if address is None:
        cpus = parallel or os.cpu_count() or 1
        try:
            if os.environ.get("RAY_AUTH_MODE", "").lower() == "disabled":
                log.warning("RAY_AUTH_MODE=disabled: the sweep's Ray instance takes connections without a token "
                            "on every interface of this machine; unset it to keep Ray's token authentication")
            ray.init(num_cpus=cpus, num_gpus=gpus, include_dashboard=dashboard, dashboard_host="127.0.0.1",
                     log_to_driver=False, logging_level="warning")
        except Exception as error:  # noqa: BLE001 (Ray raises many kinds)
            raise SweepError(f"could not start a local Ray instance: {type(error).__name__}: {error}") from None
        resources = ray.cluster_resources()
        return Cluster(True, resources.get("CPU", float(cpus)), resources.get("GPU", 0.0), local=True)
    try:
        ray.init(address=address, log_to_driver=False, logging_level="warning")
    except Exception as error:  # noqa: BLE001
        text = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise SweepError(f"--address {address}: cannot reach a Ray cluster there ({text}); start one with "
                         "`ray start --head` or check the address") from None
    resources = ray.cluster_resources()
    return Cluster(True, resources.get("CPU", 1.0), resources.get("GPU", 0.0), local=False, address=address)
