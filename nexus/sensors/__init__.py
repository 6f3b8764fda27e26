"""Sensors: device stages that sample the plant's state into NED/FRD sample structs.

One file per sensor (:mod:`~nexus.sensors.imu`, :mod:`~nexus.sensors.magnetometer`,
:mod:`~nexus.sensors.barometer`, :mod:`~nexus.sensors.gps`, :mod:`~nexus.sensors.airspeed`, ...), sharing the due-time
rule (:mod:`~nexus.sensors.schedule`) and noise draws (:mod:`~nexus.sensors.noise`).
"""

from nexus.sensors.airspeed import Airspeed
from nexus.sensors.barometer import Barometer
from nexus.sensors.gps import Gps
from nexus.sensors.imu import Imu
from nexus.sensors.magnetometer import Magnetometer
from nexus.sensors.sensor import Sensor

__all__ = ["Airspeed", "Barometer", "Gps", "Imu", "Magnetometer", "Sensor"]
