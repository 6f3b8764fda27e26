"""The line ``nexus test`` prints when interrupted must finish the same run: every option that decides what
flies (the PX4 binary, gain factors, seeds) and where the outputs go is repeated, and it parses back to the
same options with ``--resume`` added."""

import shlex
from pathlib import Path

from nexus.commands.test import _resume_command
from nexus.commands.test import test as nexus_test_command


def parsed(argv: list[str]) -> dict:
    with nexus_test_command.make_context("test", argv) as ctx:
        return dict(ctx.params)


def test_the_resume_line_parses_back_to_the_interrupted_options():
    argv = ["scenarios/px4_mission.toml", "extra dir/", "--out", "out", "--px4-binary", "/opt/px4/bin/px4",
            "--scale-gain", "velocity_p=0.1", "--scale-gain", "rate_p=2", "--seeds", "0,1,2,3", "--parallel", "2",
            "--junit", "j.xml", "--report", "rep", "--quiet"]
    given = parsed(argv)
    line = _resume_command(given["paths"], given["out"], given)
    words = shlex.split(line)
    assert words[:2] == ["nexus", "test"] and words[-1] == "--resume"
    assert "'extra dir'" in line  # a path with a space stays one word
    again = parsed(words[2:])
    assert again.pop("resume") is True and given.pop("resume") is False
    assert again == given
    assert again["px4_binary"] == "/opt/px4/bin/px4" and again["seeds"] == [0, 1, 2, 3]
    assert again["gain_scale"] == {"velocity_p": 0.1, "rate_p": 2.0} and again["out"] == Path("out")


def test_a_plain_run_resumes_with_paths_and_out_only():
    given = parsed(["scenarios/", "--out", "runs"])
    assert _resume_command(given["paths"], given["out"], given) == "nexus test scenarios --out runs --resume"
