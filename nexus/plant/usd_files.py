"""Opening a vehicle or scene file: one clear line for every way the file itself can be bad.

USD reports a syntax error as a multi-line ``Tf.ErrorException`` naming its
own C++ sources, and a missing sublayer only as a printed warning; Newton's
importer then reads non-SI units as SI with a warning. Here each becomes one
``BuildError`` naming the file (and line and column where USD gives them)
before the stage's Nexus prims (:mod:`nexus.plant.usd_checks`) and mass
properties (:mod:`nexus.plant.mass_checks`) are checked.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

from pxr import Tf, Usd, UsdGeom, UsdPhysics

from nexus import schemas
from nexus.core.errors import BuildError
from nexus.plant.mass_checks import check_mass_properties
from nexus.plant.usd_checks import check_stage

#: ``<file>:<line>:<column>: <what>`` inside a USD parse error.
_PARSE_ERROR = re.compile(r"(?P<file>[^\s'@<>]+):(?P<line>\d+):(?P<column>\d+): (?P<what>[^\n]*)")
#: The commentary of each ``Error in '...' at line N in file F : '<commentary>'`` USD reports.
_COMMENTARY = re.compile(r" : '(?P<text>.*?)'?$", re.MULTILINE)


def usd_open_error(error: Exception, path: Path) -> BuildError:
    """One line from USD's multi-line open error: the file, the line where USD gives one, and what is wrong."""
    text = str(error)
    if path.is_file() and path.stat().st_size == 0:
        return BuildError(f"{path}: the file is empty; a USD text file starts with '#usda 1.0' and holds prims")
    parsed = _PARSE_ERROR.search(text)
    if parsed:
        what = parsed["what"].rstrip("'").strip()
        return BuildError(
            f"{parsed['file']}:{parsed['line']}:{parsed['column']}: USD cannot parse this file: {what} "
            "(a syntax error there, or the file ends early); fix the file at that line"
        )
    reasons = [m["text"].strip() for m in _COMMENTARY.finditer(text) if not m["text"].startswith("Failed to open layer")]
    reason = reasons[0] if reasons else "it is neither a USD text file (starting '#usda 1.0') nor a USD binary USD can read"
    return BuildError(f"{path}: USD cannot open this file: {reason}")


def open_stage(path: Path):
    """Open a USD file (Nexus schemas registered first) and check its Nexus prims and its bodies' masses."""
    schemas.register()
    try:
        stage = Usd.Stage.Open(str(path))
    except Tf.ErrorException as error:
        raise usd_open_error(error, path) from None
    if stage is None:
        raise BuildError(f"{path}: USD could not open this file")
    errors = [" ".join(str(e.GetMessage() if hasattr(e, "GetMessage") else e).split()).removesuffix("; skipping.")
              for e in stage.GetCompositionErrors()]
    if errors:
        raise BuildError(f"{path}: USD could not compose this file: {'; '.join(errors)}; fix the path or layer it names")
    check_stage(stage, path)
    check_units(stage, path)
    check_mass_properties(stage, path)
    return stage


def check_units(stage, path: Path) -> None:
    """SI, Z-up files only: Newton's importer warns about other units and then reads the numbers as SI anyway,
    and imports a file whose ``upAxis`` is not Z (USD's default is Y) about another axis: such a vehicle
    never lifted off and flew to its duration without a word."""
    for key, value in (("metersPerUnit", UsdGeom.GetStageMetersPerUnit(stage)),
                       ("kilogramsPerUnit", UsdPhysics.GetStageKilogramsPerUnit(stage))):
        if value != 1.0:
            unset = "" if stage.HasAuthoredMetadata(key) else " (USD's default: the file does not set it)"
            raise BuildError(f"{path}: the file's {key} is {value:g}{unset}; Nexus reads SI files only, so author "
                             f"{key} = 1 in the layer's metadata and give lengths in metres and masses in kilograms")
    up = UsdGeom.GetStageUpAxis(stage)
    if up != UsdGeom.Tokens.z:
        unset = "" if stage.HasAuthoredMetadata("upAxis") else " (USD's default: the file does not set it)"
        raise BuildError(f"{path}: the file's upAxis is {up}{unset}; Nexus reads Z-up files only, so author "
                         'upAxis = "Z" in the layer\'s metadata and give positions and axes with z up')
    for prim in stage.Traverse():
        if prim.GetTypeName() != "PhysicsScene":
            continue
        magnitude = prim.GetAttribute("physics:gravityMagnitude")
        if magnitude and magnitude.HasAuthoredValue() and not 0.0 <= float(magnitude.Get()) < math.inf:
            raise BuildError(f"{path}: prim {prim.GetPath()} attribute 'physics:gravityMagnitude' is "
                             f"{float(magnitude.Get()):.7g}; author a finite, non-negative gravity [m/s²], e.g. 9.80665")
