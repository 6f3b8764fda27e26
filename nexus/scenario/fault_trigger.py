"""What a scenario's report says of its faults fired by a condition (``[[fault]] when = {...}``).

The stage that fires them is :mod:`nexus.runtime.fault_trigger`; it records each fault's firing tick as
``fault_tick/<i>``, which this module reads back.
"""

from __future__ import annotations

import numpy as np

from nexus.runtime.fault_trigger import CONDITIONS, NOT_FIRED, fault_tick_signal


def describe(trigger: dict) -> str:
    """``fault[0] rotor when altitude_above > 0.5 m``."""
    (key, bound), = trigger["when"].items()
    what = f"step {bound} begins" if key == "step" else f"{key} > {bound:g} {CONDITIONS[key]}"
    return f"fault[{trigger['fault']}] {trigger['kind']} when {what}"


def fired_faults(triggers: list[dict], table, tick_s: float) -> list[dict]:
    """Each ``when`` fault as the record saw it: its firing tick and time [s], or None for both (never fired)."""
    names = set(table.column_names)
    out = []
    for trigger in triggers:
        column = fault_tick_signal(trigger["fault"])
        ticks = table.column(column).to_numpy() if column in names else np.array([NOT_FIRED])
        tick = int(ticks.max()) if len(ticks) and int(ticks.max()) != NOT_FIRED else None
        out.append({"fault": trigger["fault"], "kind": trigger["kind"], "when": dict(trigger["when"]),
                    "describe": describe(trigger), "tick": tick,
                    "time": None if tick is None else round(tick * tick_s, 9)})
    return out


def fault_line(fault: dict) -> str:
    """What ``nexus test`` prints of one ``when`` fault."""
    if fault["tick"] is None:
        return f"{fault['describe']}: never fired (the condition never held)"
    return f"{fault['describe']}: fired at {fault['time']:.3f} s (tick {fault['tick']})"
