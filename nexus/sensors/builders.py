"""Schema name -> builder of the sensor component for a prim applying it.

:mod:`nexus.assembly` merges :data:`SENSOR_BUILDERS` into its builders; a
builder takes the prim and the assembly's ``PrimContext`` (plant, file path).
"""

from __future__ import annotations

from collections.abc import Callable

from nexus.sensors.barometer import build_barometer
from nexus.sensors.gps import build_gps
from nexus.sensors.imu import build_imu
from nexus.sensors.magnetometer import build_magnetometer

SENSOR_BUILDERS: dict[str, Callable] = {
    "NexusImuAPI": build_imu,
    "NexusMagnetometerAPI": build_magnetometer,
    "NexusBarometerAPI": build_barometer,
    "NexusGpsAPI": build_gps,
}
