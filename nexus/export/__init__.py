"""Exporting a finished run: its record and camera frames as one MCAP file or as CSV (``nexus export``).

It sits above :mod:`nexus.runtime` (it opens run folders) and :mod:`nexus.render` (it reads camera frames), so
the record package below them keeps to writing records.
"""
