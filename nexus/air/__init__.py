"""The air a vehicle flies in: the wind field (mean wind, gusts, Dryden turbulence) and the drag it makes.

See ``docs/air.md``. The wind field is declared on a scene prim (``NexusWindAPI``) or by
``nexus run --wind`` / ``--turbulence``; the drag on a vehicle prim (``NexusDragAPI``).
"""
