"""Control allocation from the vehicle's geometry: collective thrust and torques -> each rotor's thrust.

At build time the vehicle's rotors (:func:`nexus.plant.rotor_geometry.rotor_geometry`,
the numbers ``nexus px4 params`` writes) give the **effectiveness matrix**
``B`` (4 × n): row by row the roll, pitch and yaw moment [N·m, FRD] and the
collective thrust [N, up] that one unit of each rotor's thrust fraction
(its thrust over its full thrust ``kT·ω_max²``) makes. A rotor at ``r`` whose
thrust pushes along ``d`` (FRD, (0, 0, −1) upright) gives the moment
``r × d·T`` plus its drag reaction ``−(spin·kQ/kT)·d·T`` and the thrust
``−d_z·T``.

The **mix** (n × 4) is ``B``'s pseudo-inverse with its columns scaled so
that the controllers' units stay those of the quad-X mixer they grew up
with: one unit of normalised torque moves the rotor that moves most by
:data:`TORQUE_SCALE` of its thrust fraction, and the collective is the
total thrust as a fraction of the intact vehicle's full thrust (each rotor's
share, on a symmetric frame). For PX4's quad-X this is the old sign table
times 0.5, to the bit (the scaled mix is rounded to 6 decimals, so the
float32 asymmetries of a file's rotor positions leave a symmetric frame
symmetric). When a rotor has failed (:meth:`Allocation.mix_without`) the
pseudo-inverse is solved again without it, with the intact vehicle's column
scales, so a unit of torque still asks for the same moment; a layout that
then has no yaw authority left (a quadrotor) is solved for roll, pitch and
thrust only and gives up yaw.

Saturation (:func:`write_rotor_commands`) keeps attitude first. Roll and
pitch are scaled down until some collective fits them in [0, 1]; the
collective asked for is moved into that range (thrust given up for roll and
pitch); yaw is added in full when the collective can move to make room for it
(thrust given up for yaw) and otherwise scaled down to the room left. This is
the order of PX4's sequential desaturation, worked out here for a mix whose
thrust column need not be uniform. A rotor the collective does not move (the
one opposite a failed rotor of a hexacopter idles at hover, whatever the
collective) can fit roll and pitch only with some yaw: the yaw asked for is
moved into the range where it does, roll and pitch first.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import warp as wp

from nexus.control.mixer import command_for_thrust
from nexus.core.clock import at_ns
from nexus.plant.rotor_geometry import RotorGeometry, effectiveness, rotor_geometry

#: Change of the most-moved rotor's thrust fraction per unit of normalised torque [-].
TORQUE_SCALE = 0.5
#: Decimals the scaled mix keeps.
MIX_DECIMALS = 6


def _pseudo_inverse(matrix: np.ndarray) -> np.ndarray:
    """``matrix``'s pseudo-inverse (n, 4); a matrix without yaw authority is solved for roll, pitch and thrust."""
    if np.linalg.matrix_rank(matrix, tol=1e-9 * np.abs(matrix).max()) == 4:
        return np.linalg.pinv(matrix)
    kept = [0, 1, 3]
    solved = np.zeros((matrix.shape[1], 4))
    solved[:, kept] = np.linalg.pinv(matrix[kept])
    return solved


@dataclass(frozen=True)
class Allocation:
    """A vehicle's effectiveness matrix, its scaled mix and the column scales that made it."""

    #: (4, n), see :func:`effectiveness`.
    matrix: np.ndarray
    #: (n, 4): each rotor's thrust fraction per unit of roll, pitch, yaw torque (normalised) and collective.
    mix: np.ndarray
    #: (4,): what the pseudo-inverse's columns were multiplied by.
    scales: np.ndarray

    @classmethod
    def from_matrix(cls, matrix: np.ndarray) -> Allocation:
        inverse = np.linalg.pinv(matrix)
        largest = np.abs(inverse).max(axis=0)
        scales = np.array([TORQUE_SCALE / largest[0], TORQUE_SCALE / largest[1], TORQUE_SCALE / largest[2],
                           matrix[3].sum()])
        return cls(matrix, np.round(inverse * scales, MIX_DECIMALS), scales)

    @property
    def rotors(self) -> int:
        return self.matrix.shape[1]

    def mix_without(self, slot: int, remaining: float = 0.0) -> np.ndarray:
        """The mix (n, 4) once rotor ``slot`` gives only ``remaining`` of its thrust (0: none), same column scales."""
        matrix = self.matrix.copy()
        matrix[:, slot] *= remaining
        return np.round(_pseudo_inverse(matrix) * self.scales, MIX_DECIMALS)


def quad_x_allocation() -> Allocation:
    """PX4's quad-X (rotors at (±1, ±1) m, front right and rear left counter-clockwise, equal rotors): the
    allocation of a controller made without a vehicle."""
    corners = ((1.0, 1.0, 1.0), (-1.0, -1.0, 1.0), (1.0, -1.0, -1.0), (-1.0, 1.0, -1.0))
    geometry = [RotorGeometry(channel=i, index=i, joint_path=f"rotor_{i + 1}", position=(x, y, 0.0),
                              axis=(0.0, 0.0, -1.0), yaw_moment=0.05 * spin, max_thrust=1.0)
                for i, (x, y, spin) in enumerate(corners)]
    return Allocation.from_matrix(effectiveness(geometry))


def allocation_for(plant) -> Allocation:
    """The allocation of ``plant``'s vehicle (its layout was checked when it was loaded:
    :func:`nexus.plant.rotor_geometry.check_vehicle`)."""
    return Allocation.from_matrix(effectiveness(rotor_geometry(plant)))


@wp.struct
class MixTables:
    """The mixes a controller flies with: table 0 the intact vehicle's, table ``fail_table[w]`` world w's once its
    rotor has failed (from ``fail_ns[w]`` [ns] on; never when the controller is not told of failures)."""

    mix: wp.array3d(dtype=wp.float32)
    fail_table: wp.array(dtype=wp.int32)
    fail_ns: wp.array(dtype=wp.int64)


#: No failure: a time no run reaches [ns].
NEVER_NS = np.iinfo(np.int64).max


def mix_tables(allocation: Allocation, worlds: int, device, failures=None) -> MixTables:
    """The device tables for ``worlds`` worlds; ``failures`` (per world: None or (slot, remaining, at_ns)) adds
    each failing world's re-solved mix."""
    tables = [allocation.mix]
    fail_table = np.zeros(worlds, dtype=np.int32)
    fail_ns = np.full(worlds, NEVER_NS, dtype=np.int64)
    for w, failure in enumerate(failures or ()):
        if failure is None:
            continue
        slot, remaining, at_ns = failure
        tables.append(allocation.mix_without(slot, remaining))
        fail_table[w], fail_ns[w] = len(tables) - 1, at_ns
    # One row per rotor of the vehicle (every table has as many): the mixing loops run over these rows only.
    padded = np.zeros((len(tables), max(table.shape[0] for table in tables), 4), dtype=np.float32)
    for k, table in enumerate(tables):
        padded[k, : table.shape[0]] = table
    t = MixTables()
    t.mix = wp.array(padded, dtype=wp.float32, device=device)
    t.fail_table = wp.array(fail_table, dtype=wp.int32, device=device)
    t.fail_ns = wp.array(fail_ns, dtype=wp.int64, device=device)
    return t


def failures_of(ctx, geometry: list[RotorGeometry]) -> list:
    """Each world's drawn rotor failure (``rotor_fail_*`` of a variation file) as (slot, remaining, at_ns), or None;
    ``geometry`` maps the failure's rotor index (propeller order) to its slot (ESC channel)."""
    slot_of = {g.index: g.channel for g in geometry}
    found = []
    for w in range(ctx.worlds):
        values = ctx.values_of(w)
        time = values.get("rotor_fail_time", None)
        index = int(values.get("rotor_fail_index", 0))
        if time is None or not np.isfinite(time) or index not in slot_of:
            found.append(None)
            continue
        found.append((slot_of[index], float(values.get("rotor_fail_fraction", 0.0)), at_ns(time)))
    return found


# The mix has a row per rotor of the vehicle (at most MAX_ROTORS); a failed rotor's row is zeros and gives 0.
@wp.func
def _tilt(t: MixTables, table: int, i: int, torque: wp.vec3) -> float:
    return t.mix[table, i, 0] * torque[0] + t.mix[table, i, 1] * torque[1]


@wp.func
def write_rotor_commands(controls: wp.array2d(dtype=wp.float32), world: int, thrust_model_factor: float,
                         collective: float, torque: wp.vec3, on: float, t: MixTables, now_ns: wp.int64):
    """Mix ``collective`` (thrust fraction) and ``torque`` (normalised, FRD) into ESC commands in the vehicle's
    rotors' slots of ``controls`` (zeros elsewhere), roll and pitch first, then yaw, then thrust. The loops run over
    the mix's rows (one per rotor of the vehicle), not :data:`MAX_ROTORS`: a slot past the rotors keeps the zero
    written first."""
    rows = t.mix.shape[1]
    table = int(0)
    if now_ns >= t.fail_ns[world]:
        table = t.fail_table[world]
    # Roll and pitch: the spread that must fit in [0, 1] whatever the collective (rows that carry thrust).
    low = float(1.0e30)
    for i in range(rows):
        m = t.mix[table, i, 3]
        if m > 1.0e-6:
            low = wp.min(low, _tilt(t, table, i, torque) / m)
    spread = float(0.0)
    for i in range(rows):
        m = t.mix[table, i, 3]
        if m > 1.0e-6:
            spread = wp.max(spread, (_tilt(t, table, i, torque) / m - low) * m)
    shrink = float(1.0)
    if spread > 1.0:
        shrink = spread
    # The collective moves into the range where roll and pitch fit.
    lo = float(-1.0e30)
    hi = float(1.0e30)
    for i in range(rows):
        m = t.mix[table, i, 3]
        if m > 1.0e-6:
            tilt = _tilt(t, table, i, torque) / shrink
            lo = wp.max(lo, -tilt / m)
            hi = wp.min(hi, (1.0 - tilt) / m)
    base = wp.clamp(collective, lo, hi)
    # Rows the collective does not move (a rotor opposite a failed one) fit roll and pitch only with some yaw:
    # the yaw asked for is moved into the range where they fit (empty: none such, the yaw asked for).
    yaw_lo = float(-1.0e30)
    yaw_hi = float(1.0e30)
    for i in range(rows):
        m = t.mix[table, i, 3]
        k = t.mix[table, i, 2]
        if m <= 1.0e-6 and wp.abs(k) > 1.0e-6:
            tilt = _tilt(t, table, i, torque) / shrink
            a = -tilt / k
            b = (1.0 - tilt) / k
            yaw_lo = wp.max(yaw_lo, wp.min(a, b))
            yaw_hi = wp.min(yaw_hi, wp.max(a, b))
    yaw = torque[2]
    if yaw_lo <= yaw_hi:
        yaw = wp.clamp(yaw, yaw_lo, yaw_hi)
    # Yaw: in full if it fits at this collective, ...
    share = float(1.0)
    for i in range(rows):
        spin = t.mix[table, i, 2] * yaw
        thrust = base * t.mix[table, i, 3] + _tilt(t, table, i, torque) / shrink
        if spin > 0.0:
            share = wp.min(share, (1.0 - thrust) / spin)
        elif spin < 0.0:
            share = wp.min(share, thrust / (-spin))
    share = wp.max(share, 0.0)
    if share < 1.0:
        # ... else in full with the collective moved to make room (thrust given up), else scaled to the room left.
        lo_yaw = float(-1.0e30)
        hi_yaw = float(1.0e30)
        for i in range(rows):
            m = t.mix[table, i, 3]
            if m > 1.0e-6:
                tilt = _tilt(t, table, i, torque) / shrink + t.mix[table, i, 2] * yaw
                lo_yaw = wp.max(lo_yaw, -tilt / m)
                hi_yaw = wp.min(hi_yaw, (1.0 - tilt) / m)
        if lo_yaw <= hi_yaw:
            base = wp.clamp(base, lo_yaw, hi_yaw)
            share = 1.0
    for i in range(controls.shape[1]):
        controls[world, i] = 0.0
    for i in range(rows):
        if i < controls.shape[1]:
            thrust = base * t.mix[table, i, 3] + _tilt(t, table, i, torque) / shrink
            thrust = thrust + share * (t.mix[table, i, 2] * yaw)
            controls[world, i] = command_for_thrust(wp.clamp(thrust, 0.0, 1.0), thrust_model_factor) * on
