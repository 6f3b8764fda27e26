"""Fixed wings: the aerodynamic force stage, its lift blend, control surfaces, an advance-ratio propeller, trim."""
