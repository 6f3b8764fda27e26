"""The vocabulary every layer declares itself with, just above the engine (it imports only :mod:`nexus.core`).

The plant, the sensors, the air, the controllers and the worlds each say what they take without knowing who
reads it; the readers (``nexus params``, the command line, a sweep or scenario file's checks, the worlds'
draws) walk these declarations:

* :mod:`~nexus.vocab.settings`: a run setting's and a controller option's metadata (help, unit, bounds, flag);
* :mod:`~nexus.vocab.types`: a value checked against a type hint, and a type or a value in words;
* :mod:`~nexus.vocab.drawn`: the drawn parameters a part takes (a variation file's names) and their register;
* :mod:`~nexus.vocab.names`: the one sentence for an unknown parameter name, and the look-up a lower layer is
  handed instead of the whole table;
* :mod:`~nexus.vocab.faults`: the scenario faults a part declares;
* :mod:`~nexus.vocab.data_file`: a data file's declared structure, checked, with errors that name the key.
"""
