"""The ring's order within a stage kind comes from each component's declared place, not from a list's order."""

from __future__ import annotations

import itertools

import pytest

from nexus.core import Component
from nexus.core.errors import BuildError
from nexus.core.ring import ROLES, Place, compose, placed


def part(path: str, role: str = "extra", **place) -> Component:
    return placed(Component(path), role, **place)


def names(components) -> list[str]:
    return [c.name for c in components]


def test_roles_order_the_components_whatever_order_they_are_given_in():
    ring = [part("/record", "record"), part("/plant", "physics"), part("/wind", "air"), part("/ctl", "controller"),
            part("/esc", "part", sequence=3), part("/imu", "part", sequence=1), part("/mission", "guidance")]
    expected = ["/plant", "/wind", "/imu", "/esc", "/mission", "/ctl", "/record"]
    for shuffled in itertools.permutations(ring):
        assert names(compose(shuffled)) == expected


def test_within_a_role_the_sequence_comes_first_then_the_name():
    ring = [part("/b", sequence=0), part("/a", sequence=1), part("/c", sequence=0)]
    assert names(compose(ring)) == ["/b", "/c", "/a"]
    assert names(compose(ring[::-1])) == ["/b", "/c", "/a"]


def test_after_and_before_order_a_role_by_declared_names():
    crash = part("/plant/crash", "monitor", name="crash", after=("contact",))
    contact = part("/scenario/contact", "monitor", name="contact")
    summary = part("/worlds/summary", "monitor", name="summary", after=("crash",))
    assert names(compose([summary, crash, contact])) == ["/scenario/contact", "/plant/crash", "/worlds/summary"]
    first = part("/z", before=("/a",))
    assert names(compose([part("/a"), first])) == ["/z", "/a"]
    alone = part("/x", "monitor", after=("nobody",))  # a name no component declares orders nothing
    assert names(compose([alone])) == ["/x"]


def test_a_cycle_and_an_unknown_role_are_refused():
    with pytest.raises(BuildError, match="cycle among /a, /b"):
        compose([part("/a", after=("/b",)), part("/b", after=("/a",))])
    with pytest.raises(BuildError, match="unknown ring role 'middle'"):
        Place("middle")
    assert Place().role == "extra" and "extra" in ROLES


def test_a_component_without_a_place_keeps_the_default_role():
    bare = Component("/bare")
    assert names(compose([part("/rec", "record"), bare, part("/ctl", "controller")])) == ["/ctl", "/bare", "/rec"]
