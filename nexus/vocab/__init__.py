"""The vocabulary every layer declares itself with: settings and options, types, drawn parameters, gradients.

It sits just above :mod:`nexus.core` and imports nothing else of Nexus, so the plant, the sensors, the air,
the controllers and the worlds can each say what they take without knowing who reads it; the readers
(``nexus params``, the command line, a sweep file's checks, the worlds' draws) walk these declarations.
"""
