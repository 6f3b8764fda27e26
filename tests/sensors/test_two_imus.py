"""Two IMUs on one vehicle: a reader takes one through a connection, or both as a list."""

from __future__ import annotations

import pytest
import warp as wp

from nexus.assembly import assemble
from nexus.core import BuildError, Component, Loop, Read, Stage, Write
from nexus.sensors.samples import ImuSample
from nexus.startup import start
from tests.sensors.conftest import TWO_IMUS

NOISY, QUIET = "/vehicle/body/base/Imu", "/vehicle/body/base/ImuQuiet"


class ConnectedReader(Component):
    """Copies the one IMU its connection names into ``seen_imu``."""

    def stages(self):
        return [Stage("seen", "estimate", self._run, reads=(Read("imu", ImuSample, (1,)),),
                      writes=(Write("seen_imu", ImuSample, (1,)),))]

    def _run(self, io):
        wp.copy(io["seen_imu"], io["imu"])


class ListReader(Component):
    """Copies every IMU, in declaration order, into ``first_imu`` and ``second_imu``."""

    def stages(self):
        return [Stage("seen_all", "estimate", self._run, reads=(Read("imu", list[ImuSample], (1,)),),
                      writes=(Write("first_imu", ImuSample, (1,)), Write("second_imu", ImuSample, (1,))))]

    def _run(self, io):
        first, second = io["imu"]
        wp.copy(io["first_imu"], first)
        wp.copy(io["second_imu"], second)


class PlainReader(Component):
    """Reads ``imu`` by name alone, which two IMUs write: the build must refuse it."""

    def stages(self):
        return [Stage("plain", "estimate", lambda io: None, reads=(Read("imu", ImuSample, (1,)),))]


@pytest.fixture(scope="module")
def two_imus():
    vehicle = assemble(TWO_IMUS, "empty", controller="hold")
    readers = [ConnectedReader("/test/connected", connections={"imu": QUIET}), ListReader("/test/list")]
    loop = Loop([*vehicle.components, *readers], device="cpu", mode="captured", seed=4).build()
    vehicle.plant.reset()
    start(loop, vehicle.plant, settle_seconds=0.02)
    loop.run(3)
    return loop


def data(loop, signal, writer=None) -> bytes:
    return loop.output(signal, writer).numpy().tobytes()


def test_connection_takes_the_named_imu(two_imus):
    assert data(two_imus, "seen_imu") == data(two_imus, "imu", QUIET)
    assert data(two_imus, "seen_imu") != data(two_imus, "imu", NOISY)


def test_list_takes_both_imus_in_declaration_order(two_imus):
    # The file declares Imu before ImuQuiet.
    assert data(two_imus, "first_imu") == data(two_imus, "imu", NOISY)
    assert data(two_imus, "second_imu") == data(two_imus, "imu", QUIET)


def test_plain_read_of_two_imus_fails_the_build_naming_both():
    vehicle = assemble(TWO_IMUS, "empty", controller="hold")
    with pytest.raises(BuildError, match="which 2 stages write") as error:
        Loop([*vehicle.components, PlainReader("/test/plain")], device="cpu").build()
    assert NOISY in str(error.value) and QUIET in str(error.value) and "nexus:inputs:imu" in str(error.value)
