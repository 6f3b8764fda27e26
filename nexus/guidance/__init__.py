"""Guidance: what writes the ``setpoint`` the controller follows."""

from nexus.guidance.host_mission import HostMissionGuidance
from nexus.guidance.mission import MissionGuidance, build_mission, profile_from_prim
from nexus.guidance.profile import PHASES, MissionPlan, MissionProfile

__all__ = ["PHASES", "HostMissionGuidance", "MissionGuidance", "MissionPlan", "MissionProfile", "build_mission", "profile_from_prim"]
