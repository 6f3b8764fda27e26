"""One module per ``nexus`` subcommand added since the command line outgrew ``nexus/cli.py``."""
