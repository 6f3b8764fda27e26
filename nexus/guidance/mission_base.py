"""What the device and the host mission guidance share: a checked profile and the landing checks' period."""

from __future__ import annotations

from nexus.core import Component
from nexus.core.errors import BuildError
from nexus.guidance.profile import MissionPlan, MissionProfile


class MissionComponent(Component):
    """A guidance flying a :class:`MissionProfile`; its plan is made at start-up from the first estimate."""

    #: Marks a guidance for tools that rebuild a ring without one (an open-loop replay).
    is_guidance = True

    def __init__(self, name: str = "/scene/mission", profile: MissionProfile | None = None, check_period: float = 0.04):
        super().__init__(name)
        self.profile = profile or MissionProfile()
        try:
            self.profile.check(name)
        except ValueError as error:
            raise BuildError(str(error)) from None
        #: How often the landing is checked [s of sim time].
        self.check_period = float(check_period)
        #: The plan flown, made at start-up (None before).
        self.plan: MissionPlan | None = None
