"""Shared test set-up: quiet Warp, the ``cuda`` marker, and a CPU-only default."""

import logging

import pytest
import warp as wp

wp.config.quiet = True
wp.init()


def cuda_present() -> bool:
    return wp.get_cuda_device_count() > 0


def pytest_collection_modifyitems(config, items):
    if cuda_present():
        return
    skip = pytest.mark.skip(reason="needs a CUDA device; none is present")
    for item in items:
        if "cuda" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _nexus_logs_at_info(caplog):
    caplog.set_level(logging.INFO, logger="nexus")
    yield
