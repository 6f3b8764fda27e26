"""MAVLink 2 frames packed with one precompiled struct per message type, straight from the dialect.

pymavlink's ``message.pack(mav)`` costs about 25 µs a message in Python (its
encoder object, header, signing checks and trimming), more than the rest of a
lockstep tick's host work. A :class:`FramePacker` takes what it needs from the
dialect's message class once (the payload's struct format, the wire order of
the fields, array lengths, ``CRC_EXTRA``, the id) and then packs a frame with
one ``struct.pack`` and the dialect's own ``x25crc``: the same bytes as
pymavlink's packer, byte for byte, a few microseconds each.
"""

from __future__ import annotations

import struct

from pymavlink.dialects.v20 import common as mavlink

MAGIC_V2 = 0xFD
_HEADER = struct.Struct("<BBBBBBBHB")  # magic, length, incompat, compat, seq, sysid, compid, msgid (3 bytes)
_CRC = struct.Struct("<H")


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
        payload = self.payload.pack(*self.values(args)).rstrip(b"\x00") or b"\x00"  # MAVLink 2 trims zeros
        mav = self.mav
        header = _HEADER.pack(MAGIC_V2, len(payload), 0, 0, mav.seq, mav.srcSystem, mav.srcComponent,
                              self.id & 0xFFFF, self.id >> 16)
        mav.seq = (mav.seq + 1) % 256
        # x25 runs byte by byte, so CRC_EXTRA can ride along in the one call.
        return header + payload + _CRC.pack(mavlink.x25crc(header[1:] + payload + self.crc_extra).crc)


def packers(mav, *message_classes) -> list[FramePacker]:
    return [FramePacker(cls, mav) for cls in message_classes]
