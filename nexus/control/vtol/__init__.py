"""A standard VTOL's flight stack: lift rotors for take-off, hover and landing, a wing and a pusher between."""
