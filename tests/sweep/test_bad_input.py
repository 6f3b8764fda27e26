"""Bad sweep files and options: each a one-line error before any run starts (nothing is written to DIR)."""

import os
import subprocess
import sys

import pytest

from nexus.sweep.runner import SweepOptions, prepare
from nexus.sweep.spec import MAX_POINTS_WITHOUT_YES, SweepError
from tests.sweep.conftest import write_sweep


def refused(tmp_path, text: str, **options) -> str:
    path = write_sweep(tmp_path, text)
    with pytest.raises(SweepError) as caught:
        prepare(path, SweepOptions(out=tmp_path / "out", **options))
    message = str(caught.value)
    assert "\n" not in message
    assert not (tmp_path / "out").exists()
    return message


def test_unknown_field_is_named_with_a_suggestion(tmp_path):
    message = refused(tmp_path, '[grid]\nseeed = [0, 1]\n')
    assert message.endswith("sweep.toml: [grid]: parameter 'seeed' is unknown; did you mean 'seed' or 'scene'? "
                            "`nexus params --vehicle astro_max_base` lists every name and what reads it")


def test_wrong_value_type_names_the_field_and_type(tmp_path):
    message = refused(tmp_path, '[grid]\nseed = [0, "one"]\n')
    assert "seed = 'one' is not of type int" in message


def test_a_controller_that_does_not_exist_is_refused(tmp_path):
    assert "choose one of pid" in refused(tmp_path, '[grid]\ncontroller = ["pid", "pdi"]\n')


def test_an_empty_grid_has_no_points(tmp_path):
    assert "empty grid" in refused(tmp_path, '[grid]\nseed = []\n')
    assert "varies nothing" in refused(tmp_path, '[grid]\n')


def test_grid_and_random_together_are_refused(tmp_path):
    assert "exactly one of [grid]" in refused(tmp_path, '[grid]\nseed = [1]\n[random]\ncount = 2\nseed = {low = 0, high = 3}\n')


def test_too_many_points_need_yes(tmp_path):
    # 11 x 11 x 11 = 1331 points, over the bound of 1000.
    text = "[grid]\nseed = [%s]\ntick_hz = [%s]\nsubsteps = [%s]\n" % (
        ", ".join(map(str, range(11))), "100.0, 125.0, 200.0, 250.0, 400.0, 500.0, 625.0, 800.0, 1000.0, 1250.0, 2000.0", ", ".join(map(str, range(1, 12))))
    assert f"1331 points is more than {MAX_POINTS_WITHOUT_YES}" in refused(tmp_path, text)
    spec, points = prepare(write_sweep(tmp_path, text), SweepOptions(out=tmp_path / "out", yes=True))
    assert len(points) == 1331


def test_unknown_prim_and_unknown_attribute_are_named(tmp_path):
    assert "no prim /vehicle/Pid" in refused(tmp_path, '[grid]\n"/vehicle/Pid nexus:kpZ" = [1.0, 2.0]\n')
    message = refused(tmp_path, '[grid]\n"/vehicle/controller nexus:hoverThrst" = [1.0, 2.0]\n')
    assert message.endswith("sweep.toml: parameter '/vehicle/controller nexus:hoverThrst' is unknown; did you mean "
                            "'/vehicle/controller nexus:hoverThrust'? `nexus params --vehicle astro_max_base` lists "
                            "every name and what reads it")
    message = refused(tmp_path, '[grid]\n"/vehicle/controller nexus:kpZ" = [1.0, 2.0]\n')
    assert message.endswith("sweep.toml: parameter '/vehicle/controller nexus:kpZ' is unknown; "
                            "`nexus params --vehicle astro_max_base` lists every name and what reads it")


def test_an_attribute_value_of_the_wrong_type_is_refused(tmp_path):
    assert "does not fit the attribute's type float" in refused(
        tmp_path, '[grid]\n"/vehicle/controller nexus:hoverThrust" = [0.5, "high"]\n')
    assert "float3" in refused(tmp_path, '[grid]\n"/vehicle/controller nexus:positionP" = [[1.0, 1.0]]\n')


def test_px4_binary_missing_or_not_executable(tmp_path):
    base = '[run]\ncontroller = "px4"\n[grid]\nseed = [0]\n[px4]\nbinary = "%s"\n'
    assert "does not exist" in refused(tmp_path, base % "build/px4_sitl_default/bin/px4")
    plain = tmp_path / "px4"
    plain.write_text("not a program")
    assert "is not executable" in refused(tmp_path, base % plain)


def test_a_command_runs_only_with_allow_commands(tmp_path, fake_px4):
    text = ('[run]\ncontroller = "px4"\n[grid]\nseed = [0]\n[px4]\nbinary = "%s"\n'
            'command = ["python3", "fly.py", "{mavlink_url}"]\n') % fake_px4
    assert "--allow-commands" in refused(tmp_path, text)
    prepare(write_sweep(tmp_path, text), SweepOptions(out=tmp_path / "out", allow_commands=True))


def test_a_folder_that_holds_a_sweep_needs_resume(tmp_path):
    (tmp_path / "out" / "runs" / "abc").mkdir(parents=True)
    path = write_sweep(tmp_path, '[grid]\nseed = [0]\n')
    with pytest.raises(SweepError, match="already holds a sweep; pass --resume"):
        prepare(path, SweepOptions(out=tmp_path / "out"))


def test_nothing_in_a_sweep_file_is_evaluated(tmp_path):
    # An expression where a number belongs stays a string, and is refused as one.
    message = refused(tmp_path, '[grid]\nseed = ["__import__(\'os\').system(\'touch pwned\')"]\n')
    assert "is not of type int" in message
    assert not (tmp_path / "pwned").exists()


def test_an_unreachable_ray_address_is_one_line_and_exit_2(tmp_path):
    path = write_sweep(tmp_path, '[run]\nmission = "short"\nduration = 0.1\n[grid]\nseed = [0]\n')
    done = subprocess.run([sys.executable, "-m", "nexus.cli", "sweep", str(path), "--out", str(tmp_path / "out"),
                           "--address", "ray://127.0.0.1:9"], capture_output=True, text=True, timeout=180,
                          # Ray Client's waits per attempt (5 s growing to 30 s by default) set to 1 s: three tries
                          env=os.environ | {"RAY_CLIENT_INITIAL_CONNECTION_TIMEOUT_S": "1",
                                            "RAY_CLIENT_MAX_CONNECTION_TIMEOUT_S": "1"})
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert done.returncode == 2, done.stderr
    # With Ray Client installed (ray[client], in nexus[ray]) Ray tries the address; with plain ray the sweep says
    # what is missing (tests/test_error_options.py checks that message whatever is installed).
    import importlib.util

    why = "cannot reach a Ray cluster" if importlib.util.find_spec("grpc") else "a ray:// address needs Ray Client"
    assert len(errors) == 1 and f"--address ray://127.0.0.1:9: {why}" in errors[0]
    assert not (tmp_path / "out" / "runs").exists()


def test_cuda_points_on_a_cluster_without_a_gpu_are_refused(tmp_path, ray_cpus):
    from nexus.sweep.runner import run_sweep

    path = write_sweep(tmp_path, '[run]\nmission = "short"\ndevice = "cuda"\n[grid]\nseed = [0]\n')
    with pytest.raises(SweepError, match="need a GPU, and the Ray cluster has none"):
        run_sweep(path, SweepOptions(out=tmp_path / "out", progress=False))
    assert not (tmp_path / "out" / "runs").exists()


@pytest.mark.parametrize(("text", "said"), [
    ('[grid]\nseed = [0, -1]\n', "[grid]: seed = -1 is out of bounds; give 0 or more"),
    ('[grid]\ntick_hz = [250.0, 20000.0]\n', "[grid]: tick_hz = 20000.0 is out of bounds; give 10000 or less"),
    ('[run]\nduration = 0.0\n[grid]\nseed = [0]\n', "[run]: duration = 0.0 is out of bounds; give more than 0"),
    ('[random]\ncount = 2\nsubsteps = {low = 0, high = 3}\n', "[random]: substeps: low = 0 is out of bounds; give 1 or more"),
])
def test_a_value_outside_a_run_fields_bounds_is_refused_as_the_command_line_would(tmp_path, text, said):
    # The bounds are RunConfig's (the same the command line's --seed, --tick-hz, --duration, --substeps take).
    assert said in refused(tmp_path, text)
