"""A sweep's attribute draws are checked against the attribute's bounds, whole, before any run.

``"/vehicle/controller nexus:hoverThrust" = {low = 0.55, high = 1.2}`` draws a hover thrust over 1 (it must be
in (0, 1]) at some points and not at others, as random_seed falls: such points failed their build midway
through the sweep. Now the [random] axis's low and high are checked against the attribute's bounds when the
sweep is prepared: one line, nothing written. (A [grid] value is no draw: the same point fails every time, its
build's error in its row, as tests/sweep/test_sweep.py flies.)
"""

import pytest

from nexus.plant.assets import resolve_asset
from nexus.sweep.runner import SweepOptions, prepare
from nexus.sweep.spec import SweepError
from tests.sweep.conftest import write_sweep

THRUST = '"/vehicle/controller nexus:hoverThrust"'


def refused(tmp_path, text: str) -> str:
    path = write_sweep(tmp_path, text)
    with pytest.raises(SweepError) as caught:
        prepare(path, SweepOptions(out=tmp_path / "out"))
    assert not (tmp_path / "out").exists()
    return str(caught.value)


def test_a_random_range_past_the_bound_is_refused_whatever_it_drew(tmp_path):
    # count = 1, random_seed 0: the one point's draw is whatever it is; the range's high end is 1.2 either way
    message = refused(tmp_path, f"[run]\nduration = 1.0\n\n[random]\ncount = 1\n{THRUST} = {{low = 0.55, high = 1.2}}\n")
    assert message.endswith(f"sweep.toml: [random]: {THRUST[1:-1]!r}: high = 1.2 is out of bounds: the attribute must "
                            f"be in (0, 1] (in {resolve_asset('vehicle', 'astro_max_base')}); draw from a range "
                            "inside it")
    message = refused(tmp_path, f"[run]\nduration = 1.0\n\n[random]\ncount = 2\n{THRUST} = {{low = 0.0, high = 0.5}}\n")
    assert f"[random]: {THRUST[1:-1]!r}: low = 0.0 is out of bounds: the attribute must be in (0, 1]" in message


def test_a_range_inside_the_bounds_is_prepared(tmp_path):
    path = write_sweep(tmp_path, f"[run]\nduration = 1.0\n\n[random]\ncount = 4\n{THRUST} = {{low = 0.5, high = 0.6}}\n")
    _, points = prepare(path, SweepOptions(out=tmp_path / "out"))
    assert len(points) == 4 and all(0.5 <= p.attributes[THRUST[1:-1]] < 0.6 for p in points)
