"""Warp's start-up settings for Nexus: quiet unless asked, initialized once."""

import warp as wp


def init_warp(verbose: bool = False) -> None:
    """Initialize Warp; below ``verbose`` only its warnings and errors are printed."""
    wp.config.log_level = wp.LOG_INFO if verbose else wp.LOG_WARNING
    wp.init()
