"""Fly real PX4 SITL toward a wall in Position mode and report where it stopped (collision prevention check).

Run it against a PX4 already flying in lockstep with ``nexus run`` (see
docs/px4.md, "Obstacle data from the lidar"): it listens on PX4's API stream,
holds the sticks centred (``MANUAL_CONTROL`` at 20 Hz of wall time), arms,
takes off to ``--altitude``, switches to Position mode and pushes the pitch
stick forward for ``--seconds``. It prints the furthest and the last position
along the vehicle's nose (NED east for a vehicle facing east) and writes every
``LOCAL_POSITION_NED`` it saw to ``--csv``.

    python tools/px4_wall_flight.py --url udpin:127.0.0.1:14541 --csv wall.csv

Not a test: CI has no PX4. The figures it gave are in docs/px4.md.
"""

from __future__ import annotations

import argparse
import csv
import sys
import time

from pymavlink import mavutil

#: PX4's custom main mode for Position (``px4_custom_mode.h``: 1 manual, 2 altitude, 3 position).
POSCTL = 3
#: ``MAV_MODE_FLAG_CUSTOM_MODE_ENABLED``: param1 of ``MAV_CMD_DO_SET_MODE`` when param2 is a custom mode.
CUSTOM = 1


class Flight:
    def __init__(self, url: str, csv_path: str | None):
        self.link = mavutil.mavlink_connection(url, source_system=255, source_component=190)
        self.rows: list[tuple] = []
        self.position = None
        self.last_sticks = 0.0
        self.sticks = (0, 0, 500, 0)  # x pitch, y roll, z throttle (500 is centre), r yaw
        self.csv_path = csv_path

    def pump(self, seconds: float, until=None):
        """Read messages and keep the sticks streaming for ``seconds`` of wall time or until ``until()``."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if time.monotonic() - self.last_sticks >= 0.05:
                self.link.mav.manual_control_send(self.link.target_system or 1, *self.sticks, 0)
                self.last_sticks = time.monotonic()
            message = self.link.recv_match(blocking=True, timeout=0.02)
            if message is None:
                continue
            kind = message.get_type()
            if kind == "LOCAL_POSITION_NED":
                self.position = message
                self.rows.append((message.time_boot_ms, message.x, message.y, message.z, message.vx, message.vy))
            elif kind == "STATUSTEXT":
                print(f"PX4: {message.text}", flush=True)
            if until is not None and until(message):
                return message
        return None

    def command(self, command: int, *params: float, tries: int = 20):
        """Send ``command`` until PX4 accepts it; one that is only temporarily rejected (arming while the
        estimator settles) is sent again a second later."""
        padded = list(params) + [0.0] * (7 - len(params))
        for _ in range(tries):
            self.link.mav.command_long_send(self.link.target_system or 1, 1, command, 0, *padded)
            ack = self.pump(10.0, lambda m: m.get_type() == "COMMAND_ACK" and m.command == command)
            if ack is not None and ack.result == mavutil.mavlink.MAV_RESULT_ACCEPTED:
                return
            if ack is None or ack.result != mavutil.mavlink.MAV_RESULT_TEMPORARILY_REJECTED:
                break
            self.pump(1.0)
        sys.exit(f"PX4 did not accept command {command}: {ack}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default="udpin:127.0.0.1:14540", help="PX4's API stream (14540 + instance)")
    parser.add_argument("--altitude", type=float, default=2.5, help="take-off height [m]")
    parser.add_argument("--forward", type=int, default=600, help="pitch stick, -1000..1000 (forward > 0)")
    parser.add_argument("--seconds", type=float, default=15.0, help="wall time to hold the stick forward [s]")
    parser.add_argument("--csv", default=None, help="where to write the positions seen")
    args = parser.parse_args(argv)

    flight = Flight(args.url, args.csv)
    print("waiting for PX4's heartbeat and home position...", flush=True)
    if flight.pump(120.0, lambda m: m.get_type() == "HOME_POSITION") is None:
        flight.link.mav.command_long_send(1, 1, mavutil.mavlink.MAV_CMD_REQUEST_MESSAGE, 0, 242, 0, 0, 0, 0, 0, 0)
        if flight.pump(60.0, lambda m: m.get_type() == "HOME_POSITION") is None:
            return print("no HOME_POSITION from PX4", file=sys.stderr) or 1
    flight.pump(2.0)
    flight.command(mavutil.mavlink.MAV_CMD_COMPONENT_ARM_DISARM, 1)
    flight.command(mavutil.mavlink.MAV_CMD_NAV_TAKEOFF, 0, 0, 0, float("nan"), float("nan"), float("nan"),
                   float("nan"))
    flight.pump(60.0, lambda m: m.get_type() == "LOCAL_POSITION_NED" and m.z < -(args.altitude - 0.2))
    flight.pump(3.0)
    start = flight.position
    print(f"hovering at NED ({start.x:.2f}, {start.y:.2f}, {start.z:.2f}) m; Position mode, stick forward",
          flush=True)
    flight.command(mavutil.mavlink.MAV_CMD_DO_SET_MODE, CUSTOM, POSCTL)
    flight.sticks = (args.forward, 0, 500, 0)
    flight.pump(args.seconds)
    flight.sticks = (0, 0, 500, 0)
    flight.pump(2.0)
    east = [row[2] for row in flight.rows if row[0] >= start.time_boot_ms]
    print(f"east: furthest {max(east):.2f} m, last {east[-1]:.2f} m (start {start.y:.2f} m); "
          f"{len(flight.rows)} positions")
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(["time_boot_ms", "north", "east", "down", "v_north", "v_east"])
            writer.writerows(flight.rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
