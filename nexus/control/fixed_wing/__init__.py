"""A flight stack for fixed wings: energy-based speed and height control, L1 lateral guidance, attitude loops.

:mod:`.tecs` turns a height and an airspeed goal into a pitch goal and a throttle (PX4's total energy
control), :mod:`.lateral_guidance` turns a straight leg or a loiter circle into a lateral acceleration
and a bank goal (Park, Deyst and How's L1 law), :mod:`.attitude_loops` turns the bank and pitch goals
into aileron, elevator and rudder, and :mod:`.controller` is the component that runs them, one thread
per world, and writes the ``controls`` row the surfaces and the propeller read. docs/fixed_wing.md,
"Flight stack", has the laws and their gains.
"""
