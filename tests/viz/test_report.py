"""``nexus plot``: the report of a real short flight, checked by numbers and in a real browser.

The sensor checks compare the record's samples with truth worked out on the
host: if the report's frames were wrong the residuals would be metres or
degrees, not the vehicle file's noise σ.
"""

import json
import os
import signal
from dataclasses import replace

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.viz.browser import Browser, chromium_path
from tests.viz.ulog_file import write_ulog

FIGURES = ("position", "attitude", "rates", "motors", "imu", "mag", "baro", "gps")


@pytest.fixture(scope="module")
def plotted(short_run):
    """``nexus plot`` of the short run, keeping the matplotlib figures it drew (name -> figure) for their artists."""
    from nexus.viz import report as report_module

    drawn, draw = {}, report_module._draw

    def keep(series, px4):
        made = draw(series, px4)
        drawn.update({name: figure for name, (_, figure) in made.items()})
        return made

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(report_module, "_draw", keep)
        made = plot_in_process(short_run)  # the process entry point is exercised by the viewer test
    assert made.exit_code == 0, made.output
    return short_run, made, drawn


@pytest.fixture(scope="module")
def report(plotted):
    short_run, made, _ = plotted
    stats = json.loads((short_run / "plots" / "sensor_stats.json").read_text())
    return short_run, made, {(s["sensor"], s["channel"]): s for s in stats}


def test_plot_writes_every_figure_and_one_report(report):
    run, made, _ = report
    for name in FIGURES:
        png = run / "plots" / f"{name}.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name
    assert f"report: {run / 'report.html'}" in made.stdout
    page = (run / "report.html").read_text()
    assert page.count("data:image/png;base64,") == len(FIGURES)  # self-contained: every figure embedded
    assert "exit reason" in page and "done" in page


@pytest.mark.parametrize("channel, sigma", [
    (("imu", "accel x"), 0.00637), (("imu", "accel z"), 0.00637),  # nexus:accelNoiseSigma [m/s²], vehicle file
    (("imu", "gyro x"), 0.0008726646), (("imu", "gyro z"), 0.0008726646),  # nexus:gyroNoiseSigma [rad/s]
    (("mag", "field x"), 0.005), (("mag", "field z"), 0.005),  # nexus:noiseSigma [gauss], schema fallback
    # 3 Pa (Baro nexus:noiseSigma) × 1/(ρg) at ~490 m (0.0873 m/Pa, see test_truth) = 0.262 m
    (("baro", "pressure altitude"), 0.262),
])
def test_sensor_residuals_against_truth_are_the_white_noise_of_the_vehicle_file(report, channel, sigma):
    stats = report[2][channel]
    # 906 to 2267 Gaussian samples: the sample std is within ±3·σ/√(2n) ≈ 7% (n = 906) of σ, the mean within
    # ±4·σ/√n ≈ 0.13σ of 0, and the share within ±1σ is 68.3% ± 4·√(0.683·0.317/n) ≈ ±6 points.
    assert stats["residual_std"] == pytest.approx(sigma, rel=0.08)
    assert abs(stats["residual_mean"]) < 0.14 * sigma
    assert stats["within_1sigma"] == pytest.approx(0.683, abs=0.065)


@pytest.mark.parametrize("figure, row, sigma", [
    ("imu", 0, 0.00637), ("imu", 2, 0.00637),  # accel x, z: nexus:accelNoiseSigma [m/s²], vehicles/astro_max_base.usda
    ("imu", 3, 0.0008726646), ("imu", 5, 0.0008726646),  # gyro x, z: nexus:gyroNoiseSigma [rad/s]
    ("mag", 0, 0.005),  # field x: nexus:noiseSigma [gauss], the schema's fallback
])
def test_sensor_figures_draw_the_band_at_the_vehicle_files_sigma_around_truth(plotted, figure, row, sigma):
    from matplotlib.collections import PolyCollection

    axes = plotted[2][figure].axes
    left, right = axes[2 * row], axes[2 * row + 1]  # (rows, 2) subplots, row-major: samples | residual

    def band(ax, label):
        (collection,) = [c for c in ax.collections if isinstance(c, PolyCollection) and c.get_label() == label]
        vertices = np.concatenate([path.vertices for path in collection.get_paths()])
        assert len(vertices) > 2 * 900  # one vertex above and one below each of the ~906+ samples
        return vertices

    (truth,) = [line for line in left.get_lines() if line.get_label() == "truth"]
    t, y = truth.get_xdata(), truth.get_ydata()
    vertices = band(left, "truth ± 1σ")
    at = np.searchsorted(t, vertices[:, 0])
    assert np.array_equal(t[at], vertices[:, 0])  # every vertex sits on a sample time
    offset = vertices[:, 1] - y[at]  # the band about the truth drawn beside it
    half = np.abs(offset)
    assert np.allclose(half, sigma, rtol=1e-6), f"band half-width {half.min():.6g}..{half.max():.6g}, not σ = {sigma}"
    assert offset.max() == pytest.approx(sigma, rel=1e-6) and offset.min() == pytest.approx(-sigma, rel=1e-6)
    for k in (1, 3):  # the residual panel: ±1σ and ±3σ about 0
        extent = band(right, f"±{k}σ")[:, 1]
        assert extent.max() == pytest.approx(k * sigma, rel=1e-6) and extent.min() == pytest.approx(-k * sigma, rel=1e-6)
        half = np.abs(extent)
        assert np.allclose(half, k * sigma, rtol=1e-6), f"±{k}σ band {half.min():.6g}..{half.max():.6g}, not {k * sigma}"


def test_gps_residual_stays_within_its_drift(report):
    # GPS error = white (σ 0.02 m h) + Gauss-Markov drift (σ 0.3 m h, 0.5 m v): at 10 Hz over 9 s the residual is
    # the drift, nearly constant, so we check it stays inside 3·eph/epv (0.9 m, 1.5 m) rather than its spread.
    stats = report[2]
    for axis, bound in (("N", 0.9), ("E", 0.9), ("D", 1.5)):
        assert abs(stats[("gps", f"position {axis}")]["residual_mean"]) < bound


#: In the page: each figure decoded and drawn on a canvas; its size and mean RGB and alpha [0..255].
DRAWN_FIGURES = """Promise.all(Array.from(document.images).map(async img => {
    await img.decode().catch(() => null);
    const canvas = document.createElement('canvas');
    canvas.width = img.naturalWidth; canvas.height = img.naturalHeight;
    if (!canvas.width) return [img.closest('figure').id, 0, 0, 0, 0];
    const context = canvas.getContext('2d');
    context.drawImage(img, 0, 0);
    const d = context.getImageData(0, 0, canvas.width, canvas.height).data;
    let rgb = 0, alpha = 0;
    for (let i = 0; i < d.length; i += 4) { rgb += d[i] + d[i + 1] + d[i + 2]; alpha += d[i + 3]; }
    const n = canvas.width * canvas.height;
    return [img.closest('figure').id, canvas.width, canvas.height, rgb / (3 * n), alpha / n];
}))"""


def test_report_renders_every_figure_in_headless_chromium(report):
    if chromium_path() is None:
        pytest.skip("chromium is not installed (Debian: apt-get install -y chromium); report not checked in a browser")
    from PIL import Image

    run = report[0]
    with Browser(1200, 900) as browser:
        browser.open((run / "report.html").as_uri())
        assert browser.wait_for("document.readyState === 'complete'", 20)
        drawn = {name: rest for name, *rest in browser.evaluate(DRAWN_FIGURES)}
        browser.screenshot(run / "report_screenshot.png")
    assert sorted(drawn) == sorted(f"fig-{name}" for name in FIGURES)
    for name in FIGURES:
        png = np.asarray(Image.open(run / "plots" / f"{name}.png").convert("RGBA"), dtype=np.float64)
        width, height, rgb, alpha = drawn[f"fig-{name}"]
        # The browser drew the whole figure: same size, fully opaque (a truncated PNG leaves transparent rows),
        # and the same mean colour as the PNG file decoded by Pillow.
        assert (width, height) == (png.shape[1], png.shape[0]), name
        assert alpha == pytest.approx(255.0, abs=0.01), name
        assert rgb == pytest.approx(png[..., :3].mean(), abs=0.5), name


def test_sigterm_while_drawing_ends_the_command_143_not_killed(short_run, tmp_path, monkeypatch):
    """A real SIGTERM as the figures are drawn: exit 143 and "terminated", as every Nexus command stopped so."""
    from nexus.viz import report as report_module

    def stopped(series, px4):
        # Only with nexus's handler in place: the default one would end this test process.
        assert signal.getsignal(signal.SIGTERM) not in (signal.SIG_DFL, None), "SIGTERM is not handled here"
        os.kill(os.getpid(), signal.SIGTERM)
        raise AssertionError("the signal did not stop the command")

    monkeypatch.setattr(report_module, "_draw", stopped)
    result = plot_in_process(short_run, "--out", tmp_path / "report")
    assert result.exit_code == 143, result.output
    assert result.output.strip().splitlines()[-1] == "terminated"


# -- bad input: a clear error, exit status 2, no traceback -------------------------------------------------------


def plot_in_process(*args):
    """``nexus plot`` through the real command group, in this process (the CLI's imports cost seconds per process)."""
    from click.testing import CliRunner

    from nexus.cli import main

    return CliRunner().invoke(main, ["plot", *map(str, args)])


def bad(*args):
    result = plot_in_process(*args)
    assert result.exit_code == 2, (result.exit_code, result.output)
    assert "Traceback" not in result.output
    assert result.output.startswith("error: ")  # one line, from NexusGroup, not an escaped exception
    return result.stderr


def test_a_folder_without_a_run_is_refused(tmp_path):
    assert f"{tmp_path} is not a run folder: it has no run.json and no record.parquet" in bad(tmp_path)


def test_a_missing_folder_is_refused(tmp_path):
    assert "is not a folder" in bad(tmp_path / "nowhere")


def test_an_empty_record_is_refused(tmp_path):
    (tmp_path / "run.json").write_text(json.dumps({"exit_reason": "build-error", "error": "bad vehicle"}))
    pq.write_table(pa.table({}), tmp_path / "record.parquet")  # what a run that failed to build leaves
    assert "holds no rows: the run ended before its first tick" in bad(tmp_path)


def test_a_file_that_is_not_a_ulog_is_refused(short_run):
    assert "is not a ULog file PX4 wrote" in bad(short_run, "--ulog", short_run / "run.json")


def _truth(run):
    table = pq.read_table(run / "record.parquet")
    time = table.column("time").to_numpy()
    origin = np.array(json.loads((run / "run.json").read_text())["ned_origin_enu_m"])
    enu = np.stack([table.column(f"body/base.pose[{i}]").to_numpy() for i in range(3)], axis=1) - origin
    return time, np.stack([enu[:, 1], enu[:, 0], -enu[:, 2]], axis=1)  # NED


def test_a_ulog_of_another_flight_is_refused(short_run, tmp_path):
    time, ned = _truth(short_run)
    # Logged an hour later: PX4's clock never overlaps this run's sim time.
    later = write_ulog(tmp_path / "later.ulg", (time + 3600.0) * 1e6, ned, np.tile([1.0, 0, 0, 0], (len(time), 1)))
    assert "is from another flight" in bad(short_run, "--ulog", later, "--out", tmp_path)
    # Same times, but the vehicle was 20 m away: not this flight's positions.
    elsewhere = write_ulog(tmp_path / "elsewhere.ulg", time * 1e6, ned + [20.0, 0, 0],
                           np.tile([1.0, 0, 0, 0], (len(time), 1)))
    assert "m from this run's truth" in bad(short_run, "--ulog", elsewhere, "--out", tmp_path)


def test_a_ulog_of_this_flight_adds_px4s_estimate(short_run, tmp_path):
    time, ned = _truth(short_run)
    # PX4's estimate 0.1 m north of the truth, level, nose north (q = identity in NED/FRD) at 50 Hz.
    rows = slice(0, None, 5)
    ulog = write_ulog(tmp_path / "this.ulg", time[rows] * 1e6, ned[rows] + [0.1, 0, 0],
                      np.tile([1.0, 0, 0, 0], (len(time[rows]), 1)))
    result = plot_in_process(short_run, "--ulog", ulog, "--out", tmp_path)
    assert result.exit_code == 0, result.output
    assert (tmp_path / "plots" / "px4_estimate.png").is_file()
    assert "median position distance to truth 0.10 m" in result.stderr
    assert (tmp_path / "report.html").read_text().count("data:image/png;base64,") == len(FIGURES) + 1


def test_plot_of_a_px4_run_shows_its_lockstep_counters(tmp_path):
    # A PX4 run against the scripted PX4 (nexus/px4/scripted_peer.py) over real TCP: silent for 10 sensor
    # messages as PX4 is while it boots, then 0.7 on every motor, for 1 s of sim time (250 exchanges).
    from nexus.runtime.flight import build_flight
    from nexus.runtime.config import RunConfig
    from nexus.px4.scripted_peer import ScriptedPx4
    from nexus.runtime.run import run_flight

    link = {"host": "127.0.0.1", "port": 0, "connect_timeout": 10.0, "answer_timeout": 5.0}
    flight = build_flight(RunConfig(controller="px4", controller_options=link), "cpu")
    peer = ScriptedPx4(flight.vehicle.controller.link.port, lambda n: None if n <= 10 else [0.7] * 4 + [0.0] * 12)
    with peer.running():
        run_flight(replace(flight.options, device="cpu", duration=1.0), tmp_path / "px4", progress=False, flight=flight)
    result = plot_in_process(tmp_path / "px4")
    assert result.exit_code == 0, result.output
    page = (tmp_path / "px4" / "report.html").read_text()
    assert "Controller link statistics (px4)" in page
    assert "<tr><th>exchanges</th><td>250</td></tr>" in page  # one exchange per tick, 250 ticks in 1 s
    # The first 10 went unanswered; the free-run does not wait for the peer thread, so on a busy
    # machine a few more may pass before lockstep. The report shows run.json's own count.
    answers = json.loads((tmp_path / "px4" / "run.json").read_text())["controller_stats"]["answers"]
    assert 200 <= answers <= 240
    assert f"<tr><th>answers</th><td>{answers}</td></tr>" in page
    assert page.count("data:image/png;base64,") == len(FIGURES)  # no estimate or setpoint: truth and sensors still
