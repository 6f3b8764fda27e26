"""MAVLink 2 frames packed with one precompiled struct per message type, straight from the dialect.

pymavlink's ``message.pack(mav)`` costs about 25 µs a message in Python (its
encoder object, header, signing checks and trimming), more than the rest of a
lockstep tick's host work. A :class:`FramePacker` takes what it needs from the
dialect's message class once (the payload's struct format, the wire order of
the fields, array lengths, ``CRC_EXTRA``, the id) and then packs a frame with
one ``struct.pack`` and :func:`x25`: the same bytes as pymavlink's packer,
byte for byte, a few microseconds each.
"""

from __future__ import annotations

import binascii
import struct

from pymavlink.dialects.v20 import common as mavlink

MAGIC_V2 = 0xFD
_HEADER = struct.Struct("<BBBBBBBHB")  # magic, length, incompat, compat, seq, sysid, compid, msgid (3 bytes)
_CRC = struct.Struct("<H")
#: Each byte with its bits in reverse order.
_REVERSED = bytes(int(f"{value:08b}"[::-1], 2) for value in range(256))


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

    def __init__(self, message_class: type, mav):
        self.mav = mav
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
        payload = self.payload.pack(*values).rstrip(b"\x00") or b"\x00"  # MAVLink 2 trims zeros
        mav = self.mav
        header = _HEADER.pack(MAGIC_V2, len(payload), 0, 0, mav.seq, mav.srcSystem, mav.srcComponent,
                              self.id & 0xFFFF, self.id >> 16)
        mav.seq = (mav.seq + 1) % 256
        # x25 runs byte by byte, so CRC_EXTRA can ride along in the one call.
        return header + payload + _CRC.pack(x25(header[1:] + payload + self.crc_extra))


def packers(mav, *message_classes) -> list[FramePacker]:
    return [FramePacker(cls, mav) for cls in message_classes]
