"""The ``controls`` row a controller writes and the ESCs read."""

#: Width of the ``controls`` row (PX4's actuator output count).
CONTROLS_WIDTH = 16
