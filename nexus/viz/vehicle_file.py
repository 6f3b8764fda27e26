"""What the report needs from the vehicle file the run flew: sensor noise, mounts and ESC settings.

Read with ``pxr`` alone (no Newton model), so ``nexus plot`` stays quick. The
noise σ are the sensor prims' ``nexus:`` attributes (authored, or the schema's
fallback); a sensor with ``nexus:noise = false`` has σ = 0. A vehicle may carry
several prims of one kind (two IMUs): each keeps its own mount and σ, found by
the name the record gives its writer.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from pxr import Usd

from nexus import schemas

#: Sensor schema -> record signal.
SENSOR_APIS = {"NexusImuAPI": "imu", "NexusMagnetometerAPI": "mag", "NexusBarometerAPI": "baro", "NexusGpsAPI": "gps"}
#: Per sensor signal: its white-noise attributes as authored in USD, and their units.
NOISE_ATTRIBUTES = {
    "imu": {"nexus:accelNoiseSigma": "m/s²", "nexus:gyroNoiseSigma": "rad/s", "nexus:accelBiasSigma": "m/s²",
            "nexus:gyroBiasSigma": "rad/s"},
    "mag": {"nexus:noiseSigma": "gauss"},
    "baro": {"nexus:noiseSigma": "Pa"},
    "gps": {"nexus:horizontalNoiseSigma": "m", "nexus:verticalNoiseSigma": "m"},
}
ESC_ATTRIBUTES = {"channel": "nexus:channel", "min_speed": "nexus:minSpeed", "max_speed": "nexus:maxSpeed",
                  "thrust_model_factor": "nexus:thrustModelFactor", "tau_up": "nexus:motor:timeConstantUp",
                  "tau_down": "nexus:motor:timeConstantDown"}


@dataclass
class SensorPrim:
    path: str
    mount: tuple[float, float, float]
    noise: bool
    #: White-noise σ by attribute name (0 when ``nexus:noise`` is false), in the units of NOISE_ATTRIBUTES.
    sigma: dict[str, float]


@dataclass
class VehicleFile:
    path: Path
    #: True when the file's SHA-256 equals the one run.json recorded.
    same_as_flown: bool
    #: Record signal -> every prim of that kind, in file order.
    sensors: dict[str, list[SensorPrim]] = field(default_factory=dict)
    escs: list[dict] = field(default_factory=list)
    #: A plane's throttle: its propeller's (``NexusAdvanceRatioPropellerAPI``) slot of ``controls``; None: none.
    throttle_channel: int | None = None
    #: A sentence for the report when something could not be read (or None).
    note: str | None = None

    def sensor(self, signal: str, writer: str = "") -> SensorPrim | None:
        """The prim behind ``signal``'s writer ``writer``, or None when the file has none by that name.

        ``writer`` is the record's name for it (``imu/<writer>.accel[0]``): the prim's last path element, or its
        whole path without the leading '/' when another writer's ends the same. Empty: the signal's only writer,
        taken as the first prim of its kind.
        """
        prims = self.sensors.get(signal, [])
        if not writer:
            return prims[0] if prims else None
        whole = [prim for prim in prims if prim.path.strip("/") == writer]
        last = [prim for prim in prims if prim.path.rsplit("/", 1)[-1] == writer]
        if whole:
            return whole[0]
        return last[0] if len(last) == 1 else None


def read_vehicle_file(path: Path, sha256: str | None) -> VehicleFile:
    """The sensor prims (every one, file order) and ESCs of ``path``; never raises on a bad file."""


    path = Path(path)
    if not path.is_file():
        return VehicleFile(path, False, note=f"the vehicle file {path} is gone: no noise bands, no rotor speeds")
    same = sha256 is None or hashlib.sha256(path.read_bytes()).hexdigest() == sha256
    schemas.register()
    stage = Usd.Stage.Open(str(path))
    if stage is None:
        return VehicleFile(path, same, note=f"USD could not open {path}: no noise bands, no rotor speeds")
    found = VehicleFile(path, same, note=None if same else
                        f"{path} changed since the run (its SHA-256 differs from run.json's): noise bands and rotor "
                        "speeds use the file as it is now")
    for prim in stage.Traverse():
        for api, signal in SENSOR_APIS.items():
            if prim.HasAPI(api):
                noise = bool(_value(prim, "nexus:noise", True))
                sigma = {name: (float(_value(prim, name, 0.0)) if noise else 0.0) for name in NOISE_ATTRIBUTES[signal]}
                mount = tuple(float(x) for x in _value(prim, "nexus:mountOffset", (0.0, 0.0, 0.0)))
                found.sensors.setdefault(signal, []).append(SensorPrim(str(prim.GetPath()), mount, noise, sigma))
        if prim.HasAPI("NexusEscAPI"):
            found.escs.append({key: float(_value(prim, name, 0.0)) for key, name in ESC_ATTRIBUTES.items()})
        if prim.HasAPI("NexusAdvanceRatioPropellerAPI") and found.throttle_channel is None:
            found.throttle_channel = int(_value(prim, "nexus:channel", 4))
    return found


def _value(prim, name: str, default):
    attribute = prim.GetAttribute(name)
    value = attribute.Get() if attribute else None
    return default if value is None else value
