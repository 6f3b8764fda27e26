"""Many worlds in one run: Monte Carlo variation of the vehicle, its sensors and its faults."""
