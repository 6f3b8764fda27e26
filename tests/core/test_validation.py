"""Every build error the spec lists is raised before any stage runs and names both ends."""

import pytest
import warp as wp

from nexus.core import BuildError, Loop, Read, Stage, Write
from tests.core.toy_parts import Part, host_stage, read_row, source


@wp.struct
class Pose:
    position: wp.vec3


def build(*components):
    return Loop(list(components), device="cpu").build()


def reader(name, read, kind="control", host=False, connections=None, ran=None):
    def run(io):
        if ran is not None:
            ran.append(name)

    return Part(f"/vehicle/{name}", Stage(name, kind, run, reads=(read,), host=host), connections=connections)


def test_type_mismatch_names_reader_and_writer():
    ran = []
    writer = Part("/vehicle/w", Stage("w", "sensor", lambda io: None, writes=(Write("x", wp.float32, (1,)),)))
    with pytest.raises(BuildError) as error:
        build(writer, reader("r", Read("x", wp.float64, (1,)), ran=ran))
    text = str(error.value)
    assert "type mismatch on signal 'x'" in text
    assert "'r'" in text and "'/vehicle/w'" in text and "float64" in text and "float32" in text
    assert ran == []


def test_reader_wider_than_writer_names_both_and_shapes():
    with pytest.raises(BuildError) as error:
        build(source("/vehicle/ctl", "controls", 0.5, kind="control", width=4), reader("esc", read_row("controls", 16), kind="command"))
    text = str(error.value)
    assert "(1, 16)" in text and "(1, 4)" in text and "'esc'" in text and "'/vehicle/ctl'" in text


def test_input_without_writer_or_default():
    with pytest.raises(BuildError) as error:
        build(reader("esc", read_row("controls", 4), kind="command"))
    text = str(error.value)
    assert "'esc'" in text and "'controls'" in text and "no stage writes it" in text


def test_device_stage_declaring_a_host_signal():
    stage = Stage("bad", "sensor", lambda io: None, writes=(Write("frame", dict),))
    with pytest.raises(BuildError) as error:
        build(Part("/vehicle/camera", stage))
    text = str(error.value)
    assert "device stage 'bad'" in text and "'/vehicle/camera'" in text and "'frame'" in text and "host type dict" in text


@pytest.mark.parametrize("shape, phrase", [(None, "no shape"), ((), "no shape"), ((2,), "leading axis is 2"), ((4, 16), "leading axis is 4")])
def test_device_signal_shape_must_lead_with_one(shape, phrase):
    stage = Stage("imu", "sensor", lambda io: None, writes=(Write("imu", wp.float32, shape),))
    with pytest.raises(BuildError) as error:
        build(Part("/vehicle/imu", stage))
    assert phrase in str(error.value) and "'imu'" in str(error.value) and "'/vehicle/imu'" in str(error.value)


def test_two_writers_without_connection_or_list():
    with pytest.raises(BuildError) as error:
        build(source("/vehicle/imu_a", "imu", 1.0), source("/vehicle/imu_b", "imu", 2.0), reader("ekf", read_row("imu"), kind="estimate"))
    text = str(error.value)
    assert "'/vehicle/imu_a'" in text and "'/vehicle/imu_b'" in text and "'ekf'" in text
    assert "nexus:inputs:imu" in text and "list[" in text


def test_connection_to_prim_that_writes_no_such_signal():
    mag = source("/vehicle/mag", "mag", 1.0)
    imu = source("/vehicle/imu", "imu", 1.0)
    with pytest.raises(BuildError) as error:
        build(mag, imu, reader("ekf", read_row("imu"), kind="estimate", connections={"imu": "/vehicle/mag"}))
    text = str(error.value)
    assert "nexus:inputs:imu" in text and "'/vehicle/mag'" in text and "'ekf'" in text and "writes no signal 'imu'" in text


def test_connection_to_unknown_prim():
    with pytest.raises(BuildError) as error:
        build(source("/vehicle/imu", "imu", 1.0), reader("ekf", read_row("imu"), kind="estimate", connections={"imu": "/vehicle/nowhere"}))
    assert "'/vehicle/nowhere'" in str(error.value) and "'ekf'" in str(error.value)


def test_component_with_no_stages():
    with pytest.raises(BuildError) as error:
        build(Part("/vehicle/lazy"))
    assert "'/vehicle/lazy'" in str(error.value) and "states no stages" in str(error.value)


def test_stage_of_unknown_kind():
    with pytest.raises(BuildError) as error:
        build(Part("/vehicle/odd", Stage("wobble", "teleport", lambda io: None)))
    text = str(error.value)
    assert "'wobble'" in text and "'/vehicle/odd'" in text and "'teleport'" in text and "clock" in text


def test_several_problems_are_reported_together():
    with pytest.raises(BuildError) as error:
        build(reader("a", read_row("x"), kind="control"), reader("b", read_row("y"), kind="control"))
    text = str(error.value)
    assert "2 problems" in text and "'x'" in text and "'y'" in text


def test_no_stage_runs_when_the_build_fails():
    ran = []
    ok = Part("/vehicle/ok", Stage("ok", "sensor", lambda io: ran.append("ok"), host=True))
    loop = Loop([ok, reader("r", read_row("missing"), kind="control")], device="cpu")
    with pytest.raises(BuildError):
        loop.run(3)
    assert ran == []


def test_bad_tick_rate_and_mode():
    with pytest.raises(BuildError, match="whole number of nanoseconds"):
        Loop([], tick_hz=300.0)
    with pytest.raises(BuildError, match="unknown execution mode"):
        Loop([], mode="turbo")
