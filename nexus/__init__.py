"""Nexus: a fixed-order tick engine for flying aerial vehicles on Newton and Warp.

Importing ``nexus`` registers Nexus's USD schemas, which must happen before
any USD stage is opened in the process.
"""

from nexus import schemas as _schemas

__version__ = "0.1.0"

_schemas.register()
