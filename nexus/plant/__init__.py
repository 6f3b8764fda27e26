"""The plant: the vehicle's bodies and rotors in Newton, and the stages that move them."""
