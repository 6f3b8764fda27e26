"""``import nexus``: a small public face, loaded lazily, with no side effect but the USD schemas."""

from __future__ import annotations

import subprocess
import sys

import nexus

#: The names the package promises (docs/running.md and nexus/__init__.py), by group.
FLIGHTS = ["RunConfig", "build_flight", "run_flight", "Flight", "RunSummary", "set_verbose"]
COMPONENTS = ["Component", "Spec", "Param", "Input", "Output", "StateVar", "Stage", "Read", "Write", "Loop"]
SAMPLES = ["BodyState", "ImuSample", "MagSample", "BaroSample", "GpsSample", "PoseTwist", "Setpoint"]


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def test_importing_nexus_loads_neither_warp_nor_newton_but_registers_the_schemas():
    done = _python(
        "import sys, nexus\n"
        "assert 'warp' not in sys.modules and 'newton' not in sys.modules, sorted(m for m in sys.modules if m.split('.')[0] in ('warp', 'newton'))\n"
        "from pxr import Usd\n"
        "assert Usd.SchemaRegistry().FindAppliedAPIPrimDefinition('NexusImuAPI') is not None\n"
        "print('ok')\n"
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_a_public_name_loads_its_module_on_first_use():
    done = _python("import sys, nexus\nnexus.RunConfig\nprint('newton' in sys.modules, nexus.RunConfig().tick_hz)\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "250.0"]  # the flight module builds on Newton


def test_all_and_dir_list_the_public_names_and_each_resolves():
    names = FLIGHTS + COMPONENTS + SAMPLES
    assert sorted(set(nexus.__all__) - {"__version__"}) == sorted(names)
    assert set(names) <= set(dir(nexus))
    from nexus.core.spec import Spec
    from nexus.runtime.config import RunConfig
    from nexus.sensors.samples import ImuSample

    assert nexus.Spec is Spec and nexus.RunConfig is RunConfig and nexus.ImuSample is ImuSample
    assert all(getattr(nexus, name) is not None for name in names)


def test_an_unknown_name_is_an_attribute_error():
    try:
        nexus.build_the_drone
    except AttributeError as error:
        assert "build_the_drone" in str(error)
    else:
        raise AssertionError("nexus.build_the_drone did not raise")


#: The Python API's first flight: the differentiable rollout's package, then 16 ticks of the default mission.
FLY = ("from nexus.diff import Rollout\n"
       "from nexus import RunConfig, build_flight\n"
       "flight = build_flight(RunConfig(), 'cpu')\n"
       "flight.loop.advance(16)\n"
       "print('flew', flight.loop.ticks)\n")


def _fly(env: dict) -> subprocess.CompletedProcess:
    import os

    return subprocess.run([sys.executable, "-c", FLY], capture_output=True, text=True, timeout=900,
                          env={**{k: v for k, v in os.environ.items() if k != "NEXUS_VERBOSE"}, **env})


def test_the_python_api_keeps_warps_banner_and_module_lines_off_stdout():
    quiet = _fly({})
    assert quiet.returncode == 0, quiet.stderr
    assert quiet.stdout == "flew 16\n"  # no "Warp 1.19.0 initialized", no "Module ... load on device"


def test_nexus_verbose_shows_them():
    loud = _fly({"NEXUS_VERBOSE": "1"})
    assert loud.returncode == 0, loud.stderr
    assert loud.stdout.startswith("Warp ") and "initialized" in loud.stdout.splitlines()[0]
    assert any(line.startswith("Module ") for line in loud.stdout.splitlines())
    assert loud.stdout.endswith("flew 16\n")
