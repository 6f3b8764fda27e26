"""The time series a report draws, computed once from a run: truth, estimate, setpoint and each sensor.

Everything is float64 NumPy in the conventions the estimate uses (NED world,
FRD body, angles in radians); figures convert to degrees for display. A
sensor channel keeps only the ticks on which that sensor sampled, so its
residual against truth is its noise (plus bias and drift), not hold lag.
A signal several sensors write (two IMUs) gives one channel group per
writer, each against truth at its own prim's mount with its own σ.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from nexus.core.loop import DEFAULT_TICK_HZ, tick_ns
from nexus.viz import truth as t
from nexus.viz.run_data import RunData
from nexus.viz.vehicle_file import SensorPrim, VehicleFile

TESLA_PER_GAUSS = 1.0e-4


@dataclass
class Channel:
    """One sensor axis against its truth. ``sigma`` [unit] is the 1σ white-noise band (None: unknown)."""

    #: The record's column prefix of the sensor: its signal (``imu``), or ``imu/<writer>`` when several write it.
    sensor: str
    label: str
    unit: str
    time: np.ndarray
    measured: np.ndarray
    truth: np.ndarray
    sigma: np.ndarray | float | None
    #: Why a residual may sit off zero beyond the white noise (bias, drift), for the report.
    note: str = ""

    @property
    def residual(self) -> np.ndarray:
        return self.measured - self.truth

    def stats(self) -> dict:
        """Samples, residual mean and standard deviation [unit], σ, and the share of residuals within ±1σ."""
        residual = self.residual
        sigma = None if self.sigma is None else float(np.mean(self.sigma))
        within = None
        if self.sigma is not None and np.all(np.asarray(self.sigma) > 0):
            within = float(np.mean(np.abs(residual) <= self.sigma))
        return {"sensor": self.sensor, "channel": self.label, "unit": self.unit, "samples": int(len(residual)),
                "residual_mean": float(np.mean(residual)) if len(residual) else None,
                "residual_std": float(np.std(residual)) if len(residual) else None,
                "sigma": sigma, "within_1sigma": within, "note": self.note}


@dataclass
class FlightSeries:
    time: np.ndarray
    position: np.ndarray  # truth, NED from the NED origin [m]
    attitude: np.ndarray  # truth roll, pitch, yaw [rad]
    rates: np.ndarray  # truth body rates, FRD [rad/s]
    estimate_position: np.ndarray | None = None
    estimate_attitude: np.ndarray | None = None
    estimate_rates: np.ndarray | None = None
    setpoint_position: np.ndarray | None = None
    setpoint_yaw: np.ndarray | None = None
    controls: np.ndarray | None = None  # (rows, rotors) in [0, 1]
    rotor_speeds: np.ndarray | None = None  # (rows, rotors) [rad/s]
    rotor_speed_source: str = ""
    #: The air's velocity at the base, world ENU [m/s] (the record's ``wind``; None: no wind field in the ring).
    wind: np.ndarray | None = None
    #: The base's speed through the air, |v − wind| [m/s], from the truth velocity and the recorded wind.
    airspeed: np.ndarray | None = None
    #: The base's speed over the ground, |v| [m/s] (with ``airspeed``).
    ground_speed: np.ndarray | None = None
    #: The pack's terminal voltage [V], current [A] and state of charge [-] (None: no battery).
    battery: dict[str, np.ndarray] | None = None
    #: Column prefix (``imu``, or ``imu/Imu`` and ``imu/ImuQuiet``) -> its channels, in record order.
    channels: dict[str, list[Channel]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def flight_series(run: RunData, vehicle: VehicleFile) -> FlightSeries:
    pose = run.vector("body/base.pose", 7)
    r_enu_flu = t.rotation_matrices(pose[:, 3:7])
    series = FlightSeries(
        time=run.time.astype(np.float64),
        position=t.position_ned(pose[:, :3], run.ned_origin_enu),
        attitude=t.euler_zyx(t.ned_frd_from_enu_flu(r_enu_flu)),
        rates=(t.body_rates_frd(r_enu_flu, run.vector("body/base.angular_velocity", 3))
               if run.has("body/base.angular_velocity[0]") else np.full((run.rows, 3), np.nan)),
    )
    if vehicle.note:
        series.notes.append(vehicle.note)
    if run.has("estimate.position[0]"):
        series.estimate_position = run.vector("estimate.position", 3)
        series.estimate_attitude = t.euler_zyx(t.rotation_matrices(run.vector("estimate.attitude", 4)))
        series.estimate_rates = run.vector("estimate.rates", 3)
    if run.has("setpoint.position[0]"):
        series.setpoint_position = run.vector("setpoint.position", 3)
    if run.has("setpoint.yaw"):
        series.setpoint_yaw = run.scalar("setpoint.yaw")
    _motors(series, run, vehicle)
    _air_and_battery(series, run)
    gravity = float(run.info.get("gravity_m_s2", t.STANDARD_GRAVITY))
    for prefix, writer in sensor_writers(run, "imu") if run.has("body/base.accel[0]") else ():
        series.channels[prefix] = _imu(run, prefix, vehicle.sensor("imu", writer), r_enu_flu, gravity)
    for prefix, writer in sensor_writers(run, "mag"):
        series.channels[prefix] = _mag(run, prefix, vehicle.sensor("mag", writer), r_enu_flu)
    for prefix, writer in sensor_writers(run, "baro"):
        series.channels[prefix] = _baro(run, prefix, vehicle.sensor("baro", writer), pose, r_enu_flu)
    for prefix, writer in sensor_writers(run, "gps"):
        series.channels[prefix] = _gps(run, prefix, vehicle.sensor("gps", writer), pose, r_enu_flu)
    for prefix in series.channels:
        signal, _, writer = prefix.partition("/")
        if writer and vehicle.sensors and vehicle.sensor(signal, writer) is None:
            series.notes.append(f"{vehicle.path} has no {signal} prim named '{writer}' (the record's writer of "
                                f"{prefix}.*): its channels have no noise band and assume a mount at the body origin")
    return series


def _air_and_battery(series: FlightSeries, run: RunData) -> None:
    """The wind and the airspeed (relative air speed, worked out here from the truth velocity and the recorded
    wind of the same row: no airspeed sensor needed), and the pack's voltage, current and charge."""
    if run.has("wind[0]", "wind[1]", "wind[2]"):
        series.wind = run.vector("wind", 3)
        if run.has("body/base.velocity[0]"):
            velocity = run.vector("body/base.velocity", 3)
            series.airspeed = np.linalg.norm(velocity - series.wind, axis=1)
            series.ground_speed = np.linalg.norm(velocity, axis=1)
    names = ("voltage", "current", "state_of_charge")
    if run.has(*(f"battery.{name}" for name in names)):
        series.battery = {name: run.scalar(f"battery.{name}") for name in names}


def sensor_writers(run: RunData, signal: str) -> list[tuple[str, str]]:
    """(column prefix, writer name) of each sensor that wrote ``signal``, in record order.

    One writer: ``[("imu", "")]``. Several: ``imu/<writer>`` each, the writer named as nexus/record/recorder.py
    names it (its prim's last path element, or whole path when two end the same).
    """
    if run.has(f"{signal}.time"):
        return [(signal, "")]
    head, tail = f"{signal}/", ".time"
    return [(name[:-len(tail)], name[len(head):-len(tail)]) for name in run.columns
            if name.startswith(head) and name.endswith(tail)]


def _motors(series: FlightSeries, run: RunData, vehicle: VehicleFile) -> None:
    rotors = len(vehicle.escs) or 4
    if not run.has("controls[0]"):
        return
    series.controls = np.stack([run.scalar(f"controls[{i}]") for i in range(rotors)], axis=1)
    measured = [name for name in run.columns if name.startswith("joints/") and name.endswith(".speed")]
    if vehicle.escs:
        if "tick_ns" in run.info:
            dt = float(run.info["tick_ns"]) * 1e-9
        else:  # a run.json from before it held the tick: the run configuration's default
            dt = tick_ns(DEFAULT_TICK_HZ) * 1e-9
        series.rotor_speeds = esc_speed_targets(run.columns, vehicle.escs, dt)
        series.rotor_speed_source = ("the ESCs' lagged speed targets, worked out from the recorded controls with the "
                                     "ESC model of nexus/plant/esc.py and the vehicle file's ESC prims "
                                     "(the record holds no rotor speed column)")
    elif measured:
        series.rotor_speeds = np.stack([run.scalar(name) for name in sorted(measured)], axis=1)
        series.rotor_speed_source = "the record's joint speed columns"


def esc_speed_targets(columns: dict, escs: list[dict], dt: float) -> np.ndarray:
    """Each ESC's lagged speed target [rad/s] per row, as ``nexus/plant/esc.py`` computes it from ``controls``.

    ``thrust = (1 − f)·u + f·u²``, ``ω_cmd = max(ω_min, ω_max·√thrust)`` (0 when ``u ≤ 0``), then a first-order
    lag ``ω += (ω_cmd − ω)·dt/(τ + dt)`` with τ up or down. Motors start stopped.
    """
    rows = len(columns["time"])
    speeds = np.zeros((rows, len(escs)))
    for k, esc in enumerate(escs):
        u = np.clip(columns[f"controls[{int(esc['channel'])}]"].astype(np.float64), 0.0, 1.0)
        f = esc["thrust_model_factor"]
        commanded = np.maximum(esc["min_speed"], esc["max_speed"] * np.sqrt((1.0 - f) * u + f * u * u))
        commanded[u <= 0.0] = 0.0
        current = 0.0
        for i in range(rows):
            tau = esc["tau_up"] if commanded[i] >= current else esc["tau_down"]
            current += (commanded[i] - current) * dt / (tau + dt)
            speeds[i, k] = current
    return speeds


def _sigma(prim: SensorPrim | None, name: str) -> float | None:
    return None if prim is None else prim.sigma.get(name)


def _mount(prim: SensorPrim | None) -> tuple[float, float, float]:
    return prim.mount if prim else (0.0, 0.0, 0.0)


def _bias_note(prim: SensorPrim | None, kind: str) -> str:
    bias = _sigma(prim, f"nexus:{kind}BiasSigma") or 0.0
    return f"turn-on bias σ {bias:g} shifts the residual" if bias > 0 else ""


def _imu(run, prefix, prim, r_enu_flu, gravity) -> list[Channel]:
    rows = run.new_samples(prefix)
    com = run.vector("body/base.com", 3) if run.has("body/base.com[0]") else np.zeros((run.rows, 3))
    force, rate = t.imu_truth(r_enu_flu[rows], run.vector("body/base.accel", 3)[rows],
                              run.vector("body/base.angular_accel", 3)[rows],
                              run.vector("body/base.angular_velocity", 3)[rows], com[rows], _mount(prim),
                              gravity)
    accel, gyro = run.vector(f"{prefix}.accel", 3)[rows], run.vector(f"{prefix}.gyro", 3)[rows]
    time = run.time[rows]
    sa, sg = _sigma(prim, "nexus:accelNoiseSigma"), _sigma(prim, "nexus:gyroNoiseSigma")
    return [
        *[Channel(prefix, f"accel {axis}", "m/s²", time, accel[:, i], force[:, i], sa, _bias_note(prim, "accel"))
          for i, axis in enumerate("xyz")],
        *[Channel(prefix, f"gyro {axis}", "rad/s", time, gyro[:, i], rate[:, i], sg, _bias_note(prim, "gyro"))
          for i, axis in enumerate("xyz")],
    ]


def _mag(run, prefix, prim, r_enu_flu) -> list[Channel]:
    origin = run.info.get("geodetic_origin") or {}
    if not origin:
        return []
    field_ned = t.earth_field_ned(origin, float(run.info.get("decimal_year") or 2026.0))
    rows = run.new_samples(prefix)
    truth = t.mag_truth(r_enu_flu[rows], field_ned) / TESLA_PER_GAUSS
    measured = run.vector(f"{prefix}.field", 3)[rows] / TESLA_PER_GAUSS
    sigma = _sigma(prim, "nexus:noiseSigma")
    return [Channel(prefix, f"field {axis}", "gauss", run.time[rows], measured[:, i], truth[:, i], sigma)
            for i, axis in enumerate("xyz")]


def _baro(run, prefix, prim, pose, r_enu_flu) -> list[Channel]:
    origin = run.info.get("geodetic_origin") or {}
    if not origin or not run.has(f"{prefix}.pressure_altitude"):
        return []
    rows = run.new_samples(prefix)
    sensor_up = t.mount_position_enu(pose[rows, :3], r_enu_flu[rows], _mount(prim))[:, 2]
    truth = float(origin["altitude"]) + sensor_up - run.ned_origin_enu[2]
    sigma_pa = _sigma(prim, "nexus:noiseSigma")
    sigma = None if sigma_pa is None else sigma_pa * t.altitude_per_pascal(truth)
    return [Channel(prefix, "pressure altitude", "m", run.time[rows], run.scalar(f"{prefix}.pressure_altitude")[rows],
                    truth, sigma, f"σ = {sigma_pa:g} Pa through the ISA's dh/dp" if sigma_pa is not None else "")]


def _gps(run, prefix, prim, pose, r_enu_flu) -> list[Channel]:
    origin = run.info.get("geodetic_origin") or {}
    if not origin:
        return []
    rows = run.new_samples(prefix)
    antenna = t.mount_position_enu(pose[rows, :3], r_enu_flu[rows], _mount(prim))
    truth = t.position_ned(antenna, run.ned_origin_enu)
    measured = t.geodetic_to_ned(run.columns[f"{prefix}.latitude"][rows], run.columns[f"{prefix}.longitude"][rows],
                                 run.columns[f"{prefix}.altitude"][rows], origin)
    eph = run.scalar(f"{prefix}.eph")[rows] if run.has(f"{prefix}.eph") else None
    epv = run.scalar(f"{prefix}.epv")[rows] if run.has(f"{prefix}.epv") else None
    note = "σ = the receiver's eph/epv (white noise and drift); the drift is slow, so residuals wander"
    return [Channel(prefix, f"position {axis}", "m", run.time[rows], measured[:, i], truth[:, i],
                    eph if i < 2 else epv, note) for i, axis in enumerate("NED")]
