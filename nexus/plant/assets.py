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
