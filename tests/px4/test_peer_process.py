"""PX4's process found from the TCP connection, and told idle or busy from its threads' states (Linux)."""

import socket
import subprocess
import sys
import time
from dataclasses import replace

import pytest

from nexus.px4.peer_process import PeerProcess
from nexus.runtime.run import run_flight
from tests.px4.test_lockstep import HOVER, px4_flight

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

#: A child that connects to PORT, then sleeps (idle) or spins (busy) until killed.
CHILD = """
import socket, sys, time
sock = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
if sys.argv[2] == "spin":
    while True:
        pass
time.sleep(60)
"""


def connected_child(mode):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(server.getsockname()[1]), mode])
    server.settimeout(30.0)
    connection, _ = server.accept()
    return server, connection, child


@pytest.mark.parametrize("mode, idle", [("sleep", True), ("spin", False)])
def test_the_peer_is_found_and_its_state_read(mode, idle):
    server, connection, child = connected_child(mode)
    try:
        peer = PeerProcess.of_connection(connection)
        assert peer is not None and peer.pid == child.pid
        time.sleep(0.2)  # past the interpreter's start-up
        assert peer.idle() is idle
    finally:
        child.kill()
        child.wait()
        connection.close()
        server.close()


def test_a_peer_in_this_process_is_not_watched():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    client = socket.create_connection(server.getsockname())
    connection, _ = server.accept()
    try:
        assert PeerProcess.of_connection(connection) is None
    finally:
        for sock in (client, connection, server):
            sock.close()


def test_settle_waits_for_an_idle_peer_after_every_answer(tmp_path):
    # The instant peer in a process of its own: the boot waits until it is idle, and with
    # settle every tick in lockstep waits for it too.
    flight, px4 = px4_flight(settle=True)
    peer = subprocess.Popen([sys.executable, "-m", "nexus.px4.scripted_peer", "--port", str(px4.link.port),
                             "--row", str(HOVER)])
    try:
        summary = run_flight(replace(flight.options, device="cpu", duration=0.2), tmp_path, progress=False,
                             flight=flight)
    finally:
        peer.terminate()
        peer.wait(timeout=10)
    stats = px4.stats()
    assert summary.exit_reason == "duration" and stats["boot_waits_for_idle"]
    # The first answer came in a boot tick (which waited for idleness its own way); the 49 after it
    # each waited in lockstep.
    assert stats["answers"] == 50 and stats["first_answer_tick"] == 1 and stats["settle_waits"] == 49
