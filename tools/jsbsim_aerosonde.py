"""Fly the book's Aerosonde in JSBSim and write the traces Nexus's fixed-wing tests compare against.

The aircraft is tools/jsbsim/aerosonde/aerosonde.xml (Beard and McLain's Appendix E Aerosonde with McLain's
propulsion, the numbers of tests/fixed_wing/book_model.py). This script trims it at 25 m/s straight and level
with JSBSim's own trim, then flies, stick fixed and with no autopilot:

- ``hold.csv``: the trim held for 10 s;
- ``doublet.csv``: an elevator doublet, +2 deg (trailing edge down) from 1 s to 2 s and -2 deg from 2 s to
  3 s about the trim, then the trim elevator again, for 60 s;

and ``trim.csv``: JSBSim's trim (alpha, elevator, throttle, theta, thrust) and the conditions it was taken in.
Columns are SI: time [s], u, w [m/s] (body axes, air-relative), q [rad/s], theta [rad], h [m] above sea
level, Va [m/s], alpha [rad], elevator [rad], and the lateral phi [rad], p, r [rad/s] (the book's Aerosonde
has an unstable spiral mode, +0.089 1/s: the trim's small lateral residue grows in a long flight). JSBSim
works in ft, slug and lbf: every conversion is below and in docs/fixed_wing_jsbsim.md.

JSBSim is not one of Nexus's dependencies (the tests read the committed CSVs); to regenerate::

    .venv/bin/pip install -e '.[jsbsim]'
    .venv/bin/python tools/jsbsim_aerosonde.py            # writes tests/data/jsbsim/*.csv
"""

from __future__ import annotations

import argparse
import csv
import math
from pathlib import Path

import jsbsim

REPO = Path(__file__).resolve().parent.parent
AIRCRAFT_ROOT = REPO / "tools" / "jsbsim"
OUT = REPO / "tests" / "data" / "jsbsim"

FT = 0.3048  # [m/ft], exact
SLUG_PER_FT3 = 515.3788183931961  # [kg/m^3 per slug/ft^3]: 14.593902937206364 kg / 0.3048^3 m^3
LBF = 4.4482216152605  # [N/lbf], exact

AIRSPEED = 25.0  # [m/s]
ALTITUDE = 100.0  # [m] above sea level: far from the ground, which the model has no contact points for
# The book's air density [kg/m^3]: JSBSim's standard atmosphere gives 1.2133 kg/m^3 at 100 m, so the
# temperature is offset (atmosphere/delta-T) until the density at the start is the book's.
BOOK_RHO = 1.2682
# JSBSim's gravity is the WGS84 field on a rotating Earth; 49.6 deg N puts the apparent gravity (gravitation
# less the centrifugal term) at the book's 9.81 m/s^2 at 100 m: 9.7803 (1 + 0.0053024 sin^2 - 5.8e-6 sin^2 2phi)
# - 3.086e-6 h = 9.8100 (the normal-gravity formula).
LATITUDE = 49.6  # [deg]
DT = 1.0 / 240.0  # [s] JSBSim's step
ADAMS_BASHFORTH_4 = 5  # JSBSim's integrator codes: 0 none, 1 rectangular Euler, 2 trapezoidal, 3-5 Adams-Bashforth 2-4
SAMPLE_EVERY = 6  # steps between samples: 40 Hz
ELEVATOR_TRAVEL = math.radians(30.0)  # [rad] a command of 1 (aerosonde.xml's aerosurface_scale)
DOUBLET = math.radians(2.0)  # [rad]


def load() -> jsbsim.FGFDMExec:
    """The Aerosonde at 25 m/s, 100 m, wings level, in the book's air density, engines running, not yet trimmed."""
    fdm = jsbsim.FGFDMExec(str(AIRCRAFT_ROOT), None)
    fdm.set_debug_level(0)
    fdm.set_aircraft_path(str(AIRCRAFT_ROOT))
    fdm.set_engine_path(str(AIRCRAFT_ROOT / "aerosonde"))
    fdm.set_systems_path(str(AIRCRAFT_ROOT / "aerosonde"))
    if not fdm.load_model("aerosonde"):
        raise SystemExit(f"{AIRCRAFT_ROOT / 'aerosonde' / 'aerosonde.xml'}: JSBSim could not load the model")
    fdm.set_dt(DT)
    # JSBSim integrates the body rates by rectangular Euler unless told otherwise, which at 240 Hz takes
    # |lambda|^2 dt / 2 = 0.25 1/s off the short period's decay (its damping ratio 0.443 would fly as 0.421):
    # Adams-Bashforth 4 for all four integrations.
    for integrator in ("rate/rotational", "rate/translational", "position/rotational", "position/translational"):
        fdm[f"simulation/integrator/{integrator}"] = ADAMS_BASHFORTH_4
    fdm["ic/h-sl-ft"] = ALTITUDE / FT
    fdm["ic/vt-fps"] = AIRSPEED / FT
    fdm["ic/gamma-deg"] = 0.0
    fdm["ic/lat-geod-deg"] = LATITUDE
    fdm["ic/long-gc-deg"] = 0.0
    fdm["ic/psi-true-deg"] = 0.0
    fdm["fcs/throttle-cmd-norm"] = 0.5
    fdm.run_ic()
    # At fixed pressure the density goes as 1 / T: three passes put it at the book's to 1e-9.
    for _ in range(4):
        rho = fdm["atmosphere/rho-slugs_ft3"] * SLUG_PER_FT3
        fdm["atmosphere/delta-T"] = fdm["atmosphere/delta-T"] + fdm["atmosphere/T-R"] * (rho / BOOK_RHO - 1.0)
        fdm.run_ic()
    fdm["propulsion/set-running"] = -1
    return fdm


def trim(fdm: jsbsim.FGFDMExec) -> dict[str, float]:
    """JSBSim's full trim (udot, vdot, wdot, pdot, qdot, rdot to zero by throttle, pitch, roll and yaw trims, alpha)."""
    fdm.do_trim(1)
    g = fdm["accelerations/gravity-ft_sec2"] * FT
    return {
        "Va": fdm["velocities/vt-fps"] * FT,
        "alpha": fdm["aero/alpha-rad"],
        "elevator": fdm["fcs/elevator-pos-rad"],
        "throttle": fdm["fcs/throttle-cmd-norm"],
        "theta": fdm["attitude/theta-rad"],
        "thrust": fdm["fcs/motor/thrust-lbs"] * LBF,
        "omega": fdm["fcs/motor/omega-rad_sec"],
        "aileron": fdm["fcs/left-aileron-pos-rad"],
        "rudder": fdm["fcs/rudder-pos-rad"],
        "phi": fdm["attitude/phi-rad"],
        "rho": fdm["atmosphere/rho-slugs_ft3"] * SLUG_PER_FT3,
        "gravitation": g,
        "udot": fdm["accelerations/udot-ft_sec2"] * FT,
        "wdot": fdm["accelerations/wdot-ft_sec2"] * FT,
        "qdot": fdm["accelerations/qdot-rad_sec2"],
    }


TRIM_UNITS = {"Va": "m/s", "alpha": "rad", "elevator": "rad", "throttle": "-", "theta": "rad", "thrust": "N",
              "omega": "rad/s", "aileron": "rad", "rudder": "rad", "phi": "rad", "rho": "kg/m^3",
              "gravitation": "m/s^2", "udot": "m/s^2", "wdot": "m/s^2", "qdot": "rad/s^2"}
COLUMNS = ["time", "u", "w", "q", "theta", "h", "Va", "alpha", "elevator", "phi", "p", "r"]


def sample(fdm: jsbsim.FGFDMExec, t: float) -> list[float]:
    """One row of COLUMNS, converted from JSBSim's ft and ft/s."""
    return [t, fdm["velocities/u-aero-fps"] * FT, fdm["velocities/w-aero-fps"] * FT,
            fdm["velocities/q-aero-rad_sec"], fdm["attitude/theta-rad"], fdm["position/h-sl-ft"] * FT,
            fdm["velocities/vt-fps"] * FT, fdm["aero/alpha-rad"], fdm["fcs/elevator-pos-rad"],
            fdm["attitude/phi-rad"], fdm["velocities/p-aero-rad_sec"], fdm["velocities/r-aero-rad_sec"]]


def fly(fdm: jsbsim.FGFDMExec, seconds: float, elevator_offset) -> list[list[float]]:
    """Fly from the trim for ``seconds`` with the elevator at trim + ``elevator_offset(t)`` [rad], stick fixed."""
    rows = []
    steps = round(seconds / DT)
    for k in range(steps + 1):
        t = k * DT
        fdm["fcs/elevator-cmd-norm"] = elevator_offset(t) / ELEVATOR_TRAVEL
        if k % SAMPLE_EVERY == 0:
            rows.append(sample(fdm, t))
        if k < steps:
            fdm.run()
    return rows


def doublet(t: float) -> float:
    """+2 deg from 1 s to 2 s, -2 deg from 2 s to 3 s, 0 otherwise [rad]."""
    if 1.0 <= t < 2.0:
        return DOUBLET
    if 2.0 <= t < 3.0:
        return -DOUBLET
    return 0.0


def write(path: Path, rows: list[list[float]]) -> None:
    with path.open("w", newline="") as f:
        out = csv.writer(f)
        out.writerow(COLUMNS)
        out.writerows([f"{v:.9g}" for v in row] for row in rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=OUT, help="folder for trim.csv, hold.csv, doublet.csv")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)

    fdm = load()
    trimmed = trim(fdm)
    with (args.out / "trim.csv").open("w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["quantity", "value", "unit"])
        for key, value in trimmed.items():
            out.writerow([key, f"{value:.12g}", TRIM_UNITS[key]])
        out.writerow(["jsbsim_version", jsbsim.__version__, "-"])
        out.writerow(["dt", f"{DT:.12g}", "s"])
        out.writerow(["latitude", f"{LATITUDE:.12g}", "deg"])
    write(args.out / "hold.csv", fly(fdm, 10.0, lambda t: 0.0))

    fdm = load()
    trim(fdm)
    write(args.out / "doublet.csv", fly(fdm, 60.0, doublet))
    for key in ("alpha", "elevator", "throttle", "thrust"):
        print(f"JSBSim trim {key} = {trimmed[key]:.7g} {TRIM_UNITS[key]}")
    print(f"wrote {args.out}/trim.csv, hold.csv, doublet.csv")


if __name__ == "__main__":
    main()
