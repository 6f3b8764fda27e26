"""The sweep's own Ray instance listens on the loopback interface only (issue 22, "Security").

The instance is started through ``nexus.sweep.cluster.connect`` in a fresh Python (the session's
shared Ray of conftest.py would otherwise be reused), with Ray imported before ``connect`` as in a
process that imported it already. Its listening sockets are read from /proc: the sockets of the
driver and every process under it (gcs_server, raylet, the runtime-env agent, workers), matched by
inode against /proc/net/tcp, tcp6, udp and udp6.
"""

import ipaddress
import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("ray")
pytestmark = pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="needs Linux /proc")

ROOT = Path(__file__).resolve().parents[2]

DRIVER = """
import json, os, sys
import ray  # imported before connect, as in a process that uses Ray already
from ray._private import ray_constants
from nexus.sweep.cluster import connect

cluster = connect(None, 1)

@ray.remote
def worker_pid():
    return os.getpid()

pid = ray.get(worker_pid.remote())
print(json.dumps({"worker": pid, "node": ray._private.worker.global_worker.node.node_ip_address, "owned": cluster.owned,
                  "flag_after": ray_constants.ENABLE_RAY_CLUSTER}), flush=True)
sys.stdin.readline()
cluster.close()
"""

TCP_LISTEN = "0A"
UDP_UNCONNECTED = "07"


def _children() -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    return children


def _tree(root: int) -> set[int]:
    children = _children()
    found, todo = set(), [root]
    while todo:
        pid = todo.pop()
        if pid not in found:
            found.add(pid)
            todo.extend(children.get(pid, []))
    return found


def _socket_inodes(pid: int) -> set[str]:
    inodes = set()
    try:
        names = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return inodes
    for name in names:
        try:
            target = os.readlink(f"/proc/{pid}/fd/{name}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:["):-1])
    return inodes


def _address(hex_address: str) -> tuple[ipaddress.IPv4Address | ipaddress.IPv6Address, int]:
    """Decode /proc/net's ADDR:PORT (the address in host-order 32-bit words, little-endian here)."""
    host, port = hex_address.split(":")
    raw = b"".join(bytes.fromhex(host[i:i + 8])[::-1] for i in range(0, len(host), 8))
    return ipaddress.ip_address(raw), int(port, 16)


def _bound(table: str, state: str) -> list[tuple[str, ipaddress.IPv4Address | ipaddress.IPv6Address, int]]:
    """(inode, address, port) of each socket of /proc/net/TABLE in STATE with a port."""
    rows = []
    for line in Path(f"/proc/net/{table}").read_text().splitlines()[1:]:
        fields = line.split()
        address, port = _address(fields[1])
        if fields[3] == state and port:
            rows.append((fields[9], address, port))
    return rows


def _loopback(address) -> bool:
    mapped = getattr(address, "ipv4_mapped", None)
    return address.is_loopback or (mapped is not None and mapped.is_loopback)


def _name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return "?"


def test_own_ray_instance_listens_on_loopback_only():
    driver = subprocess.Popen([sys.executable, "-c", DRIVER], cwd=ROOT, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        ready, _, _ = select.select([driver.stdout], [], [], 60)
        line = driver.stdout.readline() if ready else ""
        assert line, f"the driver printed nothing: {driver.poll()=}"
        started = json.loads(line)
        assert started["owned"], "connect() reused a Ray instance instead of starting its own"
        time.sleep(0.5)  # let late listeners (the runtime-env agent) bind

        pids = _tree(driver.pid) | {started["worker"]}
        owner = {inode: pid for pid in pids for inode in _socket_inodes(pid)}
        listening = [(owner[inode], address, port)
                     for table, state in (("tcp", TCP_LISTEN), ("tcp6", TCP_LISTEN),
                                          ("udp", UDP_UNCONNECTED), ("udp6", UDP_UNCONNECTED))
                     for inode, address, port in _bound(table, state) if inode in owner]
        described = sorted(f"{_name(pid)}[{pid}] {address}:{port}" for pid, address, port in listening)

        # Ray's servers were found: else "all on loopback" would hold for nothing.
        names = {_name(pid) for pid, _, _ in listening}
        assert {"gcs_server", "raylet"} <= names, described
        assert driver.pid in {pid for pid, _, _ in listening}, described
        assert started["worker"] in {pid for pid, _, _ in listening}, described

        exposed = sorted(f"{_name(pid)}[{pid}] {address}:{port}" for pid, address, port in listening
                         if not _loopback(address))
        assert not exposed, f"Ray listens beyond the loopback interface: {exposed} (all: {described})"
        assert started["node"] == "127.0.0.1"
        assert started["flag_after"] is True, "connect() left Ray's multi-node switch off after ray.init"
    finally:
        if driver.poll() is None:
            try:
                driver.stdin.write("\n")
                driver.stdin.flush()
            except OSError:
                pass
        try:
            driver.wait(timeout=30)
        except subprocess.TimeoutExpired:
            driver.kill()
            driver.wait()


def test_own_ray_instance_runs_its_workers_at_the_sweeps_priority(ray_cpus):
    # Ray's default adds 15 to its workers' niceness: on a shared machine every other job went first.
    import ray

    assert ray.get(ray.remote(lambda: os.nice(0)).remote()) == os.nice(0)
