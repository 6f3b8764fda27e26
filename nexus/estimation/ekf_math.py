"""The error-state Kalman filter's algebra on one world's 15-state covariance, as Warp functions.

Error state (15): position [m] NED (0-2), velocity [m/s] NED (3-5), attitude
error [rad] in NED (6-8, the left perturbation q = exp(δθ) ⊗ q̂), gyro bias
[rad/s] FRD (9-11), accelerometer bias [m/s²] FRD (12-14). The covariance is
a (15, 15) float32 slice of a ``(worlds, 15, 15)`` array.

Why by hand: a dense F·P·Fᵀ is 2·15³ multiplications; the transition matrix
F = I + (a few 3×3 blocks) touches only the velocity and attitude rows, so
the prediction below costs about a tenth of that, row by row, in place (rows
are written in an order that never reads a row already written). Every
measurement is one scalar whose Jacobian has one non-zero entry (the heading:
three, all on the attitude), so a fusion is O(15²) (Joseph form on the upper
triangle, mirrored). A filter that fuses airspeed adds two wind states, their covariance in a second array (below).
"""

import warp as wp

N = 15
POS, VEL, ATT, GYRO_BIAS, ACCEL_BIAS = 0, 3, 6, 9, 12

vec15 = wp.types.vector(length=N, dtype=wp.float32)


@wp.func
def predict_row(P: wp.array3d(dtype=wp.float32), world: int, i: int, T: float, M: wp.mat33, Rdt: wp.mat33) -> vec15:
    """Row ``i`` of A = F·P, with F's blocks: p += T·v, v += M·θ − Rdt·ba, θ −= Rdt·bg."""
    a = vec15()
    block = i // 3
    r = i - 3 * block
    for j in range(N):
        value = P[world, i, j]
        if block == 0:
            value += T * P[world, VEL + r, j]
        elif block == 1:
            for k in range(3):
                value += M[r, k] * P[world, ATT + k, j] - Rdt[r, k] * P[world, ACCEL_BIAS + k, j]
        elif block == 2:
            for k in range(3):
                value -= Rdt[r, k] * P[world, GYRO_BIAS + k, j]
        a[j] = value
    return a


@wp.func
def apply_columns(a: vec15, T: float, M: wp.mat33, Rdt: wp.mat33) -> vec15:
    """One row of A·Fᵀ: the same blocks applied to the columns."""
    out = vec15()
    for j in range(N):
        out[j] = a[j]
    for r in range(3):
        out[POS + r] = a[POS + r] + T * a[VEL + r]
        value = a[VEL + r]
        tilt = a[ATT + r]
        for k in range(3):
            value += M[r, k] * a[ATT + k] - Rdt[r, k] * a[ACCEL_BIAS + k]
            tilt -= Rdt[r, k] * a[GYRO_BIAS + k]
        out[VEL + r] = value
        out[ATT + r] = tilt
    return out


@wp.func
def predict_covariance(
    P_in: wp.array3d(dtype=wp.float32), P: wp.array3d(dtype=wp.float32), world: int,
    T: float, dv_ned: wp.vec3, R: wp.mat33, q_diag: vec15,
):
    """P ← F·P·Fᵀ + Q over an interval ``T`` [s] in which the specific force added ``dv_ned`` [m/s] (NED).

    F: δp += T·δv; δv += −[Δv]ₓ·δθ − R·T·δba; δθ += −R·T·δbg. ``P_in`` may be ``P``: rows are
    computed from rows not yet written (position, velocity, attitude, then the biases). Only the upper
    triangle is written row by row (row ``i`` reads its own old entries left of the diagonal), then mirrored:
    the result is exactly symmetric, and half the stores of a full write and a symmetrising pass.
    """
    M = -wp.skew(dv_ned)
    Rdt = R * T
    for i in range(N):
        row = apply_columns(predict_row(P_in, world, i, T, M, Rdt), T, M, Rdt)
        for j in range(i, N):
            P[world, i, j] = row[j]
    for i in range(N):
        for j in range(i + 1, N):
            P[world, j, i] = P[world, i, j]
        P[world, i, i] = wp.max(P[world, i, i] + q_diag[i], 1.0e-12)


@wp.func
def symmetrise(P: wp.array3d(dtype=wp.float32), world: int):
    """P ← (P + Pᵀ)/2, and no variance below 1e-12 (:func:`floor_variances`)."""
    for i in range(N):
        for j in range(i + 1, N):
            mean = 0.5 * (P[world, i, j] + P[world, j, i])
            P[world, i, j] = mean
            P[world, j, i] = mean
    floor_variances(P, world)


@wp.func
def floor_variances(P: wp.array3d(dtype=wp.float32), world: int):
    """No variance below 1e-12 (kept positive definite against round-off)."""
    for i in range(N):
        P[world, i, i] = wp.max(P[world, i, i], 1.0e-12)


@wp.func
def fuse_scalar(
    P: wp.array3d(dtype=wp.float32), world: int, k: int, c: float, innovation: float, variance: float,
) -> vec15:
    """Fuse z with H = c·e_k: Joseph form P ← (I − K·H)·P·(I − K·H)ᵀ + K·R·Kᵀ; returns δx = K·ν.

    The caller has already gated the innovation; ``variance`` is R [unit²].
    """
    S = c * c * P[world, k, k] + variance
    K = vec15()
    for i in range(N):
        K[i] = c * P[world, i, k] / S
    # L = I − c·K·e_kᵀ;  (L·P)_ij = P_ij − c·K_i·P_kj;  (L·P·Lᵀ)_ij = (L·P)_ij − c·(L·P)_ik·K_j.
    row_k = vec15()
    for j in range(N):
        row_k[j] = P[world, k, j]
    col_k = vec15()  # (L·P)_ik
    for i in range(N):
        col_k[i] = P[world, i, k] - c * K[i] * row_k[k]
    for i in range(N):
        for j in range(i, N):
            lp = P[world, i, j] - c * K[i] * row_k[j]
            value = lp - c * col_k[i] * K[j] + variance * K[i] * K[j]
            P[world, i, j] = value
            P[world, j, i] = value
    floor_variances(P, world)
    return K * innovation


@wp.func
def fuse_attitude_scalar(
    P: wp.array3d(dtype=wp.float32), world: int, h: wp.vec3, innovation: float, variance: float,
) -> vec15:
    """Fuse z with H = h on the attitude error δθ (N, E, D) and 0 elsewhere, as :func:`fuse_scalar` (Joseph form,
    symmetrised); returns δx = K·ν. Three entries cost three times one entry's sums, and still O(15²)."""
    row = vec15()  # (H·P)_j
    col = vec15()  # (P·Hᵀ)_i
    for j in range(N):
        row[j] = h[0] * P[world, ATT, j] + h[1] * P[world, ATT + 1, j] + h[2] * P[world, ATT + 2, j]
        col[j] = P[world, j, ATT] * h[0] + P[world, j, ATT + 1] * h[1] + P[world, j, ATT + 2] * h[2]
    hph = row[ATT] * h[0] + row[ATT + 1] * h[1] + row[ATT + 2] * h[2]
    K = col / (hph + variance)
    # L = I − K·H;  (L·P)_ij = P_ij − K_i·(H·P)_j;  (L·P·Hᵀ)_i = (P·Hᵀ)_i − K_i·H·P·Hᵀ;
    # (L·P·Lᵀ)_ij = (L·P)_ij − (L·P·Hᵀ)_i·K_j.
    lph = col - K * hph
    for i in range(N):
        for j in range(i, N):
            value = P[world, i, j] - K[i] * row[j] - lph[i] * K[j] + variance * K[i] * K[j]
            P[world, i, j] = value
            P[world, j, i] = value
    floor_variances(P, world)
    return K * innovation


@wp.func
def attitude_variance_of(P: wp.array3d(dtype=wp.float32), world: int, h: wp.vec3, variance: float) -> float:
    """The innovation variance S = H·P·Hᵀ + R of a measurement with H = h on the attitude error."""
    s = variance
    for r in range(3):
        for c in range(3):
            s += h[r] * P[world, ATT + r, ATT + c] * h[c]
    return s


@wp.func
def variance_of(P: wp.array3d(dtype=wp.float32), world: int, k: int, c: float, variance: float) -> float:
    """The innovation variance S = c²·P_kk + R of a measurement with H = c·e_k."""
    return c * c * P[world, k, k] + variance


#: The specific-force step [m/s²] the alignment's Jacobian is taken over (small against g, large against round-off).
ALIGNMENT_STEP = wp.constant(0.01)


@wp.func
def rotation_vector(q: wp.quat) -> wp.vec3:
    """The rotation vector [rad] of a unit quaternion, the short way round."""
    v = wp.vec3(q[0], q[1], q[2])
    w = q[3]
    if w < 0.0:
        v = -v
        w = -w
    s = wp.length(v)
    if s < 1.0e-12:
        return 2.0 * v
    return v * (2.0 * wp.atan2(s, w) / s)


@wp.func
def alignment_covariance(P: wp.array3d(dtype=wp.float32), world: int, sigma: vec15, position_variance: wp.vec3,
                         J: wp.mat33, yaw_variance: float):
    """P at alignment, from the alignment's own linearisation.

    The attitude taken from a specific-force sample f moves by J·δf (``J`` [rad/(m/s²)], NED) when f is off by
    δf = b_a + n (the accelerometer's bias and noise), so the attitude error is δθ = −J·(δb_a + n): perfectly
    correlated with the bias, which hover cannot observe apart from the tilt. With Σ_b = diag(σ_ba²):
    P_θθ = J·Σ_b·Jᵀ + σ_θ²·I (+ ``yaw_variance``, the heading sample's, on the down axis), P_θb = −J·Σ_b;
    position ``position_variance`` [m²]; the rest diagonal from ``sigma``.
    """
    for i in range(N):
        for j in range(N):
            P[world, i, j] = 0.0
        P[world, i, i] = sigma[i] * sigma[i]
    for r in range(3):
        P[world, POS + r, POS + r] = position_variance[r]
    for r in range(3):
        for c in range(3):
            tilt = float(0.0)
            for k in range(3):
                tilt += J[r, k] * J[c, k] * sigma[ACCEL_BIAS + k] * sigma[ACCEL_BIAS + k]
            P[world, ATT + r, ATT + c] = tilt
            cross = -J[r, c] * sigma[ACCEL_BIAS + c] * sigma[ACCEL_BIAS + c]
            P[world, ATT + r, ACCEL_BIAS + c] = cross
            P[world, ACCEL_BIAS + c, ATT + r] = cross
        P[world, ATT + r, ATT + r] = P[world, ATT + r, ATT + r] + sigma[ATT + r] * sigma[ATT + r]
    P[world, ATT + 2, ATT + 2] = P[world, ATT + 2, ATT + 2] + yaw_variance


# ---- Wind states: two more (north, east [m/s]) for a filter that fuses airspeed -------------------------------------
#
# The full covariance is [[P, C], [Cᵀ, W]]: P the (15, 15) above, untouched in layout; C (15, 2) and W (2, 2) kept
# in a second array ``Pw`` of shape (worlds, 17, 2): rows 0-14 are C, rows 15-16 are W. A filter without wind
# states never touches ``Pw``, so its 15-state arithmetic is the same operations as before they existed.

NW = 2
WIND = N  #: the wind's index in the 17-state error vector
vec17 = wp.types.vector(length=N + NW, dtype=wp.float32)


@wp.func
def predict_wind_covariance(Pw: wp.array3d(dtype=wp.float32), world: int, T: float, dv_ned: wp.vec3, R: wp.mat33,
                            wind_variance: float, limit: float):
    """C ← F·C and W ← W + q·I over the interval ``T`` [s] of :func:`predict_covariance` (the wind a random walk,
    F = I on it; ``wind_variance`` q [m²/s²]), q added to an axis only while its variance is below ``limit``
    [m²/s²] (as PX4, which keeps an unobserved wind from growing without bound). Each column of C is F applied to
    it, by :func:`apply_columns` (the blocks of F the 15-state covariance's prediction applies)."""
    M = -wp.skew(dv_ned)
    Rdt = R * T
    for a in range(NW):
        column = vec15()
        for i in range(N):
            column[i] = Pw[world, i, a]
        column = apply_columns(column, T, M, Rdt)
        for i in range(N):
            Pw[world, i, a] = column[i]
        if Pw[world, WIND + a, a] < limit:
            Pw[world, WIND + a, a] = Pw[world, WIND + a, a] + wind_variance


@wp.func
def wind_innovation_variance(P: wp.array3d(dtype=wp.float32), Pw: wp.array3d(dtype=wp.float32), world: int,
                             h: vec15, hw: wp.vec2, variance: float) -> float:
    """S = H·P₁₇·Hᵀ + R for H = (h, hw) over the 15 states and the wind."""
    s = variance
    for i in range(N):
        row = float(0.0)
        for j in range(N):
            row += P[world, i, j] * h[j]
        s += h[i] * (row + 2.0 * (Pw[world, i, 0] * hw[0] + Pw[world, i, 1] * hw[1]))
    for a in range(NW):
        for b in range(NW):
            s += hw[a] * Pw[world, WIND + a, b] * hw[b]
    return s


@wp.func
def fuse_with_wind(P: wp.array3d(dtype=wp.float32), Pw: wp.array3d(dtype=wp.float32), world: int, h: vec15,
                   hw: wp.vec2, innovation: float, variance: float) -> vec17:
    """Fuse a scalar with H = (h, hw) into the 17-state covariance [[P, C], [Cᵀ, W]], Joseph form as
    :func:`fuse_attitude_scalar` (P ← P − K·(H·P) − (L·P·Hᵀ)·Kᵀ + R·K·Kᵀ), then symmetrised; returns δx = K·ν.
    The caller has gated the innovation. O(17²)."""
    col = vec17()  # P₁₇·Hᵀ (= (H·P₁₇)ᵀ, P symmetric)
    for i in range(N):
        s = float(0.0)
        for j in range(N):
            s += P[world, i, j] * h[j]
        col[i] = s + Pw[world, i, 0] * hw[0] + Pw[world, i, 1] * hw[1]
    for a in range(NW):
        s = float(0.0)
        for j in range(N):
            s += Pw[world, j, a] * h[j]
        col[WIND + a] = s + Pw[world, WIND + a, 0] * hw[0] + Pw[world, WIND + a, 1] * hw[1]
    hph = col[WIND] * hw[0] + col[WIND + 1] * hw[1]
    for i in range(N):
        hph += col[i] * h[i]
    K = col / (hph + variance)
    lph = col - K * hph
    for i in range(N):
        for j in range(N):
            P[world, i, j] = P[world, i, j] - K[i] * col[j] - lph[i] * K[j] + variance * K[i] * K[j]
    for i in range(N + NW):
        for a in range(NW):
            Pw[world, i, a] = Pw[world, i, a] - K[i] * col[WIND + a] - lph[i] * K[WIND + a] + variance * K[i] * K[WIND + a]
    symmetrise(P, world)
    mean = 0.5 * (Pw[world, WIND, 1] + Pw[world, WIND + 1, 0])
    Pw[world, WIND, 1] = mean
    Pw[world, WIND + 1, 0] = mean
    for a in range(NW):
        Pw[world, WIND + a, a] = wp.max(Pw[world, WIND + a, a], 1.0e-12)
    return K * innovation


@wp.func
def true_airspeed_jacobian(velocity: wp.vec3, wind: wp.vec3) -> wp.vec3:
    """∂|v − w|/∂v [-] for the air-relative velocity v − w (the vertical wind zero); ∂/∂(w_N, w_E) is minus its first
    two entries. Zero when the vehicle does not move through the air."""
    air = wp.vec3(velocity[0] - wind[0], velocity[1] - wind[1], velocity[2])
    speed = wp.length(air)
    if speed <= 0.0:
        return wp.vec3(0.0)
    return air / speed


@wp.func
def sideslip_velocity_jacobian(R: wp.mat33, air: wp.vec3) -> wp.vec3:
    """∂β/∂v [s/m] of the synthetic sideslip β = a_y/a_x, a = Rᵀ·air the air-relative velocity in FRD (``air`` = v − w
    [m/s] NED, ``R`` FRD→NED): (R·e_y − β·R·e_x)/a_x; ∂β/∂(w_N, w_E) is minus its first two entries. The caller
    keeps a_x above zero."""
    a = wp.transpose(R) * air
    beta = a[1] / a[0]
    return (wp.vec3(R[0, 1], R[1, 1], R[2, 1]) - beta * wp.vec3(R[0, 0], R[1, 0], R[2, 0])) / a[0]


@wp.func
def sideslip_attitude_jacobian(R: wp.mat33, air: wp.vec3) -> wp.vec3:
    """∂β/∂δθ [1/rad] (NED): the true rotation exp(δθ)·R sees the air as Rᵀ·(air + air × δθ), so
    ∂β/∂δθ = g × air with g = ∂β/∂v (:func:`sideslip_velocity_jacobian`)."""
    return wp.cross(sideslip_velocity_jacobian(R, air), air)
