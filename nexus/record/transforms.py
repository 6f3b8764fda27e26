"""The recorded bodies' poses as Foxglove ``foxglove.FrameTransforms``, so its 3D panel shows each world's vehicle.

Channel ``/world<K>/tf``: one message per record row holding one transform per
recorded body (``body/<label>.pose``): parent frame ``world`` (Newton's world,
ENU, Z up as Foxglove draws it), child frame ``world<K>/<label>`` (the body's
FLU frame), translation [m] and rotation (x, y, z, w) from the record's
pose, exactly. Worlds share one origin, as they fly.

A run of several vehicles a world (``--vehicles K``) has one such channel per
vehicle, ``/world<K>/vehicle<J>/tf``, whose child frames are
``world<K>/vehicle<J>/<label>``: every vehicle's bodies are frames of their
own, in the one world frame they fly in.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from nexus.record.signal_channels import number_texts, place_prefix

#: Foxglove's schema name for a list of transforms (its JSON encoding).
FRAME_TRANSFORMS = "foxglove.FrameTransforms"
#: The parent frame of every body.
WORLD_FRAME = "world"


def frame_transforms_schema() -> dict:
    """The JSON Schema of ``foxglove.FrameTransforms``, as Foxglove documents the message's fields."""
    vector = {"type": "object", "title": "foxglove.Vector3", "description": "Translation [m], ENU",
              "properties": {axis: {"type": "number"} for axis in "xyz"}}
    quaternion = {"type": "object", "title": "foxglove.Quaternion", "description": "Rotation, body FLU to ENU",
                  "properties": {axis: {"type": "number"} for axis in "xyzw"}}
    transform = {"type": "object", "title": "foxglove.FrameTransform", "properties": {
        "timestamp": {"type": "object", "title": "time", "description": "Sim time of the tick",
                      "properties": {"sec": {"type": "integer", "minimum": 0},
                                     "nsec": {"type": "integer", "minimum": 0, "maximum": 999999999}}},
        "parent_frame_id": {"type": "string", "description": "world: Newton's world frame, ENU"},
        # (the schema is every run's, a fleet's too: its text stays as one-vehicle runs have always written it)
        "child_frame_id": {"type": "string", "description": "world<K>/<body label>: the body's FLU frame"},
        "translation": vector,
        "rotation": quaternion,
    }}
    return {"title": FRAME_TRANSFORMS, "description": "Each recorded body's pose in world K", "type": "object",
            "properties": {"transforms": {"type": "array", "items": transform}}}


@dataclass
class TransformChannel:
    """``/world<K>/tf``: the poses of the recorded bodies (labels) as frame transforms."""

    labels: list[str]
    signal: str = "tf"
    schema_name: str = FRAME_TRANSFORMS
    schema: dict = field(default_factory=frame_transforms_schema, repr=False)

    def topic(self, world: int, vehicle: int | None = None) -> str:
        """``/world0/tf``; with a ``vehicle`` (a fleet's) ``/world0/vehicle1/tf``."""
        return f"{place_prefix(world, vehicle)}/tf"

    @property
    def columns(self) -> list[str]:
        return [f"body/{label}.pose[{i}]" for label in self.labels for i in range(7)]

    def messages(self, table) -> list[str]:
        """One JSON text per row of ``table`` (the record's ``time``, ``world`` and ``vehicle`` where it has them,
        and the poses)."""
        time_ns = np.rint(table.column("time").to_numpy() * 1e9).astype(np.int64)
        rows = len(time_ns)
        sec, nsec = (time_ns // 1_000_000_000).tolist(), (time_ns % 1_000_000_000).tolist()
        worlds = (table.column("world").to_numpy().tolist() if "world" in table.column_names else [0] * rows)
        vehicles = (table.column("vehicle").to_numpy().tolist() if "vehicle" in table.column_names
                    else [None] * rows)
        poses = [number_texts(table.column(name).to_numpy()) for name in self.columns]
        out = []
        for row in range(rows):
            stamp = f'{{"sec":{sec[row]},"nsec":{nsec[row]}}}'
            transforms = []
            frame = place_prefix(worlds[row], vehicles[row])[1:]  # world0, world0/vehicle1
            for b, label in enumerate(self.labels):
                p = [poses[7 * b + i][row] for i in range(7)]
                transforms.append(
                    f'{{"timestamp":{stamp},"parent_frame_id":"{WORLD_FRAME}","child_frame_id":"{frame}/'
                    f'{label}","translation":{{"x":{p[0]},"y":{p[1]},"z":{p[2]}}},'
                    f'"rotation":{{"x":{p[3]},"y":{p[4]},"z":{p[5]},"w":{p[6]}}}}}')
            out.append('{"transforms":[' + ",".join(transforms) + "]}")
        return out


def transform_channel(names) -> TransformChannel | None:
    """The ``tf`` channel of a record with columns ``names``, or None when it holds no body's pose."""
    labels = [name[len("body/"):-len(".pose[0]")] for name in names
              if name.startswith("body/") and name.endswith(".pose[0]")]
    labels = [label for label in labels if all(f"body/{label}.pose[{i}]" in names for i in range(7))]
    return TransformChannel(labels) if labels else None
