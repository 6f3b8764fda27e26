"""A minimal ULog writer for the tests: the file format PX4's logger writes, byte for byte.

It writes the 16-byte header, the flag-bits message, one format and one
add-logged message per topic, and the data messages, as specified in PX4's
"ULog File Format" document (dev guide, "ulog_file_format"), so that pyulog
reads it as it reads PX4's own logs. Only what the report needs is written.
"""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np

MAGIC = b"ULog\x01\x12\x35"


def _message(kind: bytes, payload: bytes) -> bytes:
    return struct.pack("<HB", len(payload), kind[0]) + payload


def write_ulog(path: Path, time_us: np.ndarray, position_ned: np.ndarray, attitude_wxyz: np.ndarray) -> Path:
    """``vehicle_local_position`` (timestamp, x, y, z) and ``vehicle_attitude`` (timestamp, q[4]) at ``time_us``."""
    out = bytearray(MAGIC + b"\x01" + struct.pack("<Q", int(time_us[0])))
    out += _message(b"B", bytes(16) + struct.pack("<3Q", 0, 0, 0))
    topics = (("vehicle_local_position", "uint64_t timestamp;float x;float y;float z;"),
              ("vehicle_attitude", "uint64_t timestamp;float[4] q;"))
    for name, fields in topics:  # the definitions section: formats only
        out += _message(b"F", f"{name}:{fields}".encode())
    for msg_id, (name, _) in enumerate(topics):  # the data section opens with the subscriptions
        out += _message(b"A", struct.pack("<BH", 0, msg_id) + name.encode())
    for t, p, q in zip(time_us, position_ned, attitude_wxyz):
        out += _message(b"D", struct.pack("<HQ3f", 0, int(t), *p))
        out += _message(b"D", struct.pack("<HQ4f", 1, int(t), *q))
    Path(path).write_bytes(bytes(out))
    return Path(path)
