"""A scripted ground station: a hand flight of PX4 in Position mode, on a UDP port, as QGroundControl flies it.

For measuring ``nexus run --controller px4 --realtime`` against real PX4 without a person at the sticks
(docs/px4.md, "Fly it by hand with QGroundControl"). It listens where Nexus's relay sends PX4's
ground-station traffic (``--px4-gcs 127.0.0.1:PORT``; QGroundControl's own port is 14550), waits for PX4's
heartbeat, and sends ``MANUAL_CONTROL`` every 40 ms of wall time as a joystick does, with a heartbeat every
second; once PX4 has a home position it asks for Position mode and to arm, every second until PX4 is armed
(PX4 refuses until its heading estimate is stable), with the throttle down; then it climbs
(throttle 800 of 1000) for 4 s, holds (500, the centre) 5 s, flies forward (pitch 600) 3 s, holds 4 s and
descends (250) until PX4 disarms. The stick times are wall time. It writes every ``GLOBAL_POSITION_INT`` with
the wall time it came at (``--csv``), prints PX4's ``STATUSTEXT``s, and at the end the slope of PX4's time
against the wall clock.

    python tools/gcs_station.py --port 14650 --csv station.csv
"""

from __future__ import annotations

import argparse
import csv
import socket
import time

from pymavlink.dialects.v20 import common as mavlink

#: (seconds of wall time, x (pitch), z (throttle)) after the switch to Position mode; then descend until disarmed.
PROFILE = ((1.0, 0, 0), (4.0, 0, 800), (5.0, 0, 500), (3.0, 600, 500), (4.0, 0, 500))
DESCEND = 250
POSCTL = 3  # PX4's custom main mode for Position


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=14550, help="UDP port to listen on (Nexus's --px4-gcs)")
    parser.add_argument("--timeout", type=float, default=300.0, help="give up after this much wall time [s]")
    parser.add_argument("--csv", default=None, help="write (wall [s], PX4 time [ms], relative altitude [mm])")
    args = parser.parse_args(argv)

    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", args.port))
    sock.settimeout(0.005)
    mav = mavlink.MAVLink(None, srcSystem=255, srcComponent=190)
    reader = mavlink.MAVLink(None)
    vehicle = None
    target = 1  # PX4's MAV_SYS_ID (instance K: K + 1), from its heartbeat
    home = False
    armed_seen = False
    disarmed_after_flight = False
    positions: list[tuple[float, int, int]] = []
    began = time.monotonic()
    next_beat = next_stick = next_arm = 0.0
    flying_at = None
    x = z = 0

    def send(message) -> None:
        sock.sendto(message.pack(mav), vehicle)
        mav.seq = (mav.seq + 1) % 256

    while time.monotonic() - began < args.timeout and not disarmed_after_flight:
        try:
            data, sender = sock.recvfrom(65536)
            for message in reader.parse_buffer(data) or []:
                kind = message.get_type()
                if kind == "HEARTBEAT" and message.autopilot == mavlink.MAV_AUTOPILOT_PX4:
                    vehicle, target = sender, message.get_srcSystem()
                    armed = bool(message.base_mode & mavlink.MAV_MODE_FLAG_SAFETY_ARMED)
                    if armed and not armed_seen:
                        armed_seen = True
                        print(f"{time.monotonic() - began:7.2f} s  armed")
                    if armed_seen and not armed and flying_at is not None:
                        disarmed_after_flight = True
                        print(f"{time.monotonic() - began:7.2f} s  disarmed")
                elif kind == "HOME_POSITION" and not home:
                    home = True
                    print(f"{time.monotonic() - began:7.2f} s  home position")
                elif kind == "GLOBAL_POSITION_INT":
                    positions.append((time.monotonic() - began, message.time_boot_ms, message.relative_alt))
                elif kind == "STATUSTEXT":
                    print(f"{time.monotonic() - began:7.2f} s  PX4: {message.text}")
                elif kind == "COMMAND_ACK":
                    print(f"{time.monotonic() - began:7.2f} s  COMMAND_ACK {message.command}: {message.result}")
        except (TimeoutError, socket.timeout):
            pass
        if vehicle is None:
            continue
        now = time.monotonic()
        if now >= next_beat:
            send(mav.heartbeat_encode(mavlink.MAV_TYPE_GCS, mavlink.MAV_AUTOPILOT_INVALID, 0, 0, 4))
            next_beat = now + 1.0
        if home and not armed_seen and now >= next_arm:  # PX4 refuses until its heading estimate is stable
            send(mav.command_long_encode(target, 1, mavlink.MAV_CMD_DO_SET_MODE, 0, 1, POSCTL, 0, 0, 0, 0, 0))
            send(mav.command_long_encode(target, 1, mavlink.MAV_CMD_COMPONENT_ARM_DISARM, 0, 1, 0, 0, 0, 0, 0, 0))
            next_arm = now + 1.0
        if armed_seen and flying_at is None:
            flying_at = now
        if flying_at is not None:
            elapsed, x, z = now - flying_at, 0, DESCEND
            for seconds, pitch, throttle in PROFILE:
                if elapsed < seconds:
                    x, z = pitch, throttle
                    break
                elapsed -= seconds
        if now >= next_stick:
            send(mav.manual_control_encode(target, x, 0, z, 0, 0))
            next_stick = max(next_stick + 0.04, now - 0.04)
    if args.csv:
        with open(args.csv, "w", newline="") as handle:
            csv.writer(handle).writerows([("wall_s", "px4_ms", "relative_alt_mm"), *positions])
    if len(positions) > 1:
        (w0, t0, _), (w1, t1, _) = positions[0], positions[-1]
        print(f"{len(positions)} positions; PX4's time ran at {(t1 - t0) * 1e-3 / (w1 - w0):.3f}x the wall clock; "
              f"highest {max(p[2] for p in positions) / 1000:.2f} m")
    return 0 if disarmed_after_flight else 1


if __name__ == "__main__":
    raise SystemExit(main())
