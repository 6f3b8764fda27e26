"""Every name the differentiable rollout knows has a row in ``nexus params``, read by the gradient.

The table walks the declarations (each spec's arrays, the base body's attributes) and never imports the
rollout; this test is where the two meet (it used to be a check inside nexus/runtime/params.py, which reached
up into nexus.diff for it)."""

from nexus.diff.params import PID_ALIASES, known_names
from nexus.runtime.params import parameters


def test_every_rollout_name_of_the_default_vehicle_has_a_gradient_row():
    table = parameters("astro_max_base")  # four rotors and a drag prim
    named = set(table.names("gradient"))
    missing = [name for name in (*known_names(4, drag=True), *PID_ALIASES) if name not in named]
    assert not missing, f"the rollout knows {missing} but nexus params gives them no gradient row"
