"""``nexus run`` on bad files, as a user runs it: one clear line, a non-zero exit, no traceback.

One subprocess per case (each pays Python, Newton and Warp start-up, about
3 s on an idle core), two at a time; one case per path an error takes through
the CLI: USD parsing, the mass checks before Newton, the ESC check, a scene's
mission after Newton loaded, and ``--device cuda`` without a GPU. The
in-process tests in ``test_bad_input.py`` cover each check's variants.
"""

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from nexus.core.device import cuda_available
from nexus.plant.assets import ROOT

VEHICLE = ROOT / "vehicles" / "astro_max_base.usda"
SCENE = ROOT / "scenes" / "empty.usda"


def _edit(source: Path, target: Path, old: str, new: str) -> Path:
    text = source.read_text()
    assert old in text, old
    target.write_text(text.replace(old, new, 1))
    return target


def _cases(tmp: Path) -> dict:
    """case -> (nexus run arguments, what the one error line must contain)."""
    vehicle_rotor = '''            uniform token[] xformOpOrder = ["xformOp:translate"]
            float physics:mass = 0.2'''
    negative_rotor = _edit(VEHICLE, tmp / "negative_rotor.usda", vehicle_rotor, vehicle_rotor.replace("0.2", "-0.2"))
    truncated = tmp / "truncated.usda"
    truncated.write_text(VEHICLE.read_text()[:3000])
    channel = _edit(VEHICLE, tmp / "channel.usda", "int nexus:channel = 3", "int nexus:channel = 16")
    mission = _edit(SCENE, tmp / "scene.usda", "float nexus:altitude = 5", "float nexus:altitude = -5")
    return {
        # Before the mass checks, MuJoCo's 70-line traceback.
        "negative-rotor-mass": (["--vehicle", negative_rotor],
                                [f"{negative_rotor}: prim /vehicle/body/rotor_1 attribute 'physics:mass' is -0.2"]),
        # The file is cut at character 3000, inside /vehicle/body/base/arm_1 (line 74 of the vehicle).
        "truncated": (["--vehicle", truncated], [f"{truncated}:74:", "USD cannot parse this file"]),
        "channel-16": (["--vehicle", channel], [f"{channel}: ESC prim /vehicle/esc_4: nexus:channel is 16"]),
        "mission-attribute": (["--scene", mission],
                              [f"{mission}: mission prim /scene/mission: nexus:altitude is -5 m; it must be > 0"]),
    }


def _nexus_run(args: list, out: Path, device: str = "cpu") -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "nexus.cli", "run", "--device", device, "--quiet", "--duration", "0.1",
               "--out", str(out), *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=ROOT)


def test_bad_files_end_in_one_clear_line(tmp_path):
    cases = _cases(tmp_path)
    with ThreadPoolExecutor(max_workers=2) as pool:
        runs = {name: pool.submit(_nexus_run, args, tmp_path / f"run-{name}") for name, (args, _) in cases.items()}
    for name, (_, expected) in cases.items():
        done = runs[name].result()
        said = done.stdout + done.stderr
        assert done.returncode != 0, (name, said)
        assert "Traceback" not in said, (name, said)
        assert "Warp CUDA warning" not in said, (name, said)  # --device cpu asked for no GPU
        lines = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
        assert len(lines) == 1, (name, said)  # printed once
        for part in expected:
            assert part in lines[0], (name, lines[0])


@pytest.mark.skipif(cuda_available(), reason="this machine has a CUDA device")
def test_cuda_without_a_gpu_is_a_clear_error(tmp_path):
    done = _nexus_run([], tmp_path / "run", device="cuda")
    said = done.stdout + done.stderr
    assert done.returncode != 0
    assert "Traceback" not in said
    assert "--device cuda was asked for, but Warp finds no CUDA device on this machine" in said
