"""The vehicle's true position in the estimate's frame, from a record's ``body/base`` columns.

Checks of what a vehicle really did read the truth, not the estimate (which the EKF writes with its own
errors). The truth estimator's NED origin is where the base rests at the start, so the true NED position is
the base's ENU displacement from its first recorded row, axes swapped: (e, n, u) -> (n, e, -u).
"""

from __future__ import annotations

import numpy as np


def truth_ned_position(record) -> np.ndarray:
    """(rows, 3) true position [m] NED of the base relative to where it rested on the first row."""
    enu = record[[f"body/base.pose[{i}]" for i in range(3)]].to_numpy(dtype=np.float64)
    d = enu - enu[0]
    return np.stack([d[:, 1], d[:, 0], -d[:, 2]], axis=1)
