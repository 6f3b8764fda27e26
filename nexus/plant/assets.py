"""Finding vehicle and scene files by name or path."""

from __future__ import annotations

from pathlib import Path

from nexus.core.errors import BuildError

#: The repository root, which holds ``vehicles/`` and ``scenes/``.
ROOT = Path(__file__).resolve().parents[2]
FOLDERS = {"vehicle": ROOT / "vehicles", "scene": ROOT / "scenes"}
SUFFIXES = (".usda", ".usd", ".usdc")


def available(kind: str) -> list[str]:
    """Names of the shipped assets of ``kind`` (``vehicle`` or ``scene``)."""
    folder = FOLDERS[kind]
    if not folder.is_dir():
        return []
    return sorted(p.stem for p in folder.iterdir() if p.suffix in SUFFIXES)


def resolve_asset(kind: str, name_or_path: str | Path) -> Path:
    """The USD file for ``--vehicle``/``--scene``: a shipped name or a path to a file."""
    text = str(name_or_path)
    candidate = Path(text).expanduser()
    if candidate.suffix in SUFFIXES or "/" in text or candidate.is_file():
        if candidate.is_file():
            return candidate.resolve()
        raise BuildError(f"{kind} file '{text}' does not exist; give a path to a .usda file or one of: "
                         f"{', '.join(available(kind)) or '(none shipped)'}")
    for suffix in SUFFIXES:
        path = FOLDERS[kind] / f"{text}{suffix}"
        if path.is_file():
            return path
    raise BuildError(
        f"unknown {kind} '{text}'; available {kind}s in {FOLDERS[kind]}: "
        f"{', '.join(available(kind)) or '(none)'}, or give a path to a .usda file"
    )


#: A vehicle layer over another vehicle file: ``{base}`` sublayered, ``{prims}`` added under its base body.
_OVER_BASE_BODY = """#usda 1.0
(
    defaultPrim = "vehicle"
    kilogramsPerUnit = 1
    metersPerUnit = 1
    subLayers = [@{base}@]
    upAxis = "Z"
)

over "vehicle"
{{
    over "body"
    {{
        over "base"
        {{
{prims}
        }}
    }}
}}
"""


def with_base_prims(path: str | Path, prims: str, base: str | Path = "astro_max_base") -> Path:
    """Write to ``path`` a vehicle that is ``base`` (a shipped name or a file) with ``prims`` (USD text)
    added under its base body: how benchmarks and tests mount a sensor without a vehicle file of its own."""
    path = Path(path)
    path.write_text(_OVER_BASE_BODY.format(base=resolve_asset("vehicle", base), prims=prims))
    return path
