"""The ``nexus`` commands, one module each; :mod:`nexus.cli` assembles them into the group.

A command module defines one click command (``nexus px4``'s subcommands
have a module each too, beside ``px4.py``, the group) and imports what it
flies or draws at its top: the group (:mod:`nexus.commands.lazy_group`)
loads a command's module only when that command runs or shows its help, so
``nexus --help`` loads none of them. The options several commands share are
in :mod:`nexus.commands.options`; the exit statuses and the one-line error
in :mod:`nexus.commands.exits`. A new command is a new module here and a row
of :data:`nexus.cli.COMMANDS`.
"""
