"""``nexus --help`` and the light commands start without Warp or Newton; ``run`` and ``plan`` make their
flight options (from RunConfig and the controller registry) only when they are used."""

from __future__ import annotations

import subprocess
import sys

#: Every command ``nexus --help`` lists, in its order (alphabetical: click's).
COMMANDS = ["bench", "export", "optimize", "params", "plan", "plot", "px4", "render-peer", "replay", "run", "runs", "schema", "sweep", "test", "train",
            "vehicle", "view"]


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)


def _loaded_after(args: list[str]) -> tuple[list[str], str]:
    """The heavy packages loaded once ``nexus ARGS`` has run in a fresh interpreter, and what it printed."""
    done = _python(
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from nexus.cli import main\n"
        f"result = CliRunner().invoke(main, {args!r})\n"
        "assert result.exit_code == 0, result.output\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'warp', 'newton'}))\n"
        "print(result.output)\n"
    )
    assert done.returncode == 0, done.stderr
    first, _, output = done.stdout.partition("\n")
    return eval(first), output  # noqa: S307 (a list of names this test printed)


def test_nexus_help_lists_every_command_and_loads_neither_warp_nor_newton():
    loaded, output = _loaded_after(["--help"])
    assert loaded == []
    listed = [line.split()[0] for line in output.split("Commands:")[1].splitlines() if line.strip()]
    assert listed == COMMANDS


def test_the_help_of_a_command_without_flight_options_loads_neither():
    for command in (["runs"], ["sweep"], ["plot"], ["view"], ["replay"], ["schema"], ["px4", "mission"],
                    ["vehicle", "new"], ["export"]):
        loaded, _ = _loaded_after([*command, "--help"])
        assert loaded == [], command


def test_run_makes_its_flight_and_controller_options_when_its_help_is_shown():
    loaded, output = _loaded_after(["run", "--help"])
    assert loaded == ["newton", "warp"]  # RunConfig and the registry's controllers build on them
    # The flight options come first, a controller's flag among them, then --duration, then run's own.
    assert output.index("--vehicle TEXT") < output.index("--px4-port") < output.index("--duration")
    assert output.index("--duration") < output.index("--out DIRECTORY")
    assert "by controller: pid 60, px4 300, hold 10," in " ".join(output.split())  # default run lengths [s]
