"""Guidance: what writes the ``setpoint`` the controller follows."""

from nexus.guidance.host_mission import HostMissionGuidance
from nexus.guidance.mission import MISSION_SPEC, MissionGuidance
from nexus.guidance.profile import PHASES, MissionPlan, MissionProfile

__all__ = ["MISSION_SPEC", "PHASES", "HostMissionGuidance", "MissionGuidance", "MissionPlan", "MissionProfile"]
