"""The scripted PX4's log file: what it said, as a ULog of logged messages, where a real PX4 logs its own.

A real PX4 writes every message it prints or sends as STATUSTEXT into its ULog
(``px4/px4.json`` names the file), even while no ground station hears it: the
``px4_failsafe`` check reads it there. The scripted PX4 writes its messages the
same way, so a test flown against it reads them through the same path. The file
holds only what that path reads: the ULog header, the flag bits and one logged
message (``L``: level, timestamp [µs], text) per message, in the order said.
"""

from __future__ import annotations

import struct
from pathlib import Path

#: ULog's magic and file version.
MAGIC = b"ULog\x01\x12\x35"
VERSION = 1
#: A logged message's level, as PX4 writes it (an ASCII digit, syslog's scale): '2' critical ... '6' info.
LEVELS = {"critical": b"2", "warning": b"4", "info": b"6"}


def _message(kind: bytes, payload: bytes) -> bytes:
    return struct.pack("<HB", len(payload), kind[0]) + payload


def write_ulog(path: Path, messages: list[tuple[int, str, str]]) -> None:
    """Write ``messages`` ((PX4 time [µs], level name, text) each) as a ULog at ``path``."""
    out = bytearray(MAGIC + bytes([VERSION]) + struct.pack("<Q", 0))
    out += _message(b"B", bytes(8 + 8 + 3 * 8))  # flag bits: no compatibility flags, no appended data
    for stamp, level, text in messages:
        out += _message(b"L", LEVELS[level] + struct.pack("<Q", stamp) + text.encode())
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_bytes(bytes(out))
