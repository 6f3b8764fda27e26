"""Model predictive control on the host (CasADi), over the device attitude and rate loop."""

from nexus.control.mpc.controller import MpcController, MpcError, build_mpc, check_settings
from nexus.control.mpc.model import QuadModel, model_from_plant
from nexus.control.mpc.solver import MpcSettings, RtiSolver

__all__ = ["MpcController", "MpcError", "MpcSettings", "QuadModel", "RtiSolver", "build_mpc", "check_settings", "model_from_plant"]
