"""Nexus: a fixed-order tick engine for flying aerial vehicles on Newton and Warp."""

__version__ = "0.1.0"
