"""MAVLink 2 frames packed with one precompiled struct per message type, straight from the dialect.

pymavlink's ``message.pack(mav)`` costs about 25 µs a message in Python (its
encoder object, header, signing checks and trimming), more than the rest of a
lockstep tick's host work. A :class:`FramePacker` takes what it needs from the
dialect's message class once (the payload's struct format, the wire order of
the fields, array lengths, ``CRC_EXTRA``, the id) and then packs a frame with
one ``struct.pack`` and :func:`x25`: the same bytes as pymavlink's packer,
byte for byte, a few microseconds each.

A value that does not fit its field saturates, as a real sensor's reading
does at the end of its range: an integer goes to the nearer end of its
field's range (:data:`SATURATED`; an impact's −85,044 milli-g in
HIL_STATE_QUATERNION's int16 ``zacc`` goes out as −32,767), a float beyond
float32's range to float32's largest. ``struct`` refuses such a value, so
the fast path packs as before and only a refused frame is clamped and packed
again (:func:`saturate`); each clamped field is counted
(``FramePacker.saturated``, the link's ``saturated``) and logged once by
name. :func:`pack_message` does the same for a pymavlink message object.
"""

from __future__ import annotations

import binascii
import logging
import math
import numbers
import re
import struct
from collections import Counter

from pymavlink.dialects.v20 import common as mavlink

log = logging.getLogger("nexus.px4")

MAGIC_V2 = 0xFD
_HEADER = struct.Struct("<BBBBBBBHB")  # magic, length, incompat, compat, seq, sysid, compid, msgid (3 bytes)
_CRC = struct.Struct("<H")
#: Each byte with its bits in reverse order.
_REVERSED = bytes(int(f"{value:08b}"[::-1], 2) for value in range(256))


#: What each ``struct`` integer code holds (MAVLink's int8_t .. uint64_t).
INTEGER_RANGES = {code: ((-(1 << (8 * size - 1)), (1 << (8 * size - 1)) - 1) if code.islower()
                         else (0, (1 << (8 * size)) - 1))
                  for code, size in (("b", 1), ("B", 1), ("h", 2), ("H", 2), ("i", 4), ("I", 4), ("q", 8), ("Q", 8))}
#: Where a value that does not fit saturates: a signed field symmetrically, as a sensor's range is (int16:
#: ±32,767), an unsigned one at 0 or its largest.
SATURATED = {code: (max(low, -high), high) for code, (low, high) in INTEGER_RANGES.items()}
#: float32's largest finite value: ``struct`` refuses a float beyond it for an ``f`` field.
FLOAT32_MAX = 3.4028234663852886e38
_TOKEN = re.compile(r"(\d*)([a-zA-Z])")


def wire_fields(message_class: type) -> list[tuple[str, str]]:
    """Each value of the payload in wire order, arrays spread: its name (``quaternion[2]`` for an array's
    element) and its ``struct`` code. A ``char[N]`` field is one value (code ``s``)."""
    tokens = [(int(count or 1), code) for count, code in _TOKEN.findall(message_class.unpacker.format)]
    out: list[tuple[str, str]] = []
    for (count, code), name, length in zip(tokens, message_class.ordered_fieldnames, message_class.array_lengths):
        if code == "s" or not length:
            out.append((name, code))
        else:
            out.extend((f"{name}[{k}]", code) for k in range(count))
    return out


def saturated_value(code: str, value):
    """``value`` clamped to what a field of ``struct`` code ``code`` holds (unchanged when it fits)."""
    limits = INTEGER_RANGES.get(code)
    if limits is not None and isinstance(value, numbers.Integral):
        if limits[0] <= value <= limits[1]:
            return value
        low, high = SATURATED[code]
        return min(max(int(value), low), high)
    if code == "f" and isinstance(value, numbers.Real) and math.isfinite(value) and abs(value) > FLOAT32_MAX:
        return math.copysign(FLOAT32_MAX, value)  # inf and NaN stay: float32 has them
    return value


def saturate(message_name: str, fields: list[tuple[str, str]], values, counts: Counter) -> tuple:
    """``values`` (wire order, arrays spread) with each that does not fit its field clamped; each clamped field
    counted in ``counts`` as ``MESSAGE.field`` and logged the first time."""
    out = list(values)
    for k, ((name, code), value) in enumerate(zip(fields, values)):
        clamped = saturated_value(code, value)
        if clamped is not value:
            out[k] = clamped
            key = f"{message_name}.{name}"
            if not counts[key]:
                log.warning("%s = %s does not fit the field (struct %r): sent saturated as %s", key, value, code,
                            clamped)
            counts[key] += 1
    return tuple(out)


def pack_message(message, mav, counts: Counter) -> bytes:
    """``message.pack(mav)`` (a pymavlink message object), its fields saturated first if one does not fit."""
    try:
        return message.pack(mav)
    except (struct.error, OverflowError):
        pass
    fields = wire_fields(type(message))
    spread = []
    for name, length in zip(message.ordered_fieldnames, message.array_lengths):
        value = getattr(message, name)
        if length and not isinstance(value, (str, bytes)):
            spread.extend(value)
        else:
            spread.append(value)
    values = saturate(message.get_type(), fields, spread, counts)
    k = 0
    for name, length in zip(message.ordered_fieldnames, message.array_lengths):
        value = getattr(message, name)
        if length and not isinstance(value, (str, bytes)):
            setattr(message, name, list(values[k:k + len(value)]))
            k += len(value)
        else:
            setattr(message, name, values[k])
            k += 1
    return message.pack(mav)


def x25(data: bytes) -> int:
    """MAVLink's checksum (CRC-16/MCRF4XX, "x25") of ``data``, computed in C by the standard library.

    MCRF4XX is CCITT's polynomial run least significant bit first from 0xFFFF;
    ``binascii.crc_hqx`` runs the same polynomial most significant bit first.
    Reversing each byte's bits going in and the 16-bit result coming out turns
    one into the other (the start value 0xFFFF reads the same both ways). It
    saves pymavlink's ``x25crc`` object and method calls on every frame.
    """
    crc = binascii.crc_hqx(data.translate(_REVERSED), 0xFFFF)
    return _REVERSED[crc & 0xFF] << 8 | _REVERSED[crc >> 8]


class FramePacker:
    """Packs one message type; arguments in the order of the dialect's ``<name>_encode``."""

    def __init__(self, message_class: type, mav, saturated: Counter | None = None):
        self.mav = mav
        self.name = message_class.msgname
        #: Fields sent saturated (``MESSAGE.field``: how many times): :func:`saturate`.
        self.saturated = saturated if saturated is not None else Counter()
        self.fields = wire_fields(message_class)
        self.id = message_class.id
        self.crc_extra = bytes([message_class.crc_extra])
        self.payload = struct.Struct(message_class.unpacker.format)
        names = list(message_class.fieldnames)
        #: For each field in wire order: its position among the encoder's arguments and its array length.
        self.wire = [(names.index(name), length)
                     for name, length in zip(message_class.ordered_fieldnames, message_class.array_lengths)]
        #: Values for trailing arguments left out (MAVLink 2 extension fields the encoder defaults to 0).
        lengths = dict(zip(message_class.ordered_fieldnames, message_class.array_lengths))
        self.defaults = tuple([0] * lengths[name] if lengths[name] else 0 for name in names)
        self.flat = all(length == 0 for _, length in self.wire)
        self.in_order = self.flat and [i for i, _ in self.wire] == list(range(len(names)))

    def values(self, args) -> tuple:
        """The encoder's arguments as the payload struct takes them: wire order, arrays spread."""
        if self.in_order:
            return tuple(args)
        out = []
        for index, length in self.wire:
            if length:
                out.extend(args[index])
            else:
                out.append(args[index])
        return tuple(out)

    def pack(self, *args) -> bytes:
        """One frame, with the link's next sequence number, system and component id."""
        if len(args) < len(self.defaults):
            args = args + self.defaults[len(args):]
        return self.pack_wire(*self.values(args))

    def pack_wire(self, *values) -> bytes:
        """One frame from the payload's values already in wire order, arrays spread (every field given)."""
        try:
            payload = self.payload.pack(*values)
        except (struct.error, OverflowError):  # a value beyond its field: saturate (module doc)
            payload = self.payload.pack(*saturate(self.name, self.fields, values, self.saturated))
        payload = payload.rstrip(b"\x00") or b"\x00"  # MAVLink 2 trims zeros
        mav = self.mav
        header = _HEADER.pack(MAGIC_V2, len(payload), 0, 0, mav.seq, mav.srcSystem, mav.srcComponent,
                              self.id & 0xFFFF, self.id >> 16)
        mav.seq = (mav.seq + 1) % 256
        # x25 runs byte by byte, so CRC_EXTRA can ride along in the one call.
        return header + payload + _CRC.pack(x25(header[1:] + payload + self.crc_extra))


def packers(mav, *message_classes, saturated: Counter | None = None) -> list[FramePacker]:
    return [FramePacker(cls, mav, saturated) for cls in message_classes]
