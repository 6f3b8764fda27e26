"""The flight's role rules: a missing estimator, an unread setpoint, named as such."""

import pytest
import warp as wp

from nexus.core import BuildError, Loop, Read, Stage, Write
from nexus.runtime.roles import FLIGHT_RULES
from tests.core.toy_parts import Part, host_stage


@wp.struct
class Pose:
    position: wp.vec3


def build(*components):
    return Loop(list(components), device="cpu", rules=FLIGHT_RULES).build()


def reader(name, read, kind="control", host=False):
    return Part(f"/vehicle/{name}", Stage(name, kind, lambda io: None, reads=(read,), host=host))


@pytest.mark.parametrize("kind", ["guide", "control"])
def test_estimate_reader_without_estimator(kind):
    with pytest.raises(BuildError) as error:
        build(reader("pid", Read("estimate", Pose, (1,), default=Pose()), kind=kind, host=kind == "guide"))
    text = str(error.value)
    assert "reads the estimate" in text and "no estimator" in text and "'pid'" in text


def test_guidance_setpoint_that_nobody_reads():
    guidance = host_stage("mission", kind="guide", writes=(Write("setpoint", wp.vec3, (1,)),))
    with pytest.raises(BuildError) as error:
        build(guidance)
    text = str(error.value)
    assert "setpoint" in text and "'mission'" in text and "no stage reads it" in text




def test_without_the_rules_the_engine_names_the_signal_only():
    with pytest.raises(BuildError) as error:
        Loop([reader("pid", Read("estimate", Pose, (1,)))], device="cpu").build()
    assert "no stage writes it" in str(error.value) and "estimator" not in str(error.value)
