"""A setting and a controller's option carry the same metadata, read the same way by every reader."""

from dataclasses import dataclass, fields

from nexus.vocab.settings import choices_of, help_of, option, out_of_bounds, setting

MODES = ["a", "b"]


@dataclass
class Config:
    rate: float = setting(250.0, "Tick rate", unit="Hz", minimum=1.0, maximum=1000.0)
    length: float | None = setting(None, "Run length", unit="s", minimum=0.0, min_open=True)
    mode: str = setting("a", "Mode", choices=lambda: MODES)
    files: list[str] = setting(help="Files", default_factory=list, path=True)


@dataclass(frozen=True)
class Options:
    port: int = option(4560, "TCP port", flag="--port", minimum=1)


def test_a_setting_reads_its_help_bounds_and_choices():
    rate, length, mode, files = fields(Config)
    assert help_of(rate) == "Tick rate [Hz]." and help_of(mode) == "Mode."
    assert out_of_bounds(rate, 0.5) == "give 1 or more"
    assert out_of_bounds(rate, 2000.0) == "give 1000 or less"
    assert out_of_bounds(rate, 250) is None and out_of_bounds(rate, True) is None
    assert out_of_bounds(length, 0.0) == "give more than 0"
    MODES.append("c")  # choices given as a function are read each time (controllers registered later)
    assert choices_of(mode) == ("a", "b", "c") and choices_of(rate) is None
    assert Config().files == [] and files.metadata["path"]


def test_an_option_reads_the_same_way():
    (port,) = fields(Options)
    assert help_of(port) == "TCP port." and port.metadata["flag"] == "--port"
    assert out_of_bounds(port, 0) == "give 1 or more"
