"""Ray-traced sensors: Newton's ``SensorCamera`` renders cameras, thermal images and lidar sweeps.

The loop never renders on its own tick path: a render sensor hands the bodies'
poses to a :class:`~nexus.render.hub.RenderHub` at a frame's due tick and takes
the frame a fixed number of ticks later (see ``docs/sensors.md``, "Render
sensors"). The hub renders in a peer process of its own
(:mod:`nexus.render.peer`) or in this one (``--render inline``).
"""
