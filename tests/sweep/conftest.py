"""One local Ray instance of 2 CPUs for every sweep test (starting and stopping one costs about 4 s)."""

import stat
import sys
from pathlib import Path

import pytest

pytest.importorskip("ray")

FAKE_PX4 = Path(__file__).with_name("fake_px4.py")


@pytest.fixture(scope="session")
def ray_cpus():
    """Ray with 2 CPUs, no dashboard, started as a sweep starts its own (loopback only), shared by the sweep
    tests; the sweep uses it as it is."""
    from nexus.sweep.cluster import connect

    cluster = connect(None, 2)
    yield 2
    cluster.close()


@pytest.fixture
def fake_px4(tmp_path) -> Path:
    """An executable stand-in for PX4's bin/px4 (see fake_px4.py)."""
    binary = tmp_path / "bin" / "px4"
    binary.parent.mkdir()
    binary.write_text(f"#!{sys.executable}\nimport runpy\nrunpy.run_path({str(FAKE_PX4)!r}, run_name='__main__')\n")
    binary.chmod(binary.stat().st_mode | stat.S_IXUSR)
    return binary


def write_sweep(folder: Path, text: str, name: str = "sweep.toml") -> Path:
    path = folder / name
    path.write_text(text)
    return path
