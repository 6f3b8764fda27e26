"""One world of :class:`~nexus.gym.multi_agent.SwarmVectorEnv` as a PettingZoo ``ParallelEnv``.

Agents are ``vehicle_0`` .. ``vehicle_{K-1}`` (vehicle k of the world, slot k). PettingZoo removes an agent
from ``agents`` once it is terminated or truncated, and never brings it back before ``reset()``. The batched
environment restarts a world in the step it ends, and a world ends for every agent at once (any agent's
crash or collision, or the time limit), so here every agent leaves ``agents`` in that step, each with the last
observation of the episode that ended, and ``reset()`` starts the next. Needs PettingZoo
(``pip install nexus[learn]``).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from pettingzoo import ParallelEnv

from nexus.gym.env import refuse_unknown, keywords_of
from nexus.gym.multi_agent import SwarmVectorEnv


class SwarmParallelEnv(ParallelEnv):
    """One world of K vehicles, each an agent (module doc); the keywords are :class:`SwarmVectorEnv`'s but
    ``num_envs``."""

    metadata = {"name": "nexus_swap_v0", "render_modes": [], "is_parallelizable": True}

    def __init__(self, **kwargs):
        kwargs.pop("num_envs", None)
        valid = [name for name in keywords_of(SwarmVectorEnv) if name != "num_envs"]
        unknown = {name: value for name, value in kwargs.items() if name not in valid}
        if unknown:
            refuse_unknown(unknown, valid, type(self).__name__)
        self.vector = SwarmVectorEnv(num_envs=1, **kwargs)
        self.possible_agents = [f"vehicle_{k}" for k in range(self.vector.vehicles)]
        self.agents: list[str] = []
        self.render_mode = None

    @functools.lru_cache(maxsize=None)  # noqa: B019  (PettingZoo asks for the same object each call)
    def observation_space(self, agent):
        space = self.vector.single_observation_space
        return type(space)(space.low[0], space.high[0], dtype=np.float32)

    @functools.lru_cache(maxsize=None)  # noqa: B019
    def action_space(self, agent):
        space = self.vector.single_action_space
        return type(space)(space.low[0], space.high[0], dtype=np.float32)

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None):
        obs, _ = self.vector.reset(seed=seed, options=options)
        self.agents = list(self.possible_agents)
        return {a: obs[0, k].copy() for k, a in enumerate(self.possible_agents)}, {a: {} for a in self.agents}

    def step(self, actions: dict):
        """Agents missing from ``actions`` hold still (action 0: hover thrust, no rates)."""
        rows = np.zeros((1, self.vector.vehicles, self.vector.action_width), dtype=np.float32)
        for k, agent in enumerate(self.possible_agents):
            if agent in actions:
                rows[0, k] = actions[agent]
        obs, reward, terminated, truncated, info = self.vector.step(rows)
        ended = bool(info.get("_final_obs", np.zeros(1, dtype=bool))[0])
        rows_out = info["final_obs"][0] if ended else obs[0]
        live = self.agents
        out = ({a: rows_out[k].copy() for k, a in enumerate(self.possible_agents) if a in live},
               {a: float(reward[0, k]) for k, a in enumerate(self.possible_agents) if a in live},
               {a: bool(terminated[0, k]) for k, a in enumerate(self.possible_agents) if a in live},
               {a: bool(truncated[0, k]) for k, a in enumerate(self.possible_agents) if a in live},
               {a: {} for a in live})
        if ended:
            self.agents = []
        return out

    def close(self):
        self.vector.close()
