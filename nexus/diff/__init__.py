"""Differentiable rollouts: the PID flight on Featherstone, recorded on a ``wp.Tape``.

    from nexus.diff import Rollout
    rollout = Rollout(500, loss="altitude")          # 2 s at 250 Hz, hover then a 1 m climb
    loss, grads = rollout.value_and_gradients(["pid.kp_z", "mass", "rotor1.kt"])

See ``docs/differentiable.md`` for the parameters, the losses, what the rollout
leaves out, and the solver limits.
"""

from nexus.diff.losses import LOSSES
from nexus.diff.params import PID_ALIASES
from nexus.diff.references import REFERENCES, Reference, figure_eight, hover_and_climb, reference_for, yaw_turn
from nexus.diff.rollout import DEFAULT_START_HEIGHT, Rollout, Trajectory

__all__ = ["DEFAULT_START_HEIGHT", "LOSSES", "PID_ALIASES", "REFERENCES", "Reference", "Rollout", "Trajectory",
           "figure_eight", "hover_and_climb", "reference_for", "yaw_turn"]
