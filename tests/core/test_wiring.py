"""Inputs by name, by connection and as lists; leading-part views; defaults; host ports."""

import numpy as np
import warp as wp

from nexus.core import Loop, Read, Stage, Write
from tests.core.toy_parts import Part, read_row, row, scale_row, source


@wp.struct
class Sample:
    time: wp.float64
    value: wp.vec3


def capture_host(name, read, kind="control", connections=None):
    seen = []

    def run(io):
        value = io[read.signal]
        seen.append([port.read() for port in value] if isinstance(value, list) else value.read())

    return Part(f"/vehicle/{name}", Stage(name, kind, run, reads=(read,), host=True), connections=connections), seen


def test_input_by_connection_takes_the_named_writer():
    quiet, noisy = source("/vehicle/body/ImuQuiet", "imu", 1.0), source("/vehicle/body/ImuNoisy", "imu", 2.0)
    ekf, seen = capture_host("ekf", read_row("imu"), kind="estimate", connections={"imu": "/vehicle/body/ImuNoisy"})
    Loop([quiet, noisy, ekf], device="cpu").run(1)
    assert np.all(seen[0] == 2.0)


def test_list_input_takes_every_writer_in_declaration_order():
    a, b, c = (source(f"/vehicle/imu_{n}", "imu", v) for n, v in (("a", 3.0), ("b", 1.0), ("c", 2.0)))
    ekf, seen = capture_host("ekf", Read("imu", list[wp.float32], (1, 8)), kind="estimate")
    Loop([a, b, c, ekf], device="cpu").run(1)
    assert [float(x[0]) for x in seen[0]] == [3.0, 1.0, 2.0]


def test_list_input_with_no_writer_is_an_empty_list():
    # The PX4 exchange reads every rangefinder's `range` this way; most vehicles have none.
    ekf, seen = capture_host("ekf", Read("range", list[wp.float32], (1, 8)), kind="estimate")
    Loop([ekf], device="cpu").run(1)
    assert list(seen[0]) == []


def test_connection_to_a_body_prim_takes_its_output_whatever_its_name():
    def state(io):
        io["body/rotor_1"].write(np.full(8, 7.0, dtype=np.float32))

    plant = Part("/vehicle/plant", Stage("state", "state", state, host=True, writes=(
        Write("body/base", wp.float32, (1, 8), prim="/vehicle/body/base"),
        Write("body/rotor_1", wp.float32, (1, 8), prim="/vehicle/body/rotor_1"),
    )))
    estimator, seen = capture_host("estimator", read_row("pose"), kind="estimate", connections={"pose": "/vehicle/body/rotor_1"})
    Loop([plant, estimator], device="cpu").run(1)
    assert np.all(seen[0] == 7.0)


def test_reader_takes_leading_part_of_wider_buffer_as_a_view():
    def controller(io):
        io["controls"].write(np.arange(16, dtype=np.float32))

    ctl = Part("/vehicle/px4", Stage("exchange", "control", controller, host=True, writes=(row("controls", 16),)))
    rotors = Part("/vehicle/rotors", Stage("esc", "record", lambda io: wp.launch(
        scale_row, 4, inputs=[io["controls"], wp.float32(2.0)], outputs=[io["speed"]], device=io.device),
        reads=(read_row("controls", 4),), writes=(row("speed", 4),)))
    loop = Loop([ctl, rotors], device="cpu")
    loop.run(1)
    assert loop.ios[id(rotors.stages()[0])]["controls"].shape == (1, 4)
    np.testing.assert_array_equal(loop.output("speed").numpy()[0], [0.0, 2.0, 4.0, 6.0])


def test_reader_default_fills_buffer_until_writer_first_writes():
    writes_from = 3
    ticks = {"n": 0}

    def controller(io):
        ticks["n"] += 1
        if ticks["n"] >= writes_from:
            io["controls"].write(np.ones(16, dtype=np.float32))

    ctl = Part("/vehicle/ctl", Stage("ctl", "control", controller, host=True, writes=(row("controls", 16),)))
    esc, seen = capture_host("esc", read_row("controls", 4, default=0.25), kind="record")
    Loop([ctl, esc], device="cpu").run(4)
    assert [float(s[0]) for s in seen] == [0.25, 0.25, 1.0, 1.0]


def test_unwritten_input_reads_its_default():
    pid, seen = capture_host("pid", Read("gain", wp.float32, (1, 3), default=[1.0, 2.0, 3.0]))
    Loop([pid], device="cpu").run(1)
    np.testing.assert_array_equal(seen[0], [1.0, 2.0, 3.0])


def test_host_reads_struct_as_instance_and_value_without_leading_axis():
    def writer(io):
        sample = Sample()
        sample.time = 1.5
        sample.value = wp.vec3(1.0, 2.0, 3.0)
        io["sample"].write(sample)
        io["scalar"].write(4.0)

    w = Part("/vehicle/w", Stage("w", "sensor", writer, host=True, writes=(Write("sample", Sample, (1,)), Write("scalar", wp.float64, (1,)))))
    seen = []

    def reader(io):
        s = io["sample"].read()
        seen.append((s.time, tuple(s.value), io["scalar"].read()))

    r = Part("/vehicle/r", Stage("r", "control", reader, host=True, reads=(Read("sample", Sample, (1,)), Read("scalar", wp.float64, (1,)))))
    Loop([w, r], device="cpu").run(1)
    time, value, scalar = seen[0]
    assert time == 1.5 and value == (1.0, 2.0, 3.0) and scalar.shape == () and float(scalar) == 4.0


def test_host_read_is_a_copy():
    def writer(io):
        io["row"].write(np.full(8, 1.0, dtype=np.float32))

    got = []

    def reader(io):
        copy = io["row"].read()
        copy[:] = -1.0
        got.append(io["row"].read())

    w = Part("/vehicle/w", Stage("w", "sensor", writer, host=True, writes=(row("row"),)))
    r = Part("/vehicle/r", Stage("r", "control", reader, host=True, reads=(read_row("row"),)))
    Loop([w, r], device="cpu").run(1)
    assert np.all(got[0] == 1.0)


def test_host_signal_holds_one_object():
    w = Part("/vehicle/w", Stage("w", "guide", lambda io: io["reference"].write({"waypoints": 3}), host=True, writes=(Write("reference", dict),)))
    r, seen = capture_host("r", Read("reference", dict))
    Loop([w, r], device="cpu").run(1)
    assert seen == [{"waypoints": 3}]


def test_buffers_exist_before_any_stage_runs_and_never_move():
    ctl = source("/vehicle/ctl", "controls", 1.0, kind="control", width=16)
    loop = Loop([ctl], device="cpu").build()
    buffer = loop.output("controls")
    assert buffer.shape == (1, 16) and np.all(buffer.numpy() == 0.0)
    loop.run(2)
    assert loop.output("controls") is buffer and np.all(buffer.numpy() == 1.0)


def test_writer_learns_which_outputs_nobody_reads():
    def run(io):
        assert io.is_read("used") and not io.is_read("spare")

    writer = Part("/vehicle/w", Stage("w", "sensor", run, host=True, writes=(row("used"), row("spare"))))
    reader = Part("/vehicle/r", Stage("r", "control", lambda io: None, host=True, reads=(read_row("used"),)))
    Loop([writer, reader], device="cpu").run(1)


def test_a_struct_read_can_be_written_back_and_converted():
    def writer(io):
        sample = Sample()
        sample.time = 2.0
        sample.value = wp.vec3(4.0, 5.0, 6.0)
        io["a"].write(sample)

    def copier(io):
        view = io["a"].read()
        io["b"].write(view)
        assert tuple(view.as_struct().value) == (4.0, 5.0, 6.0)
        assert "time=2.0" in repr(view)

    w = Part("/vehicle/w", Stage("w", "sensor", writer, host=True, writes=(Write("a", Sample, (1,)),)))
    c = Part("/vehicle/c", Stage("c", "control", copier, host=True, reads=(Read("a", Sample, (1,)),), writes=(Write("b", Sample, (1,)),)))
    loop = Loop([w, c], device="cpu")
    loop.run(1)
    assert loop.output("b").numpy()[0]["time"] == 2.0
