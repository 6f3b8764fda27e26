"""FlightSession: one flight built, started, flown and closed, in that order, each once."""

import pyarrow.parquet as pq
import pytest

from nexus.core import Component, Stage
from nexus.core.errors import BuildError
from nexus.runtime.flight import build_flight
from nexus.runtime.config import RunConfig
from nexus.runtime.flight_session import FlightSession

HOLD = RunConfig(controller="hold", device="cpu")


class Closes(Component):
    """Counts its closes (the loop closes every component)."""

    def __init__(self):
        super().__init__("/test/closes")
        self.closed = 0

    def stages(self):
        return [Stage("noop", "guide", lambda io: None, host=True)]

    def close(self):
        self.closed += 1


def test_the_hooks_see_the_build_then_the_record_then_start_up_follows(tmp_path):
    record = tmp_path / "record.parquet"
    seen = []
    hooks = {
        "on_built": lambda flight: seen.append(("built", record.exists(), flight.loop.ticks)),
        "before_start": lambda flight: seen.append(("before start", sorted(p.name for p in record.iterdir()),
                                                    flight.loop.ticks)),
    }
    with FlightSession(HOLD, record, **hooks) as session:
        # The record's part 0 (its columns) is written between the two hooks; start-up after both.
        assert seen == [("built", False, 0), ("before start", ["part-000000.parquet"], 0)]
        assert session.origin is not None and session.device == "cpu"
        session.fly(10)
    assert pq.read_table(record).num_rows == 10  # the last drain came with the close


def test_close_is_idempotent_and_the_flight_stays_readable(tmp_path):
    closes = Closes()
    session = FlightSession(HOLD, tmp_path / "record.parquet", extra_components=[closes])
    with session:
        session.fly(5)
    session.close()
    session.close()
    assert closes.closed == 1 and session.loop.ticks == 5  # 5 ticks of 4 ms
    assert session.loop.sim_time == pytest.approx(0.02)


def test_no_record_folder_flies_without_a_writer(tmp_path):
    with FlightSession(HOLD) as session:
        assert session.writer is None
        session.fly(3)
    assert session.loop.ticks == 3


def test_a_flight_given_is_flown_and_closed_and_must_match_the_configurations_device(tmp_path, monkeypatch):
    closes = Closes()
    flight = build_flight(HOLD, extra_components=[closes])
    monkeypatch.setattr("nexus.core.device.cuda_available", lambda: True)  # "cuda" names a device: cuda:0
    with pytest.raises(BuildError, match=r"the flight given was built on cpu but its configuration's device is "
                                         r"cuda \(cuda:0\); give the configuration the flight's device"):
        with FlightSession(RunConfig(controller="hold", device="cuda"), tmp_path / "record.parquet", flight=flight):
            pass
    assert closes.closed == 1  # refused, and closed all the same
