"""What PX4 said during a run, as its run folder keeps it, for the ``px4_failsafe`` check.

Three places keep PX4's messages: the STATUSTEXTs the in-loop mission read on PX4's API stream
(run.json's ``controller_stats.mission.statustexts``), those a mission thread read (the run's
``mission.json``, ``statustexts``), and the ULog PX4 wrote (``px4/px4.json`` names it; its logged
messages are what PX4 printed and sent as STATUSTEXT). Each is a list of [PX4 time [s], text]; in
lockstep PX4's clock is the sim clock, so a time is the sim time the message was stamped with.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from pyulog import ULog

#: A text that says PX4 went into a failsafe or refused to arm (case-insensitive): PX4's commander says
#: "Failsafe activated", "Arming denied: ...", "Preflight Fail: ..." and the like.
FAILSAFE_OR_REFUSAL = re.compile(r"failsafe|arming denied|arming refused|preflight fail|not ready to arm",
                                 re.IGNORECASE)


def px4_messages(folder: Path, info: dict) -> list[tuple[float, str]] | None:
    """Every message the run kept, (time [s], text) in time order; None when the run kept no place for them."""
    found: list[tuple[float, str]] | None = None

    def add(pairs) -> None:
        nonlocal found
        found = (found or []) + [(float(t), str(text)) for t, text in pairs]

    mission = (info.get("controller_stats") or {}).get("mission") or {}
    if "statustexts" in mission:
        add(mission["statustexts"])
    thread = _json(folder / "mission.json")
    if thread is not None and "statustexts" in thread:
        add(thread["statustexts"])
    report = _json(folder / "px4" / "px4.json")
    if report is not None and report.get("ulog"):
        add(_ulog_messages(folder / report["ulog"]))
    return None if found is None else sorted(found)


def _json(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _ulog_messages(path: Path) -> list[tuple[float, str]]:
    """The ULog's logged messages (plain and tagged), (time [s], text); none when the file does not read."""
    try:
        log = ULog(str(path), message_name_filter_list=[], disable_str_exceptions=True)
    except Exception:  # noqa: BLE001 (a ULog cut short by PX4's stop says nothing more)
        return []
    out = [(m.timestamp * 1e-6, m.message) for m in log.logged_messages]
    for messages in log.logged_messages_tagged.values():
        out += [(m.timestamp * 1e-6, m.message) for m in messages]
    return out
