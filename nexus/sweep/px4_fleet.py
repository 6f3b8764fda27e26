"""One PX4 SITL instance per sweep point: started before the run, stopped after it, whatever happened.

For a point with ``[px4]``, :class:`Px4Flight` claims a free instance K on
this host (:mod:`nexus.px4.instance`), starts the user's ``px4 -i K`` in its
own session (its own process group) in a private working folder inside the
run folder (``px4/``: PX4's parameters, dataman and logs, and its output in
``px4/px4.out``), with the parameters ``nexus px4 params`` derives for the
vehicle, and points the run's PX4 link at TCP 4560+K. The mission is
``nexus px4 mission`` on K's MAVLink port, or the user's command (argument
list, no shell; only with ``--allow-commands``), or none (the run flies to its
duration). :meth:`Px4Flight.stop` ends the command and PX4 by process group
(SIGTERM, then SIGKILL after a grace period), never by name: other runs'
instances on the machine are left alone.

A worker that dies cannot stop its PX4, so PX4 is also started with the
kernel's parent-death signal (SIGKILL), and its process group and command
line are written to ``px4/pgid`` for :func:`end_leftovers`, which the driver
calls for a point whose worker died and when a sweep is stopped.
"""

from __future__ import annotations

import ctypes
import inspect
import json
import logging
import os
import signal
import subprocess
import threading
import time
from dataclasses import replace
from pathlib import Path

from nexus.plant.loading import load_plant
from nexus.px4.controller import CONNECT_TIMEOUT_S, Px4Controller
from nexus.px4.instance import claim_instances
from nexus.px4.mission import Px4Mission
from nexus.px4.params import px4_parameters

log = logging.getLogger("nexus")

#: The run folder's PX4 working folder, and the file naming the process groups to end.
PX4_DIR = "px4"
GROUPS = "pgid"
#: Seconds a process group gets between SIGTERM and SIGKILL.
GRACE_S = 5.0


def _die_with_parent() -> None:
    """In the child before exec: SIGKILL when the process that started it (the worker) ends."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def _cmdline(pid: int) -> str | None:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return None


def _group_runs(pgid: int) -> bool:
    """Whether a process of the group still runs; zombies (exited, waiting for their reaper: us, or init for an
    orphan, which may reap only every few seconds) do not, and no signal reaches them."""
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            fields = Path(entry.path, "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[2:3] == [str(pgid)] and fields[0] not in ("Z", "X"):
            return True
    return False


def _end_group(pgid: int, grace_s: float = GRACE_S) -> None:
    """SIGTERM to the process group, SIGKILL to what is left after ``grace_s``."""
    try:
        os.killpg(pgid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        return
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except (ProcessLookupError, PermissionError):
            return
        if not _group_runs(pgid):  # only zombies left: ended
            return
        time.sleep(0.05)
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def end_leftovers(folder: Path) -> list[int]:
    """End the process groups a point's run started and left behind (its worker died); returns their ids.

    A group is ended when its leader still has the command line written when it started, or when the leader
    is gone (its children may live on in the group; Linux reuses no id while a group of that id has members).
    """
    path = Path(folder) / PX4_DIR / GROUPS
    ended = []
    try:
        entries = json.loads(path.read_text())
    except (OSError, ValueError):
        return ended
    for entry in entries:
        pgid, cmdline = entry.get("pgid"), entry.get("cmdline")
        leader = (_cmdline(pgid) if isinstance(pgid, int) else None) or None  # a zombie's cmdline reads empty
        if isinstance(pgid, int) and pgid > 1 and leader in (cmdline, None):
            _end_group(pgid, grace_s=1.0)
            ended.append(pgid)
    return ended


def mission_options(settings: dict, url: str) -> dict:
    """The PX4 controller's ``mission`` option for a point: the API URL, a scenario's link loss and steps if any."""
    return {"url": url, **({"link_loss": list(settings["link_loss"])} if settings.get("link_loss") else {}),
            **({"steps": [dict(s) for s in settings["steps"]]} if settings.get("steps") else {})}


def _mission_in_loop() -> bool:
    """Whether the PX4 controller flies the built-in mission itself (its ``mission`` option), on sim ticks."""
    return "mission" in inspect.signature(Px4Controller.__init__).parameters


class Px4Flight:
    """PX4 (and the mission) for one point; :meth:`start` before the run, :meth:`stop` after it, always."""

    def __init__(self, settings: dict, folder: Path, allow_commands: bool = False):
        self.settings, self.folder, self.allow_commands = settings, Path(folder), allow_commands
        #: The instances held (one per vehicle of the world, consecutive) and PX4's process for each.
        self.claims: list = []
        self.processes: list[subprocess.Popen] = []
        self.command: subprocess.Popen | None = None
        self.done = threading.Event()
        self.mission = None
        self.mission_thread: threading.Thread | None = None
        self.mission_error: str | None = None
        self.groups: list[dict] = []
        self.outputs = []

    @property
    def workdir(self) -> Path:
        return self.folder / PX4_DIR

    def _params(self, config) -> dict[str, str]:
        plant, _, _ = load_plant(config.vehicle, config.scene, "cpu")
        values = {f"PX4_PARAM_{k}": str(v) for k, v in px4_parameters(plant).items()}
        values.update({f"PX4_PARAM_{k}": str(v) for k, v in self.settings.get("params", {}).items()})
        (self.workdir / "params.env").write_text("".join(f"{k}={v}\n" for k, v in values.items()))
        return values

    def _spawn(self, argv: list[str], env: dict, cwd: Path, output: Path) -> subprocess.Popen:
        handle = open(output, "wb")  # noqa: SIM115 (closed in stop)
        self.outputs.append(handle)
        process = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=handle,
                                   stderr=subprocess.STDOUT, start_new_session=True, preexec_fn=_die_with_parent)
        self.groups.append({"pgid": process.pid, "cmdline": _cmdline(process.pid) or "", "argv": argv})
        (self.workdir / GROUPS).write_text(json.dumps(self.groups))
        return process

    @property
    def px4(self) -> subprocess.Popen | None:
        """The first vehicle's PX4 (the only one, unless the point flies several vehicles in its world)."""
        return self.processes[0] if self.processes else None

    def start(self, config):
        """Claim an instance per vehicle of the world (consecutive: K, K+1, ...), start each PX4 and the
        mission; returns ``config`` with the link on K's port (vehicle k's on K+k's)."""
        self.workdir.mkdir(parents=True, exist_ok=True)
        count = int(getattr(config, "vehicles", 1))
        if count > 1 and self.settings.get("command"):
            raise ValueError(f"[px4] command: a point of {count} vehicles flies a PX4 instance each, and the "
                             "command serves one (it gets one MAVLink URL); drop the command (Nexus's mission flies "
                             "every instance from the loop), or fly one vehicle")
        self.claims = claim_instances(count)
        instance = self.claims[0].instance
        binary = Path(self.settings["binary"])
        env = {**os.environ, "PX4_SIM_MODEL": self.settings.get("model", "none_iris"), **self._params(config),
               **{k: str(v) for k, v in self.settings.get("env", {}).items()}}
        for claim in self.claims:
            # One vehicle: PX4's folder is px4/; several: px4/K for instance K.
            folder = self.workdir if count == 1 else self.workdir / str(claim.instance.k)
            folder.mkdir(exist_ok=True)
            argv = [str(binary), "-i", str(claim.instance.k), "-d", "-w", str(folder)]
            rootfs = self.settings.get("rootfs") or (binary.parent.parent / "etc")
            if Path(rootfs).is_dir():
                argv.append(str(rootfs))
            if self.settings.get("pin_cpu") is not None:  # PX4 on one core: with settle, the reproducible setup
                argv = ["taskset", "-c", str(int(self.settings["pin_cpu"]) % (os.cpu_count() or 1)), *argv]
            self.processes.append(self._spawn(argv, env, folder, folder / "px4.out"))

        options = replace(config.controller_options, **instance.controller_options())
        if options.connect_timeout == CONNECT_TIMEOUT_S:  # not set by the sweep file: PX4's boot timeout
            options = replace(options, connect_timeout=float(self.settings.get("boot_timeout", 60.0)))
        command = self.settings.get("command")
        if command:
            if not self.allow_commands:
                raise PermissionError("the sweep file's [px4] command runs only with --allow-commands")
            fill = {"mavlink_url": instance.mavlink_url, "instance": str(instance.k), "run_dir": str(self.folder)}
            argv = [part.format(**fill) for part in command]
            cmd_env = {**os.environ, "NEXUS_MAVLINK_URL": instance.mavlink_url, "NEXUS_PX4_INSTANCE": str(instance.k)}
            self.command = self._spawn(argv, cmd_env, self.folder, self.folder / "command.log")
            threading.Thread(target=self._watch_command, daemon=True).start()
            options = replace(options, finish_when=self.done)
        elif self.settings.get("mission", "nexus") == "nexus" and _mission_in_loop():
            options = replace(options, mission=mission_options(self.settings, instance.mavlink_url))  # in the loop
        elif self.settings.get("mission", "nexus") == "nexus":
            self.mission = Px4Mission(instance.mavlink_url, say=lambda text: log.info("mission: %s", text),
                                      stop=threading.Event())
            self.mission_thread = threading.Thread(target=self._fly_mission, daemon=True)
            self.mission_thread.start()
            options = replace(options, finish_when=self.done)
        log.info("PX4 instance %d: %s (simulator TCP %d, MAVLink %s)", instance.k, " ".join(argv[:1]),
                 instance.sim_port, instance.mavlink_url)
        return replace(config, controller_options=options)

    def _watch_command(self) -> None:
        code = self.command.wait()
        if code != 0:
            self.mission_error = f"the sweep's command exited with status {code} (see command.log)"
        self.done.set()

    def _fly_mission(self) -> None:
        try:
            self.mission.run()
        except Exception as error:  # noqa: BLE001 (reported in the row)
            self.mission_error = f"mission failed: {error}"
        finally:
            self.done.set()

    def stop(self) -> dict:
        """Stop the mission, the command and PX4 (by process group) and free the instance; the row's PX4 fields."""
        report: dict = {}
        if self.mission is not None:
            self.mission.stop.set()
            if self.mission_thread is not None:
                self.mission_thread.join(timeout=5.0)
            (self.folder / "mission.json").write_text(json.dumps(
                {**self.mission.report.__dict__, "error": self.mission_error,
                 "statustexts": [[stamp * 1e-6, text] for stamp, text in self.mission.plan.statustexts]},
                indent=2, default=str) + "\n")
        for process in (self.command, *self.processes):
            if process is not None:
                _end_group(process.pid)
                try:
                    process.wait(timeout=GRACE_S)
                except subprocess.TimeoutExpired:
                    pass
        for handle in self.outputs:
            handle.close()
        if self.px4 is not None:
            report["px4_exit"] = self.px4.returncode
        if self.command is not None:
            report["command_exit"] = self.command.returncode
        if len(self.processes) > 1:
            report["px4_exits"] = [p.returncode for p in self.processes]
        if self.claims:
            report["px4_instance"] = self.claims[0].instance.k
            if len(self.claims) > 1:
                report["px4_instances"] = [c.instance.k for c in self.claims]
            for claim in self.claims:
                claim.release()
        ulogs = sorted(str(p.relative_to(self.folder)) for p in self.workdir.rglob("*.ulg"))
        report["ulog"] = ulogs[-1] if ulogs else None
        report["mission_error"] = self.mission_error
        (self.workdir / GROUPS).unlink(missing_ok=True)
        (self.workdir / "px4.json").write_text(json.dumps(report, indent=2) + "\n")
        return report
