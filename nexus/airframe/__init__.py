"""Vehicle files from a few numbers: rotor layouts, the sizing rules that fill in what is not given, the PID
gains that follow from mass, inertia and thrust margin, and the USD writer (``nexus vehicle new``)."""
