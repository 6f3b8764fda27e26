"""``nexus px4 mission`` without PX4 says so soon, in the words ``nexus run --controller px4`` uses.

It used to wait its whole ``--timeout`` (600 s) and then say the mission took too long. Now, when nothing
came from PX4 within ``--connect-timeout`` (30 s by default), it stops with the no-connection error
(``px4-no-connection``, exit 1); once PX4 was heard, only ``--timeout`` bounds the mission.
"""

import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from pymavlink.dialects.v20 import common as mavlink

from nexus.cli import main

ROOT = Path(__file__).resolve().parents[2]


def free_udp_port() -> int:
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    return port


def test_without_px4_it_says_no_px4_was_heard_after_the_connect_timeout():
    port = free_udp_port()
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "nexus.cli", "px4", "mission", "--url", f"udpin:127.0.0.1:{port}",
                           "--connect-timeout", "1"], capture_output=True, text=True, timeout=120, cwd=ROOT)
    took = time.monotonic() - started
    assert done.returncode == 1, done.stderr
    assert done.stderr.splitlines() == [
        f"error: PX4 sent nothing to udpin:127.0.0.1:{port} within 1 s; raise --connect-timeout, or start PX4 SITL "
        "(PX4_SIM_MODEL=none_iris ./bin/px4) and the sim it flies (nexus run --controller px4)"]
    assert took < 60.0  # 1 s of waiting and the start of Python, not the mission's 600 s


def test_the_first_message_wait_is_short_by_default():
    result = CliRunner().invoke(main, ["px4", "mission", "--help"])
    assert result.exit_code == 0
    assert "--connect-timeout" in result.output and "[default: 30.0; x>=0.1]" in " ".join(result.output.split())


def test_once_px4_was_heard_only_the_mission_timeout_ends_it():
    from nexus.px4.mission import MissionError, Px4Mission

    port = free_udp_port()
    stop = threading.Event()

    def heartbeats():  # PX4's autopilot (system 1, component 1), five times a second, never flying
        sender = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        mav = mavlink.MAVLink(None, srcSystem=1, srcComponent=1)
        while not stop.is_set():
            message = mav.heartbeat_encode(mavlink.MAV_TYPE_QUADROTOR, mavlink.MAV_AUTOPILOT_PX4, 0, 0, 0)
            sender.sendto(message.pack(mav), ("127.0.0.1", port))
            time.sleep(0.2)
        sender.close()

    beating = threading.Thread(target=heartbeats, daemon=True)
    mission = Px4Mission(f"udpin:127.0.0.1:{port}", timeout_s=3.0, connect_timeout_s=1.0, say=lambda text: None)
    beating.start()
    try:
        with pytest.raises(MissionError, match=r"^the mission took longer than 3 s wall$"):
            mission.run()
    finally:
        stop.set()
        beating.join(5.0)
