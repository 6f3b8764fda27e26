"""PX4 EKF2 parameters that tune PX4's estimator as Nexus's EKF is tuned, for flying the two side by side.

Every tuning attribute of ``NexusEkfAPI`` is named after the PX4 parameter it
mirrors (``nexus:EKF2_GYR_NOISE`` is ``EKF2_GYR_NOISE``), so most settings
carry over by name. The rest translate:

* ``nexus:gpsDelay`` [s] is ``EKF2_GPS_DELAY`` [ms]; ``nexus:noAidTimeout`` [s] is ``EKF2_NOAID_TOUT`` [µs];
* Nexus fuses the magnetometer as a heading: ``EKF2_MAG_TYPE`` 1 (magnetic
  heading at all times; PX4's default 0 switches to 3-axis field fusion in
  flight, which Nexus does not do), 5 (none) when it is off;
* the fusion switches: ``EKF2_GPS_CTRL`` 7 (position, altitude, velocity) or
  0, ``EKF2_BARO_CTRL`` 1 or 0, ``EKF2_RNG_CTRL`` 2 (always) or 0, ``EKF2_FUSE_BETA`` 1 or 0.

The values are read from the vehicle's estimator prim against the EKF's schema,
as ``--estimator ekf`` reads it (attributes it does not author: the defaults).
"""

from __future__ import annotations

from pxr import Usd

from nexus.estimation.ekf import EKF_SPEC
from nexus.plant.usd_checks import nexus_apis
from nexus.schemas.reader import read_prim

#: The APIs an estimator prim carries; the EKF's tuning is read from it whichever one it declares.
ESTIMATOR_APIS = ("NexusTruthEstimatorAPI", "NexusEkfAPI")
#: Attributes named after a PX4 parameter start with this; the rest is the parameter's name.
PX4_NAMED = "nexus:EKF2_"
#: PX4's EKF2_MAG_TYPE for heading fusion at all times, and for no magnetometer.
MAG_TYPE_HEADING = 1
MAG_TYPE_NONE = 5
#: PX4's EKF2_GPS_CTRL bits for longitude/latitude, altitude and 3D velocity; EKF2_RNG_CTRL's "enabled".
GPS_CTRL_ALL = 7
RNG_CTRL_ENABLED = 2


def ekf2_parameters(values: dict) -> dict[str, float | int]:
    """``{EKF2_NAME: value}`` from the EKF spec's values by key (as :func:`read_prim` returns them)."""
    params: dict[str, float | int] = {}
    for param in EKF_SPEC.all_params:
        if param.attr.startswith(PX4_NAMED):
            params[param.attr[len("nexus:"):]] = values[param.key]
    params["EKF2_GPS_DELAY"] = round(1000.0 * float(values["gps_delay"]), 3)
    params["EKF2_NOAID_TOUT"] = round(1e6 * float(values["no_aid_timeout"]))
    params["EKF2_MAG_TYPE"] = MAG_TYPE_HEADING if values["fuse_mag"] else MAG_TYPE_NONE
    params["EKF2_GPS_CTRL"] = GPS_CTRL_ALL if values["fuse_gps"] else 0
    params["EKF2_BARO_CTRL"] = 1 if values["fuse_baro"] else 0
    params["EKF2_RNG_CTRL"] = RNG_CTRL_ENABLED if values["fuse_range"] else 0
    params["EKF2_FUSE_BETA"] = 1 if values["fuse_sideslip"] else 0
    return params


def vehicle_ekf2_parameters(stage: Usd.Stage, path: str) -> dict[str, float | int]:
    """The EKF2 parameters of the first estimator prim on ``stage`` (file ``path``, for messages)."""
    for prim in stage.Traverse():
        if any(api in ESTIMATOR_APIS for api in nexus_apis(prim)):
            return ekf2_parameters(read_prim(prim, EKF_SPEC, path))
    return ekf2_parameters(EKF_SPEC.defaults())
