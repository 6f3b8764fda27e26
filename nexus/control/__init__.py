"""Controllers: what writes the ``controls`` row each tick."""
