"""One rule for a value read from a file against a field's type, and one way to say a type in words."""

import pytest

from nexus.vocab.types import fits_type, is_number, show, type_name, type_text


@pytest.mark.parametrize("value, hint, fits", [
    (3, float, True),  # a whole number fits a float
    (True, float, False),  # a boolean is no number
    (True, bool, True),
    (2.5, int, False),
    (None, float | None, True),
    ("x", float | None, False),
    ([1, 2], list, True),
    ({"a": 1}, dict, True),
])
def test_a_value_fits_a_hint(value, hint, fits):
    assert fits_type(value, hint) is fits


def test_a_type_in_words_names_null_unless_the_file_cannot_hold_one():
    # run.json and a controller's options may hold null; a TOML file cannot, so a sweep names the type alone.
    assert type_text(float | None) == "float or null"
    assert type_text(float | None, none=False) == "float"
    assert type_text(int | str) == "int or str"
    assert type_text(bool) == "bool"


def test_a_value_in_words():
    assert type_name(True) == "a boolean (true)"
    assert type_name("x") == "a string ('x')"
    assert type_name([1]) == "an array" and type_name({}) == "a table"
    assert type_name(2.5) == "a number (2.5)"
    assert show(1.0 / 3.0) == "0.333333" and show("a") == "'a'" and show(3) == "3"
    assert is_number(1) and is_number(1.5) and not is_number(False) and not is_number("1")
