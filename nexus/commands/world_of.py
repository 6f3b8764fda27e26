"""``nexus run --world-of RUN:I``: world I of a many-world run, flown alone (``RUN:I:K``: its vehicle K alone).

World I of a batch draws every random stream from the seed tree's branch of
world I and flies its drawn values; a one-world run given the same branch
(``first_world = I``) and the same values computes the same bits, column for
column, on a CPU. RUN's own run.json gives every setting, so the flight is
that world's and nothing else. A world of a fleet (``--vehicles``) flies with all
its vehicles; ``RUN:I:K`` flies vehicle K of world I alone, with that vehicle's
branch and place in the line: the same bits as in the fleet when the fleet flew
``--no-vehicle-contact`` (sharing a Newton world, vehicles share its contact
solve, and the bits differ even when they never touch).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from nexus.core.errors import BuildError
from nexus.runtime.config import RunConfig
from nexus.runtime.run import values_from_json
from nexus.runtime.run_folder import RunFolder


class WorldOfError(BuildError):
    """``--world-of`` names no run, or a world the run did not fly."""

    reason = "bad-world-of"


def parse_world_of(text: str) -> tuple[Path, int, int | None]:
    """``RUN:I`` -> (run folder, world index, None); ``RUN:I:K`` -> (run folder, world index, vehicle index)."""
    folder, sep, index = text.rpartition(":")
    if not sep or not folder or not index.strip().isdigit():
        raise WorldOfError(f"--world-of {text}: give the run's folder and a world index, as RUN:I (e.g. runs/mc:5), "
                           "or RUN:I:K for vehicle K of world I")
    inner, sep, world = folder.rpartition(":")
    if sep and inner and world.strip().isdigit() and not Path(folder).is_dir():
        return Path(inner), int(world), int(index)
    return Path(folder), int(index), None


def world_of_run(text: str) -> tuple[RunConfig, list[dict]]:
    """The one-world configuration and drawn values that fly world I of RUN alone."""

    folder, index, vehicle = parse_world_of(text)
    run = RunFolder(folder, WorldOfError).require(record=False)
    info, path = run.info, run.info_path
    options = RunConfig.from_dict(info.get("options"), str(path))
    worlds = int(info.get("worlds", options.worlds))
    first = int(info.get("first_world", options.first_world))
    if not first <= index < first + worlds:
        raise WorldOfError(f"--world-of {text}: {folder} flew worlds {first}..{first + worlds - 1}; "
                           f"choose one of them")
    values = values_from_json(info.get("world_values") or [{}] * worlds)
    if len(values) != worlds:
        raise WorldOfError(f"{path}: world_values holds {len(values)} worlds, but the run flew {worlds}")
    alone = replace(options, worlds=1, first_world=index, record_mode="full", vary=None)
    vehicles = int(info.get("vehicles", options.vehicles))
    slots = values_from_json(info.get("vehicle_values") or []) if vehicles > 1 else []
    if vehicle is None and slots:  # a fleet's world: each of its vehicles with its own values
        return alone, slots[(index - first) * vehicles : (index - first + 1) * vehicles]
    if vehicle is not None:
        if not 0 <= vehicle < vehicles:
            raise WorldOfError(f"--world-of {text}: {folder} flew {vehicles} vehicle{'s' * (vehicles != 1)} a world "
                               f"(0..{vehicles - 1}); choose one of them")
        alone = replace(alone, vehicles=1, first_vehicle=options.first_vehicle + vehicle)
        if slots:
            return alone, [slots[(index - first) * vehicles + vehicle]]
    return alone, [values[index - first]]
