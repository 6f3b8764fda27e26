"""The application around the engine: one run from its configuration to the folder it leaves behind.

- ``flight``: :class:`RunConfig` (every setting of a run, declared once) and
  :func:`build_flight`; ``assembly`` and ``roles`` turn a vehicle file and a
  controller into components and wiring; ``startup`` settles the vehicle;
- ``flight_session``: build, start, fly and close one flight (every caller);
- ``run``: ``nexus run``'s flight, with run.json, the log and the summary
  (``run_file``, ``stopping`` for SIGINT/SIGTERM);
- ``run_folder``: the one reader of a run folder; ``replay`` and ``runs``
  read through it;
- ``params``: every parameter name of a vehicle and what it sets.
"""
