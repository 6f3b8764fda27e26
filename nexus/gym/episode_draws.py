"""Domain randomisation per episode: a world that starts an episode draws fresh variation values.

World ``k``'s values for its episode ``e`` come from the seed branch
``RngTree(seed).child("episode/<e>")`` (streams ``episode/<e>/vary/<name>/<k>``),
so they depend on the environment's seed, the world and the episode index only:
world 0 of one world draws what world 0 of 64 does. :class:`EpisodeDraws`
writes them into the device arrays their owners read (the base body's mass,
the rotors' thrust and drag factors, the base force, the ESC lag factor, the
sensors' noise factor), in place, so a captured graph keeps its pointers. The
environment calls it from its one host exchange per step, for the worlds that
reset in that step only; a step where no world reset costs one ``any()``.

A parameter named in :data:`PER_EPISODE` is drawn afresh every episode. The
start placement (``start_x``, ``start_y``, ``start_yaw``) is refused: the task
draws each episode's start itself. Every other parameter (the centre of mass,
faults, the wind field, the battery, ground effect, IMU biases) is drawn once
per world when the environment is built, from the flight's seed.
"""

from __future__ import annotations

from pathlib import Path

import newton
import numpy as np
import warp as wp

from nexus.core.arrays import declaring
from nexus.core.errors import BuildError
from nexus.core.rng import RngTree
from nexus.sensors.faults import sensor_label
from nexus.sensors.sensor import Sensor
from nexus.vocab import data_file
from nexus.runtime.params import variation_names
from nexus.worlds.variation import load_variation

#: The variation parameters a world draws afresh at every episode.
PER_EPISODE = ("mass", "thrust_scale", "drag_scale", "base_force_x", "base_force_y", "base_force_z", "esc_lag_scale",
               "noise_scale")
#: Parameters the environment refuses: its task draws the start state of every episode.
REFUSED = {"start_x": "the task draws each episode's start position",
           "start_y": "the task draws each episode's start position",
           "start_yaw": "the task draws each episode's start heading"}


class _Unread(Exception):
    """A training variation file that does not read: left to the variation checker's own errors."""


def refuse_start_keys(vary: str) -> None:
    """Refuse the start placement in a training variation file, before anything is built (a file that cannot
    be read or parsed is left to the variation checker's own errors). The gym's draws are a variation file
    (its tables declared in :mod:`nexus.worlds.variation_tables`) without the keys of :data:`REFUSED`."""
    try:
        keys = data_file.read_toml(Path(vary), unreadable=_Unread, invalid=_Unread)
    except _Unread:
        return
    for name in keys:
        if name in REFUSED:
            text = Path(vary).read_text(encoding="utf-8")
            line = next((n for n, row in enumerate(text.splitlines(), 1) if row.lstrip().startswith(name)), None)
            where = f"{vary}:{line}" if line else str(vary)
            raise BuildError(f"{where}: parameter {name!r}: {REFUSED[name]}; remove it from the variation file "
                             "for training")


def episode_branch(seed: int, episode: int) -> RngTree:
    """The tree episode ``episode`` of every world draws its values from (world ``k`` its streams ``.../<k>``)."""
    return RngTree(int(seed)).child(f"episode/{int(episode)}")


class EpisodeDraws:
    """Writes each resetting world's fresh draws into the arrays of the flight's owners (see the module)."""

    def __init__(self, flight, vary: str):
        plant = flight.vehicle.plant
        components = list(flight.loop.components)
        sensors = [sensor_label(c) for c in components if isinstance(c, Sensor)]
        self.variation = load_variation(vary, rotors=len(plant.rotors), sensors=sensors,
                                        names=variation_names(flight.options.vehicle))
        for entry in self.variation.entries:  # an alias of a start key (the file's own names are checked earlier)
            if entry.name in REFUSED:
                raise BuildError(f"{vary}:{entry.line}: parameter {entry.name!r}: {REFUSED[entry.name]}; remove it "
                                 "from the variation file for training")
        self.names = tuple(name for name in self.variation.names if name in PER_EPISODE)
        self.once = tuple(name for name in self.variation.names if name not in PER_EPISODE)
        self.plant = plant
        #: The rotor forces that hold the drawn ``thrust_scale`` and ``drag_scale`` by name (propellers, ground effect).
        self.scaled = [c for c in declaring(components, "thrust_scale") if "thrust_scale" in c.arrays]
        #: The components holding a per-world ``force`` array by name (the base force).
        self.pushed = [c for c in declaring(components, "force") if "force" in c.arrays]
        #: The components holding a per-world ``lag_scale`` array by name (the ESCs).
        self.lagged = [c for c in declaring(components, "lag_scale") if "lag_scale" in c.arrays]
        self.sensors = [c for c in components if isinstance(c, Sensor)]
        #: The run-wide index of this flight's world 0 (a shard of a sharded environment flies a later range).
        self.first_world = int(flight.options.first_world)

    def apply(self, seed: int, worlds, episodes) -> None:
        """Draw and write the values of this flight's world ``worlds[i]`` (the run-wide world ``first_world +
        worlds[i]``) for its episode ``episodes[i]``."""
        if not self.names or len(worlds) == 0:
            return
        drawn = [(int(w), self.variation.draw_world(episode_branch(seed, e), self.first_world + int(w)))
                 for w, e in zip(worlds, episodes)]
        names = set(self.names)
        plant = self.plant
        if "mass" in names:
            mass, inverse = plant.model.body_mass.numpy(), plant.model.body_inv_mass.numpy()
            for w, values in drawn:
                body = plant.base + w * plant.bodies_per_world
                mass[body], inverse[body] = values["mass"], 1.0 / values["mass"]
            plant.model.body_mass.assign(mass)
            plant.model.body_inv_mass.assign(inverse)
            plant.solver.notify_model_changed(newton.ModelFlags.BODY_INERTIAL_PROPERTIES)
        for name in ("thrust_scale", "drag_scale"):
            if name in names:
                for holder in self.scaled:
                    _write_rows(holder.arrays[name], drawn, name)
        for axis, name in enumerate(("base_force_x", "base_force_y", "base_force_z")):
            if name in names:
                for component in self.pushed:
                    rows = component.arrays.force.numpy()
                    for w, values in drawn:
                        rows[w, axis] = values[name]
                    component.arrays.force.assign(rows)
        if "esc_lag_scale" in names:
            for component in self.lagged:
                _write_rows(component.arrays.lag_scale, drawn, "esc_lag_scale")
        if "noise_scale" in names:
            for sensor in self.sensors:
                _write_rows(sensor.noise_scale, drawn, "noise_scale")

    def values(self, name: str) -> np.ndarray:
        """Every world's current value of ``name`` as its owner's array holds it (for tests and inspection)."""
        plant = self.plant
        if name == "mass":
            return plant.model.body_mass.numpy()[plant.base_bodies()]
        if name in ("thrust_scale", "drag_scale"):
            return self.scaled[0].arrays[name].numpy()
        if name.startswith("base_force_"):
            return self.pushed[0].arrays.force.numpy()[:, "xyz".index(name[-1])]
        if name == "esc_lag_scale":
            return self.lagged[0].arrays.lag_scale.numpy()
        if name == "noise_scale":
            return self.sensors[0].noise_scale.numpy()
        raise KeyError(name)


def _write_rows(array: wp.array, drawn, name: str) -> None:
    rows = array.numpy()
    for w, values in drawn:
        rows[w] = values[name]
    array.assign(rows)
