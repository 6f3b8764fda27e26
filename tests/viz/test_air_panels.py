"""``nexus plot`` draws the wind, the airspeed and the battery when the record has them, and not otherwise.

The flight: the Astro Max with the test pack, ground effect and drag (tests/data/astro_max_air_power.usda) in
``--wind 4@270`` (4 m/s at 10 m from the west, the default 1/7 power law), 1.5 s of the default mission.

By hand, on the first row (the vehicle still resting on its gear, base at z = 0.29994 m, velocity 0):
  the wind is 4 (0.29994 / 10)^0.143 = 4 exp(0.143 ln 0.029994) = 4 exp(-0.501464) = 4 x 0.605645 = 2.42258 m/s,
  blowing east (+x), so the airspeed |v - wind| is 2.42258 m/s and the ground speed 0;
  the full test pack idles at its open-circuit voltage, 12 cells x 4.1 V = 49.2 V, state of charge 1.
On every row the plotted airspeed is |v - wind| of that row's recorded truth velocity and wind.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.viz.test_report import plot_in_process
from tests.worlds.flights import fly

VEHICLE = Path(__file__).resolve().parents[1] / "data" / "astro_max_air_power.usda"


@pytest.fixture(scope="module")
def plotted(tmp_path_factory):
    """The windy battery flight, its record, and the figures ``nexus plot`` drew (name -> figure)."""
    from nexus.viz import report as report_module

    run = fly(tmp_path_factory.mktemp("air_plot") / "run", "--vehicle", str(VEHICLE), "--wind", "4@270",
              "--duration", "1.5")
    drawn, draw = {}, report_module._draw

    def keep(series, px4):
        made = draw(series, px4)
        drawn.update({name: figure for name, (_, figure) in made.items()})
        return made

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(report_module, "_draw", keep)
        made = plot_in_process(run.out)
    assert made.exit_code == 0, made.output
    return run, drawn


def lines(figure, row: int) -> dict[str, np.ndarray]:
    """The y data of panel ``row``'s lines, by legend label (or by order: ``0``, ``1``, ...)."""
    ax = figure.axes[row]
    return {(line.get_label() if not line.get_label().startswith("_") else str(k)): np.asarray(line.get_ydata())
            for k, line in enumerate(ax.get_lines())}


def test_the_air_and_battery_panels_are_drawn_and_embedded(plotted):
    run, drawn = plotted
    for name in ("air", "battery"):
        assert name in drawn
        assert (run.out / "plots" / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "Wind and airspeed" in (run.out / "report.html").read_text()


def test_the_wind_and_airspeed_panels_plot_the_hand_numbers(plotted):
    run, drawn = plotted
    record: pd.DataFrame = run.record
    wind = lines(drawn["air"], 0)
    speed = lines(drawn["air"], 1)
    assert wind["east"][0] == pytest.approx(2.42258, abs=1e-4)
    assert wind["north"][0] == pytest.approx(0.0, abs=1e-6) and wind["up"][0] == 0.0
    assert speed["airspeed |v − wind|"][0] == pytest.approx(2.42258, abs=1e-4)
    assert speed["ground speed |v|"][0] == pytest.approx(0.0, abs=1e-3)
    v = record[[f"body/base.velocity[{i}]" for i in range(3)]].to_numpy(np.float64)
    w = record[[f"wind[{i}]" for i in range(3)]].to_numpy(np.float64)
    assert np.array_equal(speed["airspeed |v − wind|"], np.sqrt(((v - w) ** 2).sum(axis=1)))
    assert np.ptp(speed["airspeed |v − wind|"]) > 0.5  # the climb changes it: a flat line would not be the flight


def test_the_battery_panel_plots_the_recorded_pack(plotted):
    run, drawn = plotted
    voltage, current, charge = (lines(drawn["battery"], row)["0"] for row in range(3))
    assert voltage[0] == pytest.approx(49.2, abs=1e-3) and charge[0] == pytest.approx(1.0, abs=1e-6)
    assert np.array_equal(voltage, run.record["battery.voltage"].to_numpy(np.float64))
    assert np.array_equal(current, run.record["battery.current"].to_numpy(np.float64))
    assert charge[-1] < 1.0


def test_a_run_without_wind_or_battery_gets_neither_panel(short_run):
    from nexus.viz import figures
    from nexus.viz.run_data import load_run
    from nexus.viz.series import flight_series
    from nexus.viz.vehicle_file import read_vehicle_file

    run = load_run(short_run)
    series = flight_series(run, read_vehicle_file(run.vehicle_path(), None))
    assert series.wind is None and series.airspeed is None and series.battery is None
    assert figures.air(series) is None and figures.battery(series) is None
