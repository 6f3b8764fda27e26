"""One local Ray instance of 2 CPUs for the scenario tests that fly through the sweep machinery."""

import pytest

pytest.importorskip("ray")


@pytest.fixture(scope="session")
def ray_cpus():
    """Ray with 2 CPUs, started as a sweep starts its own (loopback only); ``nexus test`` uses it as it is."""
    from nexus.sweep.cluster import connect

    cluster = connect(None, 2)
    yield 2
    cluster.close()
