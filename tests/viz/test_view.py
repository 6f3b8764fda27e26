"""``nexus view``: the replay served to a real headless Chromium, and the viewer's refusals.

The browser test takes two screenshots of the same view: the vehicle drawn,
then hidden with the page's own "Show vehicle" checkbox (the same scene with
its ground and paths, without the vehicle). The vehicle must change the
canvas; a page that drew nothing,
or drew the ground without the vehicle, gives two equal pictures.
"""

import socket
import subprocess
import sys
import time

import numpy as np
import pytest

from tests.viz.browser import Browser, chromium_path

WIDTH, HEIGHT = 1280, 800


def start_view(run, *args, timeout_s=180.0):
    """``nexus view RUN --port 0 ...`` as a server process; returns (process, url)."""
    process = subprocess.Popen([sys.executable, "-m", "nexus.cli", "view", str(run), "--port", "0", *args],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if line.startswith("http://"):
            return process, line.strip()
        if not line and process.poll() is not None:
            raise AssertionError(f"nexus view exited {process.returncode}: {process.stderr.read()}")
    process.kill()
    raise AssertionError("nexus view printed no URL in time")


def stop(process):
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def scene(png_path):
    """The canvas left of viser's control panel (which covers the right quarter), as float RGB."""
    from PIL import Image

    image = np.asarray(Image.open(png_path).convert("RGB"), dtype=np.float64)
    return image[:, : int(image.shape[1] * 0.72)]


def click_checkbox(browser, label):
    return browser.evaluate(f"""(() => {{
        const l = [...document.querySelectorAll('label')].find(e => e.textContent.trim() === {label!r});
        const box = l && document.getElementById(l.htmlFor);
        if (!box) return false;
        box.click();
        return true; }})()""")


def test_replay_shows_the_vehicle_in_headless_chromium(short_run):
    if chromium_path() is None:
        pytest.skip("chromium is not installed (Debian: apt-get install -y chromium); viewer not checked in a browser")
    process, url = start_view(short_run)
    try:
        assert url.startswith("http://127.0.0.1:")  # local unless --host says otherwise
        with Browser(WIDTH, HEIGHT) as browser:
            browser.open(url)
            # The replay panel arrives over the websocket once the page has connected.
            assert browser.wait_for("document.body.innerText.includes('tick 1 of 2')", 60), "no replay panel"
            time.sleep(3.0)  # SwiftShader draws a few frames
            with_vehicle = browser.screenshot(short_run / "view_vehicle.png")
            assert click_checkbox(browser, "Show vehicle")
            time.sleep(3.0)
            without = browser.screenshot(short_run / "view_empty_scene.png")
            # Play: the server's clock moves the slider and the caption's tick.
            browser.evaluate("[...document.querySelectorAll('button')].find(b => b.innerText === 'Play').click()")
            played = browser.wait_for("(() => { const m = document.body.innerText.match(/tick (\\d+) of/);"
                                      " return m && Number(m[1]) > 100 ? Number(m[1]) : 0; })()", 20)
    finally:
        stop(process)
    full, empty = scene(with_vehicle), scene(without)
    changed = np.mean(np.abs(full - empty).max(axis=2) > 40)  # share of pixels the vehicle changes by > 40/255
    # The camera frames the whole flight (2.1 m climb) from 3.4 m: the vehicle (rotor disks 0.53 m across, 1.2 m
    # span) spans about a fifth of the canvas width, a few percent of its area, with its shadow; its grey hub and
    # coloured disks are darker than the pale ground.
    assert changed > 0.01, f"the vehicle changed {changed:.2%} of the canvas"
    assert full.mean() < empty.mean() - 1.0
    assert empty.std() > 3.0  # the empty scene is still drawn (ground grid), not a blank page
    assert played, "Play did not advance the replay"


def test_a_busy_port_is_a_clear_error(short_run):
    from click.testing import CliRunner

    from nexus.cli import main

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = CliRunner().invoke(main, ["view", str(short_run), "--port", str(port)])
    assert result.exit_code == 2, result.output
    assert f"error: port {port} on 127.0.0.1 is in use" in result.output
    assert "Traceback" not in result.output


def test_a_host_that_is_not_this_machine_is_a_clear_error(short_run):
    from click.testing import CliRunner

    from nexus.cli import main

    result = CliRunner().invoke(main, ["view", str(short_run), "--host", "192.0.2.1"])  # TEST-NET-1, never local
    assert result.exit_code == 2, result.output
    assert "--host 192.0.2.1 is not an address of this machine" in result.output


def test_view_of_a_folder_without_a_run_is_refused(tmp_path):
    from click.testing import CliRunner

    from nexus.cli import main

    result = CliRunner().invoke(main, ["view", str(tmp_path)])
    assert result.exit_code == 2
    assert "is not a run folder" in result.output


def share_the_vehicle_draws(tmp_path, vehicle: str) -> float:
    """Fly ``vehicle``'s first second, replay it in headless Chromium and return the share of the canvas that the
    "Show vehicle" checkbox changes (the vehicle drawn at the path's start against the same view without it)."""
    if chromium_path() is None:
        pytest.skip("chromium is not installed (Debian: apt-get install -y chromium); viewer not checked in a browser")
    from click.testing import CliRunner

    from nexus.cli import main

    run = tmp_path / vehicle
    result = CliRunner().invoke(main, ["run", "--device", "cpu", "--quiet", "--out", str(run), "--vehicle", vehicle,
                                       "--duration", "1"])
    assert result.exit_code == 0, result.output
    process, url = start_view(run)
    try:
        with Browser(WIDTH, HEIGHT) as browser:
            browser.open(url)
            assert browser.wait_for("document.body.innerText.includes('tick 1 of 250')", 60), "no replay panel"
            time.sleep(3.0)
            shown = browser.screenshot(run / "view_vehicle.png")
            assert click_checkbox(browser, "Show vehicle")
            time.sleep(3.0)
            hidden = browser.screenshot(run / "view_no_vehicle.png")
    finally:
        stop(process)
    return float(np.mean(np.abs(scene(shown) - scene(hidden)).max(axis=2) > 40))


def test_replay_draws_a_plane(tmp_path):
    # The Aerosonde's first second (its release at 18 m/s, 1.5 m up): the viewer builds the plane's model from its
    # file (the fuselage and wing boxes, its wheels) and draws it at the path's start. The pale wing over the pale
    # ground changes fewer pixels than a multirotor's dark disks: flown 0.08 % of the canvas (a 1280 x 800
    # screenshot on SwiftShader, 2026-12-06), asserted over 0.04 %.
    changed = share_the_vehicle_draws(tmp_path, "aerosonde")
    assert changed > 0.0004, f"the plane changed {changed:.3%} of the canvas"


def test_replay_draws_a_standard_vtol(tmp_path):
    # The standard VTOL's first second (its rotors spinning up on its gear): the viewer builds it from its file, the
    # plane's boxes, its booms and the four lift rotors on their joints, and draws it at the path's start. Flown: 7.2 %
    # of the canvas changed (a 1280 x 800 screenshot on SwiftShader, 2026-12-08), its rotors' disks and booms dark
    # against the pale ground; asserted over 1 %, 25 times the plane's bound.
    changed = share_the_vehicle_draws(tmp_path, "standard_vtol")
    assert changed > 0.01, f"the VTOL changed {changed:.3%} of the canvas"
