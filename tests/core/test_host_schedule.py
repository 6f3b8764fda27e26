"""Host stages that say which ticks they leave alone: the loop runs those ticks as one graph of the device
stages, with the same bits as a ring cut at the host stages every tick (and as eager execution)."""

import numpy as np
import warp as wp

from nexus.core import Component, Loop, Read, Stage
from tests.core.toy_parts import WIDTH, NoiseSensor, Recorder, host_stage, row


class EveryFifthTick(Component):
    """A host stage with work on every fifth tick only: it writes the tick number into the ``gain`` row."""

    def __init__(self, name="/vehicle/every5", period=5):
        super().__init__(name)
        self.period = period
        self.ran: list[int] = []

    def stages(self):
        return [Stage("every5", "control", self._run, reads=(Read("tick", wp.int64, (1,)),),
                      writes=(row("gain"),), host=True, idle_ticks=self.idle_ticks)]

    def _run(self, io):
        tick = int(io["tick"].read())
        self.ran.append(tick)
        if tick % self.period == 0:
            io["gain"].write(np.full(WIDTH, float(tick), dtype=np.float32))

    def idle_ticks(self):
        if not self.ran:
            return 0
        return self.period - self.ran[-1] % self.period - 1


def flown(mode, ticks=37, extra=()):
    every = EveryFifthTick()
    gains, noise = Recorder(64, signal="gain", name="/gains"), Recorder(64, signal="noise", name="/noise_log")
    loop = Loop([NoiseSensor(), every, *extra, gains, noise], device="cpu", mode=mode).build()
    result = loop.run(ticks)
    return loop, every, gains.history.numpy(), noise.history.numpy(), result


def test_the_host_stage_runs_only_on_its_ticks_and_the_rest_is_one_graph():
    loop, every, gains, _, result = flown("captured")
    assert loop.plan.hosts_idle_between and loop.ticks_per_replay == 16
    assert loop.plan.text().endswith("host(every5) graph(record -> record); between host ticks graph x16")
    # It runs at tick 1 (it has not run yet), then on every fifth tick.
    assert every.ran == [1, 5, 10, 15, 20, 25, 30, 35]
    assert result.ticks == 37 and result.reason == "ticks"
    # Tick t's row holds what the host stage last wrote: 5 * floor(t / 5).
    assert gains[:12, 0].tolist() == [0, 0, 0, 0, 5, 5, 5, 5, 5, 10, 10, 10]
    assert gains[36, 0] == 35.0 and not gains[37:].any()


def test_skipping_the_idle_ticks_changes_no_bit_against_eager():
    _, every_eager, gains_eager, noise_eager, _ = flown("eager")
    _, _, gains, noise, _ = flown("captured")
    assert every_eager.ran == list(range(1, 38))
    assert np.array_equal(gains, gains_eager)
    assert np.array_equal(noise, noise_eager) and noise[:37].any() and not noise[37:].any()


def test_one_host_stage_without_a_schedule_keeps_every_tick_cut():
    loop, every, gains, _, _ = flown("captured", extra=(host_stage("mpc", kind="guide"),))
    assert not loop.plan.hosts_idle_between and loop.ticks_per_replay == 1
    assert "between host ticks" not in loop.plan.text()
    assert every.ran == list(range(1, 38))
    assert gains[:12, 0].tolist() == [0, 0, 0, 0, 5, 5, 5, 5, 5, 10, 10, 10]
