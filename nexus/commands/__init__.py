"""The ``nexus`` commands, one module each; :mod:`nexus.cli` assembles them into the group.

A command module defines one click command (``nexus px4``'s subcommands
have a module each too, beside ``px4.py``, the group) and imports what it
flies or draws inside the command's function, so that ``nexus --help``
loads none of it. The options several commands share are in
:mod:`nexus.commands.options`; the exit statuses and the one-line error in
:mod:`nexus.commands.exits`. A new command is a new module here, added to
the group in ``nexus/cli.py``.
"""
