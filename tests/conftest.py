"""Shared test set-up: quiet Warp, the ``cuda`` marker, and a CPU-only default."""

import logging
import signal
import warnings
from pathlib import Path

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
def ctrl_c_as_it_was(request):
    """Each test starts with Python's own Ctrl-C handler and ends with the disposition it started with.

    A suite started as a background job of a non-interactive shell (``make test &``, ``nohup``) inherits SIGINT
    ignored, and Python then installs no handler: every Ctrl-C test would be deaf to its own interrupt (met on
    2026-12-06: two Ctrl-C tests failed in a CI started that way). Such a test gets ``default_int_handler``, as an
    interactive ``python`` has. A test that leaves SIGINT ignored or held (a handler it did not put back) would
    make every later Ctrl-C test in its worker, and every child it starts, deaf to the interrupt; the full suite
    met that (issue 45's closing note). The leak is put back here and named in a warning, so the test that leaks
    it can be found.
    """
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    before = signal.getsignal(signal.SIGINT)
    yield
    after = signal.getsignal(signal.SIGINT)
    if after is not before:
        signal.signal(signal.SIGINT, before)
        warnings.warn(f"{request.node.nodeid} left SIGINT's handler changed ({after!r}); put back", stacklevel=1)


#: A vehicle with two IMUs on its base: the noisy ``Imu`` and the noiseless ``ImuQuiet``.
TWO_IMUS = Path(__file__).parent / "data" / "astro_max_two_imus.usda"


@pytest.fixture(scope="session")
def two_imu_run(tmp_path_factory):
    """``nexus run`` of the two-IMU vehicle: the PID's short mission for 1 s (250 ticks at 250 Hz), seed 4.

    Flown once for the record and replay tests and the report tests.
    """
    from click.testing import CliRunner  # noqa: PLC0415

    from nexus.cli import main  # noqa: PLC0415

    out = tmp_path_factory.mktemp("two_imus") / "run"
    result = CliRunner().invoke(main, ["run", "--vehicle", str(TWO_IMUS), "--device", "cpu", "--mission", "short",
                                       "--duration", "1.0", "--seed", "4", "--quiet", "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture(autouse=True)
def _nexus_logs_at_info(caplog):
    caplog.set_level(logging.INFO, logger="nexus")
    yield
