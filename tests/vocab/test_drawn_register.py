"""The register of drawn parameters: a declaration above a class fills it, the complete view orders it, and a
name no owner declares gets the one unknown-name sentence even where no vehicle's table is at hand."""

import math

import pytest

from nexus.core.errors import BuildError
from nexus.vocab import drawn
from nexus.vocab.drawn import Drawn, Occurrence, abs_at_most, draws, positive, within, withdraw
from nexus.vocab.names import unknown_name
from nexus.worlds.owners import BUILTIN_MODULES, drawn_parameters, owner_of, owners
from nexus.worlds.variation import own_name


def test_a_check_is_an_interval_readable_as_numbers():
    assert positive(1e-9) and not positive(0.0)
    assert abs_at_most(2.0)(-2.0) and not abs_at_most(2.0)(2.1)
    gap = within(0.0, 1.0, open_low=True)
    assert (gap.low, gap.high, gap.open_low) == (0.0, 1.0, True)
    assert Drawn("x", "m", "", "> 0", accepts=positive).interval == positive


def test_a_value_outside_the_check_says_why():
    x = Drawn("x", "m", "", "> 0", accepts=positive)
    assert x.problem(-1.0, 4) == "must be > 0 [m]"
    assert x.problem(math.nan, 4) == "must be finite [m]"
    assert x.problem("1", 4) == "must be a number, not a string ('1')"
    index = Drawn("i", "-", "", "an integer in 0..rotors-1", kind="int")
    assert index.problem(4, 4) == "is past the last rotor: the vehicle has 4 rotors (0..3)"


class Lift:
    """A part of one's own (a plugin's), declared here only."""


def test_a_declaration_joins_the_register_after_nexus_s_own_and_a_name_twice_is_refused():
    version = drawn.version()
    draws(Drawn("lift_q", "N", "a test's lift", "> 0", accepts=positive),
          occurrences=[Occurrence("lift_q", "lift_q", "lift_q_occurs")])(Lift)
    try:
        assert drawn.version() != version
        assert list(drawn_parameters())[-1] == "lift_q" and "lift_q" not in drawn_parameters(builtin_only=True)
        assert owner_of("lift_q").label == f"{__name__}.Lift"
        assert [o.module for o in owners()][-1] == __name__
        assert {o.module for o in owners(builtin_only=True)} == set(BUILTIN_MODULES)
        with pytest.raises(BuildError, match=r"drawn parameter 'mass' is declared by both "
                                             r"nexus.plant.placement.vary_mass and .*Other; rename one"):
            draws(Drawn("mass", "kg", "", "> 0"))(type("Other", (), {}))
    finally:
        withdraw(Lift)
    assert owner_of("lift_q") is None


def test_an_unknown_name_gets_one_sentence_with_or_without_a_vehicle():
    assert unknown_name("mas", ["mass", "seed"], "astro_max_base") == (
        "parameter 'mas' is unknown; did you mean 'mass'? `nexus params --vehicle astro_max_base` lists every name "
        "and what reads it")
    # Without the vehicle's table (no look-up handed in), the draws' own names are the known ones.
    with pytest.raises(BuildError, match=r"^parameter 'thrust_scal' is unknown; did you mean 'thrust_scale'\? "
                                         r"`nexus params` lists every name and what reads it$"):
        own_name("thrust_scal", None)
    assert own_name("mass", None) == "mass"
    assert own_name("anything", lambda name: "mass") == "mass"
