"""``nexus px4 compare``: the first differing tick of two records and, given ULogs, of each PX4 topic."""

import struct

import pytest
from click.testing import CliRunner

from nexus.cli import main
from nexus.commands.px4_compare import compare_records, compare_ulogs
from nexus.runtime.config import RunConfig
from nexus.runtime.run import run_flight


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Two flights with seed 1 (identical) and one with seed 2 (other sensor noise from the first tick)."""
    out = {}
    for name, seed in (("a", 1), ("b", 1), ("c", 2)):
        out[name] = tmp_path_factory.mktemp(name)
        run_flight(RunConfig(controller="hold", seed=seed, device="cpu", duration=0.1), out[name], progress=False)
    return out


def test_identical_records_have_no_first_difference(runs):
    result = compare_records(runs["a"], runs["b"])
    assert result["first_tick"] is None and result["rows"] == (25, 25)


def test_another_seed_differs_from_the_first_tick_in_the_noisy_columns(runs):
    result = compare_records(runs["a"], runs["c"])
    assert result["first_tick"] == 1
    assert "imu.accel[0]" in result["columns"] and "time" not in result["columns"]


def ulog(path, samples):
    """A minimal ULog (format version 1): one topic ``probe`` (timestamp, x) with the given samples."""
    def message(kind, body):
        return struct.pack("<HB", len(body), ord(kind)) + body

    data = b"ULog\x01\x12\x35\x01" + struct.pack("<Q", 0)
    data += message("B", bytes(16) + bytes(24))
    data += message("F", b"probe:uint64_t timestamp;float x;")
    data += message("A", struct.pack("<BH", 0, 7) + b"probe")
    for stamp, x in samples:
        data += message("D", struct.pack("<HQf", 7, stamp, x))
    path.write_bytes(data)
    return path


def test_ulog_topics_part_at_the_first_differing_sample(tmp_path):
    a = ulog(tmp_path / "a.ulg", [(4000, 1.0), (8000, 2.0), (12000, 3.0)])
    b = ulog(tmp_path / "b.ulg", [(4000, 1.0), (8000, 2.5), (12000, 3.0)])
    (topic,) = compare_ulogs(a, b)
    assert (topic.topic, topic.index, topic.time_usec, topic.field) == ("probe[0]", 1, 8000, "x")
    (same,) = compare_ulogs(a, a)
    assert same.index is None and same.samples == 3
    # A log that starts later (the logger's own start) is compared at the times both hold.
    late = ulog(tmp_path / "late.ulg", [(8000, 2.0), (12000, 3.0)])
    (aligned,) = compare_ulogs(a, late)
    assert aligned.index is None and aligned.samples == 2


def test_the_command_prints_both(runs, tmp_path):
    a = ulog(tmp_path / "a.ulg", [(4000, 1.0), (8000, 2.0)])
    b = ulog(tmp_path / "b.ulg", [(4000, 1.0), (8000, 2.5)])
    result = CliRunner().invoke(main, ["px4", "compare", str(runs["a"]), str(runs["c"]), "--ulog", str(a), str(b)])
    assert result.exit_code == 0, result.output
    assert "records differ: first at tick 1 (0.004 s sim)" in result.output
    assert "probe[0]: first differs at PX4 time 0.008000 s (tick 2), field x (sample 1 of log A" in result.output
    same = CliRunner().invoke(main, ["px4", "compare", str(runs["a"]), str(runs["b"])])
    assert "records identical: 25 ticks" in same.output


def test_a_folder_that_is_no_run_is_one_line_naming_it(tmp_path):
    result = CliRunner().invoke(main, ["px4", "compare", str(tmp_path), str(tmp_path)])
    assert result.exit_code != 0 and "is not a run folder" in result.output and "Traceback" not in result.output
