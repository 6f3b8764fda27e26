"""What an estimator says about its own estimate (signals ``estimate_status`` and ``estimate_reset``).

The guidance and the controllers read these beside ``estimate``: whether the
horizontal position can be flown on, whether the filter is aligned and has its
origin (the mission's start waits for both), and the sum of every position
reset, so that a setpoint planned before a reset can be shifted by it. An
estimator that writes neither (the truth estimator) leaves the readers their
defaults: :data:`TRUSTED` and no reset.
"""

from __future__ import annotations

#: Status bits [-], signal ``estimate_status`` (int32).
TILT_ALIGNED = 1  #: roll and pitch aligned from the accelerometer at rest
YAW_ALIGNED = 2  #: heading aligned (magnetometer), or no heading source declared
GPS_AIDING = 4  #: a GPS sample was accepted within the aiding timeout
BARO_AIDING = 8  #: a barometer sample was accepted within the aiding timeout
MAG_AIDING = 16  #: heading fusion active
RANGE_AIDING = 32  #: rangefinder height fusion active
HORIZONTAL_VALID = 64  #: horizontal position 1-sigma below the filter's limit: position control may use it
VERTICAL_VALID = 128  #: vertical position 1-sigma below the filter's limit
ORIGIN_SET = 256  #: the NED origin is placed (first good GPS fix, or no GPS fused)
GPS_FAULT = 512  #: GPS samples stopped or froze; GPS fusion stopped until fresh samples return
BARO_FAULT = 1024  #: barometer samples stopped or froze
MAG_FAULT = 2048  #: magnetometer samples stopped or froze
RANGE_FAULT = 4096  #: rangefinder samples stopped or froze
NO_AID_FUSION = 8192  #: no position or velocity aid: the filter fuses a fake position / zero velocity to stay bounded
AIRSPEED_AIDING = 16384  #: a true airspeed sample was accepted within the aiding timeout (wind states on)
AIRSPEED_FAULT = 32768  #: the pitot's samples stopped or froze; airspeed fusion stopped until fresh samples return

#: Aligned with an origin: what the mission's start waits for.
READY = TILT_ALIGNED | YAW_ALIGNED | ORIGIN_SET
#: What a reader assumes when no estimator writes a status (the truth estimator): aligned, placed, valid.
TRUSTED = READY | HORIZONTAL_VALID | VERTICAL_VALID

#: Signal names.
STATUS_SIGNAL = "estimate_status"
RESET_SIGNAL = "estimate_reset"  #: vec3 [m] NED: the sum of every position reset's delta so far

__all__ = [
    "AIRSPEED_AIDING", "AIRSPEED_FAULT", "BARO_AIDING", "BARO_FAULT", "GPS_AIDING", "GPS_FAULT", "HORIZONTAL_VALID", "MAG_AIDING", "MAG_FAULT",
    "NO_AID_FUSION", "ORIGIN_SET", "RANGE_AIDING", "RANGE_FAULT", "READY", "RESET_SIGNAL", "STATUS_SIGNAL",
    "TILT_ALIGNED", "TRUSTED", "VERTICAL_VALID", "YAW_ALIGNED",
]
