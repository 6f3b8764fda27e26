"""Train in Nexus: Gymnasium environments over the worlds of one graph (docs/learning.md).

Importing this package registers ``nexus/Hover-v0``, ``nexus/Waypoint-v0`` and ``nexus/Track-v0``:
``gymnasium.make_vec(id, num_envs=N, vectorization_mode="vector_entry_point")`` gives N worlds (in one
graph, or split over one process per core when N is large enough: ``shards=K`` chooses,
:mod:`nexus.gym.sharded_env`), ``gymnasium.make(id)`` one world. It also registers the multi-agent
``nexus/Swap-v0`` (``make_vec`` only: N worlds of K vehicles, :mod:`nexus.gym.multi_agent`; one world as a
PettingZoo ``ParallelEnv``: :mod:`nexus.gym.parallel_view`). Needs Gymnasium (``pip install nexus[learn]``).
"""

import gymnasium

from nexus.gym.tasks import TASKS

#: Gymnasium id -> task name.
ENV_IDS = {"nexus/Hover-v0": "hover", "nexus/Waypoint-v0": "waypoint", "nexus/Track-v0": "track"}

for _id, _task in ENV_IDS.items():
    if _id not in gymnasium.registry:
        gymnasium.register(id=_id, entry_point="nexus.gym.env:NexusEnv",
                           vector_entry_point="nexus.gym.sharded_env:make_vector_env", kwargs={"task": _task},
                           disable_env_checker=True)

#: Multi-agent Gymnasium id -> task name (``gymnasium.make_vec`` only: a sub-environment is a world of agents).
SWARM_ENV_IDS = {"nexus/Swap-v0": "swap"}

for _id, _task in SWARM_ENV_IDS.items():
    if _id not in gymnasium.registry:
        gymnasium.register(id=_id, vector_entry_point="nexus.gym.multi_agent:SwarmVectorEnv", kwargs={"task": _task},
                           disable_env_checker=True)

__all__ = ["ENV_IDS", "SWARM_ENV_IDS", "TASKS"]
