"""The oscillatory modes of a flown response, fitted from the samples alone: how the doublets' modes are measured.

Shared by the tests that fly a stick-fixed elevator doublet (JSBSim's committed trace in
test_jsbsim_reference.py, Nexus's own flight in test_modes_flown.py and test_nexus_vs_jsbsim.py), so both
flights are measured the same way. It reads samples only: no model, neither Nexus's nor the book's.
"""

from __future__ import annotations

import numpy as np


def fit_modes(t: np.ndarray, y: np.ndarray, order: int = 4, rows: int = 80) -> list[tuple[float, float]]:
    """The oscillatory modes of a free response, (natural frequency [rad/s], damping ratio), slowest first.

    The eigensystem realization algorithm (Juang and Pappa, J. Guidance 8(5), 1985) on the response alone: the
    samples y[k] (one column per channel, each scaled to unit RMS) are stacked into the Hankel matrices
    H0 = [y(i + j)] and H1 = [y(i + j + 1)] (block rows i < ``rows``); with H0's ``order``-term SVD U S V^T,
    the discrete system matrix is S^-1/2 U^T H1 V S^-1/2, and each of its eigenvalues z is a continuous one
    ln(z) / dt. ``t`` must be evenly spaced.
    """
    dt = float(t[1] - t[0])
    if not np.allclose(np.diff(t), dt, rtol=1e-6, atol=1e-9):
        raise ValueError("fit_modes: the samples must be evenly spaced in time")
    y = y / np.sqrt(np.mean(y**2, axis=0))
    channels, columns = y.shape[1], len(t) - rows - 1
    H0 = np.empty((rows * channels, columns))
    H1 = np.empty_like(H0)
    for i in range(rows):
        H0[i * channels:(i + 1) * channels] = y[i:i + columns].T
        H1[i * channels:(i + 1) * channels] = y[i + 1:i + 1 + columns].T
    U, s, Vt = np.linalg.svd(H0, full_matrices=False)
    root = np.diag(s[:order] ** -0.5)
    A = root @ U[:, :order].T @ H1 @ Vt[:order].T @ root
    poles = np.log(np.linalg.eigvals(A).astype(complex)) / dt
    return [(float(abs(p)), float(-p.real / abs(p))) for p in sorted(poles, key=abs) if p.imag > 1e-9]
