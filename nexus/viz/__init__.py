"""Seeing a flight: ``nexus plot`` (figures and an HTML report) and ``nexus view`` (a 3D replay in the browser).

Nothing here runs inside the tick loop; matplotlib and viser are imported only
by the commands that use them.
"""
