"""The points of a sweep: each one run's whole configuration, and its id (a hash of that configuration).

The id names the point's folder (``DIR/runs/<id>/``), so the same
configuration always lands in the same folder: ``--resume`` finds what was
already flown, and a point listed twice (a random draw that repeats) flies
once.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from nexus.control.registry import with_setup_table
from nexus.core.errors import BuildError
from nexus.runtime.config import RunConfig
from nexus.sweep.overrides import check_attributes
from nexus.sweep.spec import Axis, SweepError, SweepSpec

#: Hex digits of the SHA-256 a point id keeps (64 bits: no clash in any sweep one could run).
ID_DIGITS = 16


@dataclass
class Point:
    id: str
    #: The varied values, by axis key (what sweep.parquet's parameter columns hold).
    values: dict
    #: The run's configuration (a RunConfig).
    config: object
    #: ``"<prim> <attribute>"`` -> value, applied through the override layer.
    attributes: dict = field(default_factory=dict)
    #: ``[px4]`` settings as a dict, or None.
    px4: dict | None = None

    def as_dict(self) -> dict:
        """JSON-ready: what a worker receives and what ``sweep.json`` lists."""
        return {"id": self.id, "values": self.values, "config": self.config.as_dict(),
                "attributes": self.attributes, "px4": self.px4}


def _digest(path: str | None) -> str | None:
    if not path:
        return None
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None


def point_id(config: dict, attributes: dict, px4: dict | None) -> str:
    """The hash of a point's whole configuration (the run's fields, the attributes, PX4, the variation file's bytes)."""
    whole = {"config": config, "attributes": attributes, "px4": px4, "vary_sha256": _digest(config.get("vary"))}
    text = json.dumps(whole, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:ID_DIGITS]


def _draw(axis: Axis, rng: np.random.Generator):
    spec = axis.draw
    if "values" in spec:
        value = spec["values"][int(rng.integers(len(spec["values"])))]
        return value
    low, high = spec["low"], spec["high"]
    if isinstance(low, int) and isinstance(high, int):
        return int(rng.integers(low, high + 1))
    return float(rng.uniform(low, high))


def combinations(spec: SweepSpec) -> list[dict]:
    """The varied values of every point, in order: the grid's cross product (last axis fastest) or the draws."""
    if spec.mode == "grid":
        return [dict(zip([a.key for a in spec.axes], combo)) for combo in itertools.product(*(a.values for a in spec.axes))]
    rng = np.random.default_rng(spec.random_seed)
    return [{axis.key: _draw(axis, rng) for axis in spec.axes} for _ in range(spec.count)]


def count(spec: SweepSpec) -> int:
    """How many points the file asks for (before repeats are merged), without listing them."""
    if spec.mode == "grid":
        return int(np.prod([len(a.values) for a in spec.axes], dtype=np.int64))
    return spec.count


def expand(spec: SweepSpec) -> list[Point]:
    """Every point of the sweep, checked as a run would check it (one-line :class:`SweepError`), repeats merged."""
    try:
        base = RunConfig(**spec.base)
    except BuildError as error:  # its controller_options table, read by the controller's options class
        raise SweepError(f"{spec.path}: [run]: {error}") from None
    points: dict[str, Point] = {}
    px4 = spec.px4.as_dict() if spec.px4 else None
    for values in combinations(spec):
        fields = {k: v for k, v in values.items() if not k.startswith("/")}
        attributes = {k: v for k, v in values.items() if k.startswith("/")}
        try:
            config = replace(base, **fields)
            config.check()
            config.dt_ns  # noqa: B018 (a tick rate that is no whole number of nanoseconds is refused here)
        except BuildError as error:
            raise SweepError(f"{spec.path}: the point {values} cannot fly: {error}") from None
        if px4 is not None and config.controller not in with_setup_table("px4"):
            wanted = " or ".join(f'controller = "{name}"' for name in with_setup_table("px4"))
            raise SweepError(f"{spec.path}: [px4] is given but the point {values} flies controller "
                             f"{config.controller!r}; set {wanted} in [run]")
        pid = point_id(config.as_dict(), attributes, px4)
        points.setdefault(pid, Point(pid, values, config, attributes, px4))
    if not points:
        raise SweepError(f"{spec.path}: the sweep has no points")
    return list(points.values())


def varied_keys(spec: SweepSpec) -> list[str]:
    return [a.key for a in spec.axes]


def check_attribute_values(spec: SweepSpec, points: list[Point]) -> None:
    """Each attribute axis names a prim and attribute the vehicle or scene has, and each value fits its type."""
    by_files: dict[tuple[str, str], dict[str, list]] = {}
    ranges = {a.key: [a.draw["low"], a.draw["high"]] for a in spec.axes
              if a.is_attribute and a.draw is not None and "low" in a.draw}  # a draw's whole range, not the draws
    for point in points:
        if not point.attributes:
            continue
        files = (point.config.vehicle, point.config.scene)
        for key, value in point.attributes.items():
            by_files.setdefault(files, {}).setdefault(key, []).append(value)
    for (vehicle, scene), values in by_files.items():
        check_attributes(spec.path, vehicle, scene, values, ranges)


__all__ = ["Point", "SweepError", "expand", "count", "point_id", "combinations", "varied_keys",
           "check_attribute_values"]
