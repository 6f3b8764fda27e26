"""Every option an error message names is an option of the command that shows it.

A message that sends the user to an option the command lacks is a dead end
(issue 37: ``nexus replay --keep`` said "pass --overwrite", ``nexus run --view``
said "pass --port"). The walk reads every ``raise`` in the package, the
option names passed as ``option=``/``*_option=`` arguments and the
``*_OPTION`` constants, and checks each ``--name`` against the click
commands' own options: for a module that belongs to one command, that
command's; for the flight modules that ``run`` and ``plan`` share, ``run``'s.
A message that sends the user to another command names it (``fly it again
with `nexus run --record-every 1```): its options are that command's.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import click
import pytest

from nexus.cli import main

PACKAGE = Path(__file__).resolve().parents[1] / "nexus"
OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9]*(?:-[a-z0-9]+)*")
#: ``nexus <command>`` inside a message: the options after it are that command's.
NAMED_COMMAND = re.compile(r"nexus ([a-z][a-z0-9-]*)")

#: Modules (or folders) whose errors only one command shows, by hand: module -> command path.
OWNERS = {
    "runtime/replay.py": "replay",
    "viz/live.py": "run",  # nexus run --view
    "viz/": "view",
    "commands/world_of.py": "run",
    "commands/optimize.py": "optimize",
    "commands/vehicle.py": "vehicle new",
    "px4/mission.py": "px4 mission",  # Px4Mission: the client `nexus px4 mission` flies
    "airframe/": "vehicle new",
    "diff/": "optimize",
    "sweep/": "sweep",
    "schemas/": "schema",
    "bench/": "bench",
    "gym/": "train",
    "scenario/": "test",
    "export/": "export",
}
#: Options of other programs that messages quote: `ray start --head`.
OTHER_PROGRAMS = {"--head"}
#: Errors of these modules name the options of these commands too (a sweep file's and a flight's).
ALSO = {"sweep": ("run",), "optimize": ("run",), "view": ("plot",), "test": ("run",)}


def command_options(path: str) -> set[str]:
    command: click.Command = main
    for name in path.split():
        command = command.commands[name]  # type: ignore[attr-defined]
    return {opt for param in command.params for opt in (*param.opts, *param.secondary_opts) if opt.startswith("--")}


def owner(module: Path) -> str:
    relative = module.relative_to(PACKAGE).as_posix()
    for prefix, command in OWNERS.items():
        if relative == prefix or (prefix.endswith("/") and relative.startswith(prefix)):
            return command
    name = module.stem.replace("_", "-")
    if relative.startswith("commands/") and name in main.commands:  # one command's own module
        return name
    return "run"


def cli_command_of(tree: ast.Module) -> dict[int, str]:
    """Line -> command for the click commands defined in nexus/cli.py (its own function name)."""
    lines = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and any("command" in ast.unparse(d) for d in node.decorator_list):
            name = node.name.replace("_", "-")
            for line in range(node.lineno, (node.end_lineno or node.lineno) + 1):
                lines[line] = name
    return lines


def named_options(tree: ast.Module) -> list[tuple[int, str, str | None]]:
    """(line, --option, command the text names before it or None) for every option named in a raised message,
    an ``*option=`` argument or an ``*_OPTION``."""
    found = []

    def strings(node):
        for sub in ast.walk(node):
            if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                yield sub

    for node in ast.walk(tree):
        texts = []
        if isinstance(node, ast.Raise) and node.exc is not None:
            texts = list(strings(node.exc))
        elif isinstance(node, ast.Call):
            texts = [s for k in node.keywords if k.arg and k.arg.endswith("option") for s in strings(k.value)]
        elif isinstance(node, ast.Assign) and any(isinstance(t, (ast.Name, ast.Tuple)) and "_OPTION" in ast.unparse(t)
                                                  for t in node.targets):
            texts = list(strings(node.value))
        elif isinstance(node, ast.arguments):
            names = [a.arg for a in (*node.posonlyargs, *node.args)][-len(node.defaults):] if node.defaults else []
            texts = [s for name, d in zip(names, node.defaults) if name.endswith("option") for s in strings(d)]
            texts += [s for a, d in zip(node.kwonlyargs, node.kw_defaults) if d is not None and a.arg.endswith("option")
                      for s in strings(d)]
        for text in texts:
            for match in OPTION.finditer(text.value):
                named = NAMED_COMMAND.findall(text.value[:match.start()])
                found.append((text.lineno, match.group(), named[-1] if named else None))
    return found


def walk() -> list[tuple[str, int, str, str]]:
    """(module, line, option, command) for every option named in the package's messages."""
    cases = []
    for module in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(module.read_text())
        in_cli = cli_command_of(tree) if module.name == "cli.py" else {}
        for line, option, named in named_options(tree):
            if option in OTHER_PROGRAMS:
                continue
            command = named if named in main.commands else in_cli.get(line, owner(module))
            cases.append((module.relative_to(PACKAGE).as_posix(), line, option, command))
    return cases


def test_the_walk_finds_the_messages_that_name_options():
    # A walk that found nothing would pass whatever the messages say: these four are known to be there.
    cases = {(module, option) for module, _, option, _ in walk()}
    assert {("runtime/replay.py", "--keep"), ("viz/live.py", "--view-port"), ("runtime/run.py", "--overwrite"),
            ("sweep/cluster.py", "--address")} <= cases


@pytest.mark.parametrize("module, line, option, command", walk(), ids=lambda v: str(v))
def test_every_option_a_message_names_is_the_commands_own(module, line, option, command):
    commands = (command, *ALSO.get(command, ()))
    known = set().union(*(command_options(c) for c in commands))
    assert option in known, (f"nexus/{module}:{line} names {option}, which `nexus {command}` does not have "
                             f"(its options: {', '.join(sorted(command_options(command)))})")


# -- the messages issue 37 found naming options that do not exist ------------------------------


def test_replay_keep_into_a_run_folder_names_only_replays_own_options(tmp_path):
    from click.testing import CliRunner

    held = tmp_path / "held"
    held.mkdir()
    (held / "run.log").write_text("an earlier run\n")
    result = CliRunner().invoke(main, ["replay", str(tmp_path), "--keep", str(held)])
    assert result.exit_code == 2, result.output
    assert f"--keep {held} already holds a run (run.log); choose another folder" in result.output
    assert "--overwrite" not in result.output and "--out" not in result.output
    assert (held / "run.log").read_text() == "an earlier run\n"


def test_run_view_on_a_busy_port_names_view_port(tmp_path):
    import socket

    from click.testing import CliRunner

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = CliRunner().invoke(main, ["run", "--view", "--view-port", str(port), "--controller", "hold",
                                           "--device", "cpu", "--duration", "0.2", "--out", str(tmp_path / "r")])
    assert result.exit_code == 2, result.output
    assert (f"port {port} on 127.0.0.1 is in use (another `nexus view`?); pass --view-port with a free port, or "
            "--view-port 0 to let the system pick one") in result.output
    assert not (tmp_path / "r").exists()


def test_mpc_on_a_scene_without_a_reference_names_the_scenes_that_give_one():
    from click.testing import CliRunner

    # scenes/empty.usda has a mission but no figure eight or waypoints; figure_eight, obstacles and
    # waypoints have one of them.
    result = CliRunner().invoke(main, ["plan", "--controller", "mpc", "--scene", "empty", "--device", "cpu"])
    assert result.exit_code == 2, result.output
    assert ("host stage 'mpc' (control) of '/vehicle/controller' follows a reference trajectory, but the scene gives "
            "none (it has no figure-eight or waypoints prim); fly it in a scene that does: --scene figure_eight, "
            "obstacles or waypoints.") in result.output
    assert "no stage writes it" not in result.output


def test_a_ray_client_address_without_ray_client_says_to_install_it(monkeypatch):
    import sys

    pytest.importorskip("ray")
    from nexus.sweep.cluster import connect
    from nexus.sweep.spec import SweepError

    monkeypatch.setitem(sys.modules, "grpc", None)  # plain `ray`: Ray Client's transport is missing
    with pytest.raises(SweepError) as caught:
        connect("ray://10.0.0.5:10001", None)
    assert str(caught.value) == ("--address ray://10.0.0.5:10001: a ray:// address needs Ray Client, which plain ray "
                                 "lacks; pip install 'nexus[ray]' (it installs ray[client]) or pip install 'ray[client]'")
