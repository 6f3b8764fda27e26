"""The thermal camera's NETD noise lands in the frame it writes: over uniform ground, its spread is the NETD.

The camera hangs 0.2 m below the base, looking straight down, with the vehicle placed 2 m up over the
empty scene's flat ground, which declares no temperature: every pixel sees the ground, at the camera's
ambient temperature of 291.5 K (tests/render/test_render_sensors.py shows the same render), so the
noise-free frame is 291.5 K in every pixel and whatever else a frame holds is its noise.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from nexus.sensors.thermal import ThermalCamera
from tests.sensors.conftest import place, ring

AMBIENT = 291.5  # [K]
NETD = 0.5  # [K], 1 sigma
#: 32 x 24 pixels, 50 Hz on the 250 Hz tick: a frame every 5 ticks; six frames, 4,608 pixels.
WIDTH, HEIGHT, FRAMES = 32, 24, 6


def _frames(vehicle, noise: bool, seed: int = 0) -> list[np.ndarray]:
    """The first ``FRAMES`` temperature frames [K] the camera writes, (height, width) each."""
    camera = ThermalCamera("/vehicle/body/base/Thermal", plant=vehicle.plant, width=WIDTH, height=HEIGHT,
                           horizontal_fov=0.8, tilt=math.pi / 2, mount=(0.0, 0.0, -0.2), ambient=AMBIENT, sky=210.0,
                           netd=NETD, rate=50.0, noise=noise)
    loop = ring(vehicle, [camera], seed=seed)
    frames: dict[int, np.ndarray] = {}
    try:
        place(vehicle, (0.0, 0.0, 2.0))
        for _ in range(5 * FRAMES + 10):
            loop.tick()
            image = loop.output("thermal_camera").read()
            if image is not None:
                frames.setdefault(image.tick, np.array(image["temperature"][0], copy=True))
    finally:
        loop.close()
        camera.close()
    assert len(frames) >= FRAMES, sorted(frames)
    return [frames[tick] for tick in sorted(frames)[:FRAMES]]


def test_without_noise_every_pixel_reads_the_ground_exactly(ground_vehicle):
    for frame in _frames(ground_vehicle, noise=False):
        assert frame.shape == (HEIGHT, WIDTH)
        np.testing.assert_array_equal(frame, np.float32(AMBIENT))


def test_with_noise_each_pixel_is_off_by_gaussian_noise_of_one_netd(ground_vehicle):
    frames = _frames(ground_vehicle, noise=True)
    noise = np.stack(frames).astype(np.float64) - AMBIENT  # (frames, height, width) [K]
    # 4,608 independent draws of N(0, 0.5 K): their standard deviation is 0.5 K within 1.04 % (1 sigma,
    # 0.5 / sqrt(2 x 4,608)) and their mean 0 within 0.0074 K (0.5 / sqrt(4,608)); 5 sigma either way.
    assert noise.std() == pytest.approx(NETD, rel=0.052)
    assert abs(noise.mean()) < 0.037
    # Drawn anew for every pixel and every frame: no two frames, and hardly two pixels of a frame, share it
    # (a float32 near 291.5 K steps by 3.1e-5 K: a handful of the 768 draws may land on the same step).
    for a in range(FRAMES):
        for b in range(a + 1, FRAMES):
            assert abs(np.corrcoef(noise[a].ravel(), noise[b].ravel())[0, 1]) < 5.0 / math.sqrt(WIDTH * HEIGHT)
    assert len(np.unique(noise[0])) > 0.9 * WIDTH * HEIGHT
