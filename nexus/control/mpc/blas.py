"""Run NumPy's small matrix products on one BLAS thread while the MPC condenses its QP.

NumPy's OpenBLAS splits even an 80x273 product over every core. On a
machine whose cores are already busy (the simulator's own threads, or other
processes) the threads wait for each other: the product then takes tens of
times longer than on one thread (measured here: 13 ms against 0.4 ms). OpenBLAS
0.3.27 and later have ``openblas_set_num_threads_local``, which changes the
count for the calling thread only; :func:`one_blas_thread` sets it to 1 for
the duration of a solve and restores it. Where the symbol is missing (another
BLAS) it does nothing.
"""

from __future__ import annotations

import ctypes
import glob
import os
from contextlib import contextmanager

import numpy as np


def _setter():
    folder = os.path.join(os.path.dirname(os.path.dirname(np.__file__)), "numpy.libs")
    for path in glob.glob(os.path.join(folder, "*openblas*.so*")):
        try:
            function = ctypes.CDLL(path).openblas_set_num_threads_local
        except (OSError, AttributeError):
            continue
        function.restype = ctypes.c_int
        function.argtypes = [ctypes.c_int]
        return function
    return None


_SET_LOCAL = _setter()


@contextmanager
def one_blas_thread():
    if _SET_LOCAL is None:
        yield
        return
    previous = _SET_LOCAL(1)
    try:
        yield
    finally:
        _SET_LOCAL(previous)
