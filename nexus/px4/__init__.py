"""PX4 SITL in lockstep: the PX4 controller, its MAVLink link, parameters and mission."""
