"""Nexus beside RotorPy: the Crazyflie's open-loop step responses and Dryden turbulence (docs/vehicles.md, docs/air.md).

RotorPy is a peer, not a dependency: it lives in a venv of its own, and this one script runs in each venv in turn,
the two halves talking through JSON files. From the repository root:

    export PYTHONPATH=$PWD
    /work/main/.venv/bin/python tools/rotorpy_compare.py nexus /tmp/nexus_side.json
    /tmp/rotorpy_venv/bin/python tools/rotorpy_compare.py rotorpy /tmp/nexus_side.json /tmp/rotorpy_side.json
    /work/main/.venv/bin/python tools/rotorpy_compare.py report /tmp/nexus_side.json /tmp/rotorpy_side.json

``nexus`` flies vehicles/crazyflie.usda open loop (the hold controller: fixed ESC commands, no feedback) from hover
at 10 m, one world per experiment, and writes the vehicle's parameters as Nexus built them (whole mass and inertia
about the centre of mass, rotor positions, spins, kT, kQ, motor time constant, gravity, tick) with the responses;
it also runs Nexus's Dryden generator (moderate, 10 m, 20 m/s) and writes its sigma and Welch PSD in bands.
``rotorpy`` builds RotorPy's ``Multirotor`` from those same parameters and commands the same rotor speeds
(``cmd_motor_speeds``: no RotorPy controller either), and runs RotorPy's ``DrydenGust`` at the same height and
intensities (128 series of 120 s in a Python loop: about 2 minutes of one core). ``report`` prints the tables.
Needs numpy only besides each side's simulator. Ctrl-C exits 130.
"""

from __future__ import annotations

import json
import math
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

#: One control tick [s] (Nexus's default 250 Hz); both sides step at it.
TICK_S = 0.004
#: Length of each open-loop response [s].
DURATION_S = 0.5
#: The experiments: name, and each rotor's speed as a fraction of hover (PX4 order: front right, rear left,
#: front left, rear right; filled in from the rotor positions and spins by :func:`step_speeds`).
STEPS = {
    "hover": "all rotors at hover speed (the baseline, subtracted from the others)",
    "collective": "all rotors +1 % speed (thrust +2 %): climb",
    "roll": "left rotors +0.1 %, right rotors -0.1 % speed: roll to the right",
    "yaw": "counter-clockwise rotors -1 %, clockwise +1 % speed: yaw to the left",
}
#: Dryden check: moderate turbulence at 10 m in a 20 m/s mean wind (as tests/air/test_dryden.py).
HEIGHT_M, AIRSPEED, LEVEL = 10.0, 20.0, "moderate"
TURB_WORLDS, TURB_TICKS = 128, 30_000
BAND_EDGES = np.geomspace(0.25, 25.0, 11)


def step_speeds(name: str, hover: float, positions: np.ndarray, spins: np.ndarray) -> np.ndarray:
    """Each rotor's commanded speed [rad/s] in experiment ``name`` (positions FLU about the centre of mass [m])."""
    left = np.sign(positions[:, 1])  # +1 on the left (y > 0)
    scale = {
        "hover": np.zeros(len(spins)),
        "collective": np.full(len(spins), 0.01),
        "roll": 0.001 * left,
        "yaw": -0.01 * spins,
    }[name]
    return hover * (1.0 + scale)


def welch(x: np.ndarray, fs: float, nperseg: int) -> tuple[np.ndarray, np.ndarray]:
    """One-sided Welch PSD of each column of ``x`` (ticks x series), averaged: Hann window, 50 % overlap."""
    window = np.hanning(nperseg)
    scale = 1.0 / (fs * (window**2).sum())
    total, count = np.zeros(nperseg // 2 + 1), 0
    for s in range(0, x.shape[0] - nperseg + 1, nperseg // 2):
        segment = x[s:s + nperseg] - x[s:s + nperseg].mean(axis=0)
        spectrum = np.abs(np.fft.rfft(segment * window[:, None], axis=0)) ** 2 * scale
        spectrum[1:-1] *= 2.0
        total += spectrum.sum(axis=1)
        count += segment.shape[1]
    return np.fft.rfftfreq(nperseg, 1.0 / fs), total / count


def dryden_closed_form(f: np.ndarray, axis: int, sigma: float, length: float, airspeed: float) -> np.ndarray:
    """MIL-F-8785C's one-sided spectra per Hz: u first-order, v and w second-order."""
    t = length / airspeed
    x = (2 * math.pi * f * t) ** 2
    if axis == 0:
        return 4 * sigma**2 * t / (1 + x)
    return 2 * sigma**2 * t * (1 + 3 * x) / (1 + x) ** 2


def turbulence_stats(series: np.ndarray, sigma, length, airspeed: float) -> dict:
    """sigma of each axis and the Welch PSD / closed form in 10 log bands over 0.25-25 Hz; series (ticks, n, 3)."""
    out = {"sigma": series.reshape(-1, 3).std(axis=0).tolist(), "bands": []}
    for axis in range(3):
        f, psd = welch(series[..., axis], 1.0 / TICK_S, 8192)
        ratios = []
        for lo, hi in zip(BAND_EDGES[:-1], BAND_EDGES[1:]):
            inside = (f >= lo) & (f < hi)
            ratios.append(float(psd[inside].mean() / dryden_closed_form(f[inside], axis, sigma[axis], length[axis],
                                                                        airspeed).mean()))
        out["bands"].append(ratios)
    return out


# ---------------------------------------------------------------------------------------------------- Nexus side

def nexus_side(out: Path) -> None:
    sys.path.insert(0, str(ROOT))
    import nexus  # noqa: PLC0415
    from nexus.control.hold import HoldControls  # noqa: PLC0415
    from nexus.core import Loop  # noqa: PLC0415
    from nexus.plant.esc import Esc  # noqa: PLC0415
    from nexus.plant.hover import command_for_speed, hover_speed  # noqa: PLC0415
    from nexus.plant.physics import Physics  # noqa: PLC0415
    from nexus.plant.propeller import Propeller  # noqa: PLC0415
    from nexus.runtime.assembly import assemble  # noqa: PLC0415

    names = list(STEPS)
    vehicle = assemble(ROOT / "vehicles" / "crazyflie.usda", "empty", device="cpu", controller="hold",
                       worlds=len(names))
    plant = vehicle.plant
    parts = [c for c in vehicle.components if isinstance(c, (Physics, Esc, Propeller, HoldControls))]
    loop = Loop(parts, device="cpu", mode="eager", worlds=len(names)).build()
    assert abs(loop.dt_ns * 1e-9 - TICK_S) < 1e-12, "the tick is not 4 ms"

    # The whole vehicle as one rigid body, about its centre of mass (world 0; the model is at rest and level).
    model = plant.model
    per = plant.bodies_per_world
    mass = model.body_mass.numpy()[:per].astype(np.float64)
    q = plant.state.body_q.numpy()[:per].astype(np.float64)
    com_local = model.body_com.numpy()[:per].astype(np.float64)
    inertia_local = model.body_inertia.numpy()[:per].astype(np.float64)
    com_world = q[:, :3] + com_local  # level model: body frames are world-aligned
    com = (mass[:, None] * com_world).sum(axis=0) / mass.sum()
    inertia = np.zeros((3, 3))
    for b in range(per):
        r = com_world[b] - com
        inertia += inertia_local[b] + mass[b] * (r @ r * np.eye(3) - np.outer(r, r))
    rotor_pos = np.array([com_world[r.body] - com for r in plant.rotors])
    spins = np.array([r.spin for r in plant.rotors], dtype=float)
    esc = plant.rotors[0].esc
    hover = hover_speed(plant)

    speeds = np.array([step_speeds(n, hover, rotor_pos, spins) for n in names])
    commands = np.array([[command_for_speed(plant, s) for s in row] for row in speeds])
    plant.reset(base_position=(0.0, 0.0, 10.0), rotor_speed=hover)
    vehicle.controller.set(commands)
    base = plant.base
    samples = []

    def sample() -> None:
        bq = plant.state.body_q.numpy().reshape(len(names), per, 7)[:, base].astype(np.float64)
        samples.append(bq)

    sample()
    ticks = int(round(DURATION_S / TICK_S))
    for _ in range(ticks):
        loop.tick()
        sample()
    poses = np.array(samples)  # (ticks + 1, experiments, 7): position, quaternion x y z w

    wind = nexus_turbulence()
    data = {
        "nexus_version": getattr(nexus, "__version__", "?"),
        "vehicle": "vehicles/crazyflie.usda",
        "tick_s": TICK_S,
        "gravity": float(plant.gravity),
        "mass": float(mass.sum()),
        "inertia": inertia.tolist(),
        "rotor_pos": rotor_pos.tolist(),
        "spins": spins.tolist(),
        "thrust_coefficient": [r.thrust_coefficient for r in plant.rotors],
        "torque_coefficient": [r.torque_coefficient for r in plant.rotors],
        "rotor_inertia": [r.inertia for r in plant.rotors],
        "tau_up": float(esc["tau_up"]), "tau_down": float(esc["tau_down"]),
        "max_speed": float(esc["max_speed"]),
        "hover_speed": hover,
        "experiments": names,
        "speeds": speeds.tolist(),
        "commands": commands.tolist(),
        "responses": responses(poses),
        "turbulence": wind,
    }
    out.write_text(json.dumps(data, indent=1))
    print(f"wrote {out}")


def nexus_turbulence() -> dict:
    """Nexus's Dryden generator at HEIGHT_M in AIRSPEED from the west, LEVEL: sigma and PSD bands."""
    from nexus.air.dryden import low_altitude_scales  # noqa: PLC0415
    from nexus.air.wind_field import WindField  # noqa: PLC0415
    from tests.air.conftest import wind_series  # noqa: PLC0415

    w20 = {"light": 15, "moderate": 30, "severe": 45}[LEVEL] * 1852 / 3600
    sigma, length = low_altitude_scales(HEIGHT_M, w20)
    field = WindField(speed=AIRSPEED, direction=270.0, reference_height=HEIGHT_M, turbulence=LEVEL)
    started = time.perf_counter()
    wind = wind_series(field, TURB_TICKS + 1, worlds=TURB_WORLDS, seed=3, position=(0.0, 0.0, HEIGHT_M))[1:]
    wind = np.asarray(wind, dtype=np.float64)
    wind[..., 0] -= AIRSPEED
    print(f"Nexus Dryden: {TURB_WORLDS} worlds x {TURB_TICKS * TICK_S:.0f} s in {time.perf_counter() - started:.0f} s")
    stats = turbulence_stats(wind, sigma, length, AIRSPEED)
    stats.update(asked_sigma=[float(s) for s in sigma], length=[float(v) for v in length], height=HEIGHT_M,
                 airspeed=AIRSPEED, level=LEVEL, series=f"{TURB_WORLDS} x {TURB_TICKS} ticks")
    return stats


def responses(poses: np.ndarray) -> dict:
    """Climb [m], roll and yaw [rad] of each experiment over time, each less the hover baseline's (world 0)."""
    z = poses[:, :, 2] - poses[0, :, 2]
    x, y, qz, w = poses[:, :, 3], poses[:, :, 4], poses[:, :, 5], poses[:, :, 6]
    roll = np.arctan2(2 * (w * x + y * qz), 1 - 2 * (x * x + y * y))
    yaw = np.unwrap(np.arctan2(2 * (w * qz + x * y), 1 - 2 * (y * y + qz * qz)), axis=0)
    yaw = yaw - yaw[0]
    return {"climb": (z - z[:, :1]).T.tolist(), "roll": (roll - roll[:, :1]).T.tolist(),
            "yaw": (yaw - yaw[:, :1]).T.tolist()}


# -------------------------------------------------------------------------------------------------- RotorPy side

def rotorpy_side(nexus_json: Path, out: Path) -> None:
    try:
        import rotorpy  # noqa: PLC0415
        from rotorpy.vehicles.crazyflie_params import quad_params as cf  # noqa: PLC0415
        from rotorpy.vehicles.multirotor import Multirotor  # noqa: PLC0415
        from rotorpy.wind.dryden_winds import DrydenGust  # noqa: PLC0415
    except ImportError as error:
        sys.exit(f"rotorpy_compare.py rotorpy: RotorPy is not importable here ({error}); run it with the venv that "
                 "has it, e.g. python3 -m venv /tmp/rotorpy_venv && /tmp/rotorpy_venv/bin/pip install rotorpy "
                 "torch==2.13.0")
    from importlib.metadata import version  # noqa: PLC0415

    ours = json.loads(nexus_json.read_text())
    inertia = np.array(ours["inertia"])
    spins = np.array(ours["spins"])
    params = {
        "mass": ours["mass"],
        "Ixx": inertia[0, 0], "Iyy": inertia[1, 1], "Izz": inertia[2, 2],
        "Ixy": inertia[0, 1], "Iyz": inertia[1, 2], "Ixz": inertia[0, 2],
        "num_rotors": len(spins),
        "rotor_pos": {f"r{i + 1}": np.array(p) for i, p in enumerate(ours["rotor_pos"])},
        # RotorPy's rotor_directions sign the yaw moment on the body: a counter-clockwise rotor (Nexus spin +1)
        # pushes the body clockwise, hence the minus.
        "rotor_directions": -spins,
        "rI": np.zeros(3),
        "c_Dx": 0.0, "c_Dy": 0.0, "c_Dz": 0.0,
        "k_eta": ours["thrust_coefficient"][0], "k_m": ours["torque_coefficient"][0],
        "k_d": 0.0, "k_z": 0.0, "k_h": 0.0, "k_flap": 0.0,
        "tau_m": ours["tau_up"],
        "rotor_speed_min": 0.0, "rotor_speed_max": ours["max_speed"],
        "motor_noise_std": 0.0,
    }
    hover = ours["hover_speed"]
    results = {"rotorpy_version": version("rotorpy"), "experiments": ours["experiments"], "poses": [],
               "crazyflie_params": {k: (v.tolist() if isinstance(v, np.ndarray) else
                                        {kk: vv.tolist() for kk, vv in v.items()} if isinstance(v, dict) else v)
                                    for k, v in cf.items()}}
    ticks = int(round(DURATION_S / ours["tick_s"]))
    for speeds in ours["speeds"]:
        state = {"x": np.array([0.0, 0.0, 10.0]), "v": np.zeros(3), "q": np.array([0.0, 0.0, 0.0, 1.0]),
                 "w": np.zeros(3), "wind": np.zeros(3), "rotor_speeds": np.full(len(spins), hover)}
        vehicle = Multirotor(params, initial_state=state, control_abstraction="cmd_motor_speeds", aero=False,
                             integrator_kwargs={"method": "RK45", "rtol": 1e-9, "atol": 1e-12})
        # RotorPy fixes g = 9.81; fly both in Nexus's gravity so that hover is hover on both sides.
        vehicle.g = ours["gravity"]
        vehicle.weight = np.array([0.0, 0.0, -vehicle.mass * vehicle.g])
        control = {"cmd_motor_speeds": np.array(speeds)}
        poses = [np.concatenate([state["x"], state["q"]])]
        for _ in range(ticks):
            state = vehicle.step(state, control, ours["tick_s"])
            poses.append(np.concatenate([state["x"], state["q"]]))
        results["poses"].append(poses)
    poses = np.transpose(np.array(results.pop("poses")), (1, 0, 2))
    results["responses"] = responses(poses)
    results["turbulence"] = rotorpy_turbulence(DrydenGust, ours["turbulence"])
    out.write_text(json.dumps(results, indent=1))
    print(f"wrote {out}")


def rotorpy_turbulence(DrydenGust, ours: dict) -> dict:
    """RotorPy's DrydenGust asked for the same sigmas at the same height, in the same mean wind: its statistics."""
    sigma, length = np.array(ours["asked_sigma"]), np.array(ours["length"])
    np.random.seed(3)
    series = np.zeros((TURB_TICKS, TURB_WORLDS, 3))
    started = time.perf_counter()
    for n in range(TURB_WORLDS):
        gust = DrydenGust(dt=TICK_S, avg_wind=np.array([AIRSPEED, 0.0, 0.0]), sig_wind=sigma, altitude=HEIGHT_M)
        for k in range(TURB_TICKS):
            series[k, n] = gust.update(k * TICK_S, np.zeros(3))
        if (n + 1) % 16 == 0:
            print(f"RotorPy Dryden: {n + 1} of {TURB_WORLDS} series", file=sys.stderr, flush=True)
    series[..., 0] -= AIRSPEED
    seconds = time.perf_counter() - started
    print(f"RotorPy Dryden: {TURB_WORLDS} series x {TURB_TICKS * TICK_S:.0f} s in {seconds:.0f} s")
    stats = turbulence_stats(series, sigma, length, AIRSPEED)
    stats["stationary_sigma"] = stationary_sigma(DrydenGust, sigma)
    stats["design_md_runs"] = design_md_runs(DrydenGust)
    return stats


def design_md_runs(DrydenGust) -> list[list[float]]:
    """DESIGN.md's check again, over 8 seeds: sigma [m/s] of single 60 s series from rest, asked (1, 1, 0.5) at 10 m."""
    out = []
    for seed in range(8):
        np.random.seed(seed)
        gust = DrydenGust(dt=TICK_S, avg_wind=np.array([6.0, 0.0, 0.0]), sig_wind=np.array([1.0, 1.0, 0.5]),
                          altitude=10.0)
        series = np.array([gust.update(k * TICK_S, np.zeros(3)) for k in range(int(60.0 / TICK_S))])
        out.append(series.std(axis=0).tolist())
    return out


def stationary_sigma(DrydenGust, sigma: np.ndarray) -> list[float]:
    """The standard deviation RotorPy's filter settles at: its own recursion fed one unit impulse, summed in squares.

    RotorPy draws uniform(-1, 1) noise (variance 1/3) inside its filter; for the impulse response the draw is
    replaced by 1 then 0 (numpy's uniform patched for this call only), so the filter itself is RotorPy's code."""
    gust = DrydenGust(dt=TICK_S, avg_wind=np.zeros(3), sig_wind=sigma, altitude=HEIGHT_M)
    real = np.random.uniform
    feed = iter([1.0, 1.0, 1.0])  # the first step's draw on each axis
    np.random.uniform = lambda *a, **k: next(feed, 0.0)
    try:
        total = np.zeros(3)
        for _ in range(int(2000.0 / TICK_S)):  # 2000 s: far past the filter's time constant (2 L / 1 m/s)
            total += gust.update(0.0, np.zeros(3)) ** 2
    finally:
        np.random.uniform = real
    return np.sqrt(total / 3.0).tolist()


# -------------------------------------------------------------------------------------------------------- report

def report(nexus_json: Path, rotorpy_json: Path) -> None:
    ours, theirs = json.loads(nexus_json.read_text()), json.loads(rotorpy_json.read_text())
    print(f"RotorPy {theirs['rotorpy_version']}; Nexus {ours['nexus_version']}, {ours['vehicle']}")
    cf = theirs["crazyflie_params"]
    inertia = np.array(ours["inertia"])
    arm = float(np.hypot(*np.array(ours["rotor_pos"])[0, :2]))
    print("\nParameters: Nexus (used on both sides) | RotorPy's own crazyflie_params")
    rows = [("mass [kg]", ours["mass"], cf["mass"]),
            ("Ixx, Iyy, Izz [kg m^2]", np.diag(inertia).round(9).tolist(), [cf["Ixx"], cf["Iyy"], cf["Izz"]]),
            ("arm [m]", round(arm, 5), float(np.hypot(*np.array(cf["rotor_pos"]["r1"])[:2]))),
            ("kT [N/(rad/s)^2]", ours["thrust_coefficient"][0], cf["k_eta"]),
            ("kQ [N m/(rad/s)^2]", ours["torque_coefficient"][0], cf["k_m"]),
            ("motor time constant [s]", ours["tau_up"], cf["tau_m"]),
            ("max rotor speed [rad/s]", ours["max_speed"], cf["rotor_speed_max"]),
            ("hover speed [rad/s]", round(ours["hover_speed"], 2),
             round(math.sqrt(cf["mass"] * 9.81 / (4 * cf["k_eta"])), 2))]
    def show(v):
        return ", ".join(f"{x:.6g}" for x in v) if isinstance(v, list) else f"{v:.6g}"

    for name, a, b in rows:
        print(f"| {name} | {show(a)} | {show(b)} |")
    print("\nOpen-loop steps from hover, each less its side's hover baseline; peak = RotorPy's value at the end")
    print("| step | quantity | Nexus at 0.5 s | RotorPy at 0.5 s | ratio | RMS difference / peak "
          "| delay that fits best [ms] |")
    t = np.arange(len(ours["responses"]["climb"][0])) * ours["tick_s"]
    for e, name in enumerate(ours["experiments"]):
        if name == "hover":
            for key in ("climb", "roll", "yaw"):
                a, b = np.array(ours["responses"][key][e]), np.array(theirs["responses"][key][e])
                print(f"| hover (baseline) | {key} | {a[-1]:.3g} | {b[-1]:.3g} | – | – | – |")
            continue
        key = {"collective": "climb", "roll": "roll", "yaw": "yaw"}[name]
        a = np.array(ours["responses"][key][e]) - np.array(ours["responses"][key][0])
        b = np.array(theirs["responses"][key][e]) - np.array(theirs["responses"][key][0])
        peak = abs(b[-1])
        rms = float(np.sqrt(np.mean((a - b) ** 2)) / peak)
        # Nexus's curve against RotorPy's delayed by d: the d (0-20 ms, 0.1 ms steps) with the least RMS difference.
        delays = np.arange(0.0, 0.0201, 0.0001)
        fits = [np.sqrt(np.mean((a - np.interp(t - d, t, b, left=0.0)) ** 2)) for d in delays]
        delay = float(delays[int(np.argmin(fits))])
        unit = "m" if key == "climb" else "rad"
        print(f"| {name} | {key} [{unit}] | {a[-1]:.5g} | {b[-1]:.5g} | {a[-1] / b[-1]:.4f} | {rms:.2%} | "
              f"{delay * 1e3:.1f} |")
    tn, tr = ours["turbulence"], theirs["turbulence"]
    asked = np.array(tn["asked_sigma"])
    print(f"\nDryden, {tn['level']} at {tn['height']} m in {tn['airspeed']} m/s, {tn['series']} each side; asked sigma "
          f"u v w {np.round(asked, 4).tolist()} m/s, L {np.round(tn['length'], 3).tolist()} m")
    print("| generator | sigma / asked: u, v, w | PSD / MIL-F-8785C over 0.25-25 Hz (10 bands), min-max: u; v; w |")
    for label, s in (("Nexus", tn), ("RotorPy DrydenGust", tr)):
        ratio = np.array(s["sigma"]) / asked
        bands = "; ".join(f"{min(b):.3g}-{max(b):.3g}" for b in s["bands"])
        print(f"| {label} | {', '.join(f'{r:.4g}' for r in ratio)} | {bands} |")
    print("RotorPy stationary sigma / asked (its filter's impulse response): "
          + ", ".join(f"{x:.4g}" for x in np.array(tr["stationary_sigma"]) / asked)
          + f"; sqrt(dt / (3 pi)) = {math.sqrt(ours['tick_s'] / (3 * math.pi)):.4g} "
          "(uniform(-1, 1) noise, variance 1/3, "
          "where a filter in this form needs variance pi / dt)")
    runs = np.array(tr["design_md_runs"])
    print("RotorPy, one 60 s series from rest asked (1, 1, 0.5) m/s at 10 m (DESIGN.md's check), 8 seeds: sigma "
          f"u {runs[:, 0].min():.4f}-{runs[:, 0].max():.4f}, v {runs[:, 1].min():.4f}-{runs[:, 1].max():.4f}, "
          f"w {runs[:, 2].min():.4f}-{runs[:, 2].max():.4f} m/s")


def main(argv: list[str]) -> None:
    if len(argv) == 2 and argv[0] == "nexus":
        nexus_side(Path(argv[1]))
    elif len(argv) == 3 and argv[0] == "rotorpy":
        rotorpy_side(Path(argv[1]), Path(argv[2]))
    elif len(argv) == 3 and argv[0] == "report":
        report(Path(argv[1]), Path(argv[2]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except KeyboardInterrupt:
        sys.exit(130)
