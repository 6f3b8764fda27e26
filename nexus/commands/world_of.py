"""``nexus run --world-of RUN:I``: world I of a many-world run, flown alone.

World I of a batch draws every random stream from the seed tree's branch of
world I and flies its drawn values; a one-world run given the same branch
(``first_world = I``) and the same values computes the same bits, column for
column, on a CPU. RUN's own run.json gives every setting, so the flight is
that world's and nothing else.
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


def parse_world_of(text: str) -> tuple[Path, int]:
    """``RUN:I`` -> (run folder, world index)."""
    folder, sep, index = text.rpartition(":")
    if not sep or not folder or not index.strip().isdigit():
        raise WorldOfError(f"--world-of {text}: give the run's folder and a world index, as RUN:I (e.g. runs/mc:5)")
    return Path(folder), int(index)


def world_of_run(text: str) -> tuple[RunConfig, list[dict]]:
    """The one-world configuration and drawn values that fly world I of RUN alone."""

    folder, index = parse_world_of(text)
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
    return alone, [values[index - first]]
