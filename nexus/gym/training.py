"""PPO on the Nexus vector environment (one process, or its worlds sharded over the cores) with skrl, and the
policy exported as ONNX.

skrl's Gymnasium wrapper takes the vector environment unchanged; its PPO agent
is driven step by step here (not by skrl's trainer) so that the loop can print
progress, write the learning curve and checkpoints as it goes, and stop on
Ctrl-C or SIGTERM with both kept. The exported ``policy.onnx`` holds the
observation normalisation (skrl's running standard scaler, frozen) and the
policy's mean action; its metadata states the observation layout, the action
and the policy's rate, which ``nexus run --controller policy`` reads.
"""

from __future__ import annotations

import csv
import json
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from nexus.control.velocity_action import MAX_FADE_POWER
from nexus.core.errors import BuildError
from nexus.gym.agent import ACTION_MODES
from nexus.gym.bar_best import BarBest
from nexus.gym.env import check_noise, check_seed, check_worlds, decimation_of, said
from nexus.gym.export import export_onnx
from nexus.gym.sharded_env import check_shards, make_vector_env
from nexus.gym.swarm_evaluate import make_swarm_scorer
from nexus.gym.swarm_tasks import SWARM_TASKS
from nexus.gym.tasks import TASKS

#: The smallest log standard deviation of the policy's actions [log action units].
MIN_LOG_STD = -5.0
#: The learning curve's columns: the last two are the optimiser's learning rate after the update (skrl's
#: KL-adaptive rate) and the policy's exploration, the mean standard deviation of its actions [action units].
CURVE_COLUMNS = ("steps", "wall_s", "steps_per_s", "episodes", "mean_return", "mean_length", "learning_rate",
                 "action_std")


@dataclass
class TrainConfig:
    """What a training run computes from (the wall clock decides nothing)."""

    task: str = "hover"
    worlds: int = 64
    steps: int = 2_000_000
    seed: int = 0
    action: str = "ctbr"
    policy_hz: float = 50.0
    tick_hz: float = 250.0
    noise: float = 1.0
    vary: str | None = None
    vehicle: str = "astro_max_base"
    #: Processes the worlds step in (:mod:`nexus.gym.sharded_env`); None: one per core when the worlds pay for it.
    shards: int | None = None
    #: A multi-agent task's vehicles a world, their spacing [m] and whether they share their worlds (contact).
    vehicles: int = 4
    spacing: float = 2.0
    vehicle_contact: bool = True
    #: With a velocity action on a multi-agent task: the go-to-goal law's gain [1/s] the policy corrects (0: none).
    goal_gain: float = 0.0
    #: With that law: the radius [m] within which the policy's correction fades to 0 at the goal (0: never).
    goal_fade: float = 0.0
    #: With that fade: its power [-] (1: linear, 2: quadratic; :mod:`nexus.control.velocity_action`).
    goal_fade_power: float = 1.0
    #: A multi-agent task's episode [s]: every vehicle of a world is truncated after it, and the bar is scored at
    #: its last step (the swap's own 8 s by default).
    episode_s: float = 8.0
    hidden: int = 64
    #: The largest log standard deviation of the policy's actions [log action units]: 1 lets the exploration grow
    #: to e = 2.7 times the action's range, where the swap's runs went (docs/fleets.md).
    max_log_std: float = 1.0
    rollouts: int = 32
    epochs: int = 5
    mini_batches: int = 4
    learning_rate: float = 3e-4
    #: The largest learning rate skrl's KL-adaptive rule may raise it to (1e-2, skrl's own default); the swap's
    #: runs sat near 2e-3 (docs/fleets.md).
    max_learning_rate: float = 1e-2
    discount: float = 0.99
    gae_lambda: float = 0.95
    entropy: float = 0.0
    #: Updates between checkpoints.
    checkpoint_every: int = 10
    #: With a multi-agent task: score the policy on the bar every this many environment steps, at the first
    #: checkpoint past each multiple, and keep the best as policy_bar.onnx (:mod:`nexus.gym.bar_best`; 0: never).
    score_every: int = 0
    #: The episodes of each such score (one a world, flown at once).
    score_episodes: int = 64

    def check(self, labels: dict[str, str] | None = None) -> None:
        """One-line errors for what cannot train, before anything is built.

        ``labels`` names the fields in the errors: ``nexus train`` passes its options (``{"worlds": "--worlds"}``
        gives *"--worlds 0: ..."*); a field without a label is named as the keyword (*"worlds=0: ..."*).
        """

        def label(field: str) -> str:
            return (labels or {}).get(field, f"{field}=")

        if self.task in SWARM_TASKS:
            check_swarm(self, label)
        elif self.episode_s != 8.0:
            raise BuildError(f"{said(label('episode_s'), self.episode_s)}: it sets a multi-agent task's episode "
                             f"({', '.join(SWARM_TASKS)}); the single-agent tasks keep their own; drop "
                             f"{label('episode_s').rstrip('=')}")
        elif self.goal_gain != 0.0 or self.goal_fade != 0.0 or self.goal_fade_power != 1.0:
            field = next(name for name, unset in (("goal_gain", 0.0), ("goal_fade", 0.0), ("goal_fade_power", 1.0))
                         if getattr(self, name) != unset)
            raise BuildError(f"{said(label(field), getattr(self, field))}: the go-to-goal law is for the multi-agent "
                             f"tasks ({', '.join(SWARM_TASKS)}); drop {label(field).rstrip('=')}")
        elif self.task not in TASKS:
            raise BuildError(f"{said(label('task'), self.task)}: unknown task; choose one of "
                             f"{', '.join((*TASKS, *SWARM_TASKS))}")
        if self.task not in SWARM_TASKS and self.score_every != 0:
            raise BuildError(f"{said(label('score_every'), self.score_every)}: scoring by the bar during training is "
                             f"for the multi-agent tasks ({', '.join(SWARM_TASKS)}); drop "
                             f"{label('score_every').rstrip('=')}")
        top = self.max_log_std
        if isinstance(top, bool) or not isinstance(top, (int, float)) or not MIN_LOG_STD < top <= 2.0:
            raise BuildError(f"{said(label('max_log_std'), top)}: give the largest log standard deviation of the "
                             f"policy's actions, above {MIN_LOG_STD:g} and at most 2 (1: std up to 2.7 of the action's "
                             "range; -1: 0.37)")
        cap = self.max_learning_rate
        if isinstance(cap, bool) or not isinstance(cap, (int, float)) or not 1e-6 < cap <= 1e-2 \
                or cap < self.learning_rate:
            raise BuildError(f"{said(label('max_learning_rate'), cap)}: give the largest learning rate, at least the "
                             f"starting {self.learning_rate:g} and at most 0.01 (e.g. 5e-4)")
        check_worlds(self.worlds, label("worlds"))
        decimation_of(self.tick_hz, self.policy_hz, label("policy_hz"), label("tick_hz"))
        if self.action not in ACTION_MODES:
            raise BuildError(f"{said(label('action'), self.action)}: unknown action; choose one of "
                             f"{', '.join(ACTION_MODES)}")
        if isinstance(self.steps, bool) or not isinstance(self.steps, (int, np.integer)) or self.steps < 1:
            raise BuildError(f"{said(label('steps'), self.steps)}: give a whole number of environment steps, 1 or more "
                             "(e.g. 2e6)")
        check_noise(self.noise, label("noise"))
        check_seed(self.seed, label("seed"))
        if self.shards is not None:
            check_shards(self.shards, self.worlds, label("shards"))
        if self.vary is not None and not Path(self.vary).is_file():
            raise BuildError(f"{said(label('vary'), self.vary)}: no such file; give the path of a TOML variation file "
                             "(docs/worlds.md)")


def check_swarm(config: TrainConfig, label) -> None:
    """A multi-agent task's own settings: its vehicles and spacing, and what it does not take yet."""
    vehicles = config.vehicles
    if isinstance(vehicles, bool) or not isinstance(vehicles, (int, np.integer)) or not 2 <= vehicles <= 64:
        raise BuildError(f"{said(label('vehicles'), vehicles)}: the {config.task} task flies 2 to 64 vehicles a "
                         "world; give a whole number in that range (e.g. 4)")
    spacing = config.spacing
    if isinstance(spacing, bool) or not isinstance(spacing, (int, float)) or not np.isfinite(spacing) or spacing <= 0:
        raise BuildError(f"{said(label('spacing'), spacing)}: give the distance between neighbouring vehicles in "
                         "metres, above 0 (e.g. 2)")
    gain = config.goal_gain
    if isinstance(gain, bool) or not isinstance(gain, (int, float)) or not np.isfinite(gain) or gain < 0:
        raise BuildError(f"{said(label('goal_gain'), gain)}: give the go-to-goal law's gain in 1/s, 0 or more "
                         "(0: the policy's velocity alone; e.g. 1)")
    fade = config.goal_fade
    if isinstance(fade, bool) or not isinstance(fade, (int, float)) or not np.isfinite(fade) or fade < 0:
        raise BuildError(f"{said(label('goal_fade'), fade)}: give the radius in metres within which the correction "
                         "fades at the goal, 0 or more (0: never; e.g. 1)")
    if fade > 0 and gain == 0:
        raise BuildError(f"{said(label('goal_fade'), fade)}: it fades the correction to a go-to-goal law; give "
                         f"{label('goal_gain').rstrip('=')} too, or drop {label('goal_fade').rstrip('=')}")
    power = config.goal_fade_power
    if isinstance(power, bool) or not isinstance(power, (int, float)) or not 1.0 <= power <= MAX_FADE_POWER:
        raise BuildError(f"{said(label('goal_fade_power'), power)}: give the fade's power, from 1 to "
                         f"{MAX_FADE_POWER:g} (1: linear, 2: quadratic, the law winning sooner near the goal)")
    if power != 1.0 and fade == 0:
        raise BuildError(f"{said(label('goal_fade_power'), power)}: it shapes the correction's fade; give "
                         f"{label('goal_fade').rstrip('=')} too, or drop {label('goal_fade_power').rstrip('=')}")
    if gain > 0 and config.action != "velocity":
        raise BuildError(f"{said(label('goal_gain'), gain)}: the go-to-goal law is a velocity the policy corrects; "
                         f"give {label('action').rstrip('=')} velocity too, or drop {label('goal_gain').rstrip('=')}")
    seconds = config.episode_s
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not 1.0 <= seconds <= 60.0:
        raise BuildError(f"{said(label('episode_s'), seconds)}: give the episode's length in seconds, from 1 to 60 "
                         "(the swap's own: 8)")
    every = config.score_every
    if isinstance(every, bool) or not isinstance(every, (int, np.integer)) or every < 0:
        raise BuildError(f"{said(label('score_every'), every)}: give the environment steps between scores by the "
                         "bar, a whole number, 0 or more (0: never; e.g. 1e6)")
    episodes = config.score_episodes
    if isinstance(episodes, bool) or not isinstance(episodes, (int, np.integer)) or not 1 <= episodes <= 1024:
        raise BuildError(f"{said(label('score_episodes'), episodes)}: give the episodes of each score by the bar, "
                         "a whole number from 1 to 1024 (one world each, flown at once; e.g. 64)")
    if config.vary is not None:
        raise BuildError(f"{said(label('vary'), config.vary)}: the {config.task} task draws no variation file yet; "
                         f"drop {label('vary').rstrip('=')} (the single-agent tasks {', '.join(TASKS)} take it)")
    if config.shards not in (None, 1):
        raise BuildError(f"{said(label('shards'), config.shards)}: the {config.task} task steps in one process; "
                         f"drop {label('shards').rstrip('=')}")


def _models(env, hidden: int, device, max_log_std: float = 1.0):
    import torch  # noqa: PLC0415  (reason: torch, of the learn extra, loads only for a policy)
    from skrl.models.torch import DeterministicMixin, GaussianMixin, Model  # noqa: PLC0415  (reason: skrl, of the learn extra, loads only to train)

    def mlp(inputs: int, outputs: int):
        return torch.nn.Sequential(torch.nn.Linear(inputs, hidden), torch.nn.Tanh(), torch.nn.Linear(hidden, hidden),
                                   torch.nn.Tanh(), torch.nn.Linear(hidden, outputs))

    class Policy(GaussianMixin, Model):
        def __init__(self):
            Model.__init__(self, observation_space=env.observation_space, action_space=env.action_space, device=device)
            GaussianMixin.__init__(self, clip_actions=False, clip_log_std=True, min_log_std=MIN_LOG_STD,
                                   max_log_std=float(max_log_std))
            self.net = mlp(self.num_observations, self.num_actions)
            with torch.no_grad():  # start near the action 0 (hover thrust, no rates): episodes last from the first
                self.net[-1].weight.mul_(0.01)
                self.net[-1].bias.zero_()
            self.log_std_parameter = torch.nn.Parameter(torch.full((self.num_actions,), -1.6))

        def compute(self, inputs, role=""):
            return self.net(inputs["observations"]), {"log_std": self.log_std_parameter}

    class Value(DeterministicMixin, Model):
        def __init__(self):
            Model.__init__(self, observation_space=env.observation_space, action_space=env.action_space, device=device)
            DeterministicMixin.__init__(self, clip_actions=False)
            self.net = mlp(self.num_observations, 1)

        def compute(self, inputs, role=""):
            return self.net(inputs["observations"]), {}

    return {"policy": Policy(), "value": Value()}


def make_agent(env, config: TrainConfig):
    """skrl's PPO for ``env`` (skrl-wrapped) with ``config``'s hyperparameters and a running observation scaler."""
    from skrl.agents.torch.ppo import PPO, PPO_CFG  # noqa: PLC0415  (reason: skrl, of the learn extra, loads only to train)
    from skrl.memories.torch import RandomMemory  # noqa: PLC0415  (reason: skrl, of the learn extra, loads only to train)
    from skrl.resources.preprocessors.torch import RunningStandardScaler  # noqa: PLC0415  (reason: skrl, of the learn extra, loads only to train)
    from skrl.resources.schedulers.torch import KLAdaptiveLR  # noqa: PLC0415  (reason: skrl, of the learn extra, loads only to train)

    models = _models(env, config.hidden, env.device, config.max_log_std)
    memory = RandomMemory(memory_size=config.rollouts, num_envs=env.num_envs, device=env.device)
    cfg = PPO_CFG(rollouts=config.rollouts, learning_epochs=config.epochs, mini_batches=config.mini_batches,
                  discount_factor=config.discount, gae_lambda=config.gae_lambda, learning_rate=config.learning_rate,
                  learning_rate_scheduler=KLAdaptiveLR, learning_rate_scheduler_kwargs={"kl_threshold": 0.01, "max_lr": config.max_learning_rate},
                  observation_preprocessor=RunningStandardScaler,
                  observation_preprocessor_kwargs={"size": env.observation_space, "device": env.device},
                  entropy_loss_scale=config.entropy, value_loss_scale=1.0, time_limit_bootstrap=True,
                  grad_norm_clip=1.0)
    cfg.experiment.write_interval = 0
    cfg.experiment.checkpoint_interval = 0
    agent = PPO(models=models, memory=memory, observation_space=env.observation_space,
                action_space=env.action_space, device=env.device, cfg=cfg)
    agent.init()
    agent.enable_training_mode(True)  # skrl's trainers do this; without it post_interaction never updates
    return agent


class Curve:
    """The learning curve: a CSV row per update, rewritten whole (a temporary file renamed) so it is never cut."""

    def __init__(self, path: Path):
        self.path = path
        self.rows: list[dict] = []

    def add(self, row: dict) -> None:
        self.rows.append(row)
        temporary = self.path.with_suffix(".csv.tmp")
        with open(temporary, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=CURVE_COLUMNS)
            writer.writeheader()
            writer.writerows(self.rows)
        os.replace(temporary, self.path)

    def plot(self, path: Path, title: str) -> None:
        if not self.rows:
            return
        import matplotlib  # noqa: PLC0415  (reason: matplotlib loads only to draw)

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # noqa: PLC0415  (reason: matplotlib loads only to draw)

        steps = [r["steps"] for r in self.rows]
        figure, axes = plt.subplots(1, 2, figsize=(9, 3.2))
        axes[0].plot(steps, [r["mean_return"] for r in self.rows])
        axes[0].set_xlabel("environment steps")
        axes[0].set_ylabel("mean episode return")
        axes[1].plot(steps, [r["mean_length"] for r in self.rows])
        axes[1].set_xlabel("environment steps")
        axes[1].set_ylabel("mean episode length [steps]")
        figure.suptitle(title)
        figure.tight_layout()
        temporary = path.with_suffix(".tmp.png")
        figure.savefig(temporary, dpi=100)
        plt.close(figure)
        os.replace(temporary, path)


def _number(text: str):
    """A curve cell read back: an int, else a float (``1e-05`` and ``0.0003`` alike)."""
    try:
        return int(text)
    except ValueError:
        return float(text)


def _learning_rate(agent, config: TrainConfig) -> float:
    """The optimiser's learning rate now (skrl's scheduler moves it after every epoch of an update)."""
    scheduler = getattr(agent, "scheduler", None)
    return float(scheduler.get_last_lr()[0]) if scheduler else float(config.learning_rate)


def save_checkpoint(agent, folder: Path, steps: int) -> Path:
    """The agent's models, optimiser and scaler as ``checkpoint.pt`` (written whole, then renamed)."""
    path = folder / "checkpoint.pt"
    temporary = folder / "checkpoint.pt.tmp"
    agent.save(str(temporary))
    os.replace(temporary, path)
    (folder / "checkpoint.json").write_text(json.dumps({"steps": steps}) + "\n")
    return path


class BestPolicy:
    """The policy of the best checkpoint so far by the learning curve's mean return, kept beside the last one.

    PPO's last policy is not always its best (a run can get worse before it stops), so at each checkpoint whose
    ``mean_return`` beats every earlier checkpoint's the policy is also exported as ``policy_best.onnx``, with its
    steps and return in ``best.json`` (written whole, then renamed). The curve's return is the training episodes'
    (the stochastic policy's), a proxy: score the kept policy with ``--evaluate-only``.
    """

    def __init__(self, folder: Path, resumed: bool):
        self.folder = folder
        path = folder / "best.json"
        if not resumed:  # a fresh run keeps nothing of an earlier one in the folder
            path.unlink(missing_ok=True)
        #: {"steps", "mean_return"} of the kept policy (a resumed run goes on from the one it kept).
        self.kept: dict | None = json.loads(path.read_text()) if path.is_file() else None

    def offer(self, row: dict, export) -> bool:
        """Keep ``row``'s policy (``export(path)`` writes it) when its mean return is the best yet; True if kept."""
        if self.kept is not None and not row["mean_return"] > self.kept["mean_return"]:
            return False
        export(self.folder / "policy_best.onnx")
        self.kept = {"steps": row["steps"], "mean_return": row["mean_return"]}
        temporary = self.folder / "best.json.tmp"
        temporary.write_text(json.dumps(self.kept) + "\n")
        os.replace(temporary, self.folder / "best.json")
        return True


@dataclass
class TrainResult:
    """The last learning-curve row and the skrl agent (its policy, value and observation scaler)."""

    last: dict
    agent: object


def train(config: TrainConfig, out: Path, say=print, resume: bool = False) -> TrainResult:
    """Train ``config`` into ``out`` (curve, checkpoint, policy.onnx).

    Ctrl-C or SIGTERM stops it after writing the checkpoint, the curve and the ONNX of the policy so far.
    ``resume``: go on from ``out``'s checkpoint (:func:`check_resume` first) up to ``config.steps`` in all.
    """
    config.check()
    # Before the environment is built: a resume that cannot go on is refused at once.
    resume_from = check_resume(config, out) if resume else None
    if config.task in SWARM_TASKS:  # one policy shared by every vehicle (nexus.gym.swarm_training)
        from nexus.gym.swarm_training import make_swarm_env  # noqa: PLC0415  (reason: the multi-agent environment loads only for its tasks)

        vector = make_swarm_env(config)
        bar = None
        if config.score_every > 0:
            out.mkdir(parents=True, exist_ok=True)
            bar = BarBest(out, config.score_every, lambda: make_swarm_scorer(config), resumed=resume_from is not None,
                          say=say)
        return learn(vector, config, out, say, f"PPO on nexus {config.task}, {config.worlds} worlds x "
                                               f"{config.vehicles} vehicles, one shared policy",
                     resume_from=resume_from, bar=bar)
    # The environment first: a variation file's unknown parameter or a bad vehicle fails before OUT is made.
    # The learner and the worlds take turns (PPO acts, every world steps, it learns): while the worlds step, the
    # learner waits, so the worlds take every core (docs/learning.md, "Both cores").
    vector = make_vector_env(num_envs=config.worlds, shards=config.shards, task=config.task, action=config.action,
                             policy_hz=config.policy_hz, tick_hz=config.tick_hz, noise=config.noise,
                             vary=config.vary, vehicle=config.vehicle)
    return learn(vector, config, out, say, f"PPO on nexus {config.task}, {config.worlds} worlds",
                 resume_from=resume_from)


#: The TrainConfig fields a resumed run may change: how far it goes, how many processes step the worlds and how
#: often and widely the bar scores the policy (none of which the learning sees).
RESUMABLE_CHANGES = ("steps", "shards", "score_every", "score_episodes")


def check_resume(config: TrainConfig, out: Path, labels: dict[str, str] | None = None) -> int:
    """The steps ``out``'s checkpoint has trained, after one-line errors for a resume that cannot go on: no
    checkpoint, a train.json whose problem differs from ``config`` (only :data:`RESUMABLE_CHANGES` may), or
    ``config.steps`` not past what is done."""
    out = Path(out)
    again = "give the --out of an earlier nexus train, or train afresh without --resume"
    for name in ("checkpoint.pt", "checkpoint.json", "train.json", "curve.csv"):
        if not (out / name).is_file():
            raise BuildError(f"--resume: {out / name} is missing; {again}")
    saved = json.loads((out / "train.json").read_text())
    for field, value in asdict(config).items():
        if field in RESUMABLE_CHANGES or field not in saved or saved[field] == value:
            continue
        option = (labels or {}).get(field, f"{field}=")
        shown = option if option.endswith("=") else option + " "
        raise BuildError(f"--resume: {out / 'train.json'} was trained with {shown}{saved[field]}, this run asks "
                         f"{shown}{value}; give the same options to go on, or a new --out")
    done = int(json.loads((out / "checkpoint.json").read_text())["steps"])
    if config.steps <= done:
        raise BuildError(f"--resume: {out} has trained {done:,} steps already; give --steps above that (the total "
                         f"to reach)")
    return done


def learn(vector, config: TrainConfig, out: Path, say=print, title: str = "PPO",
          resume_from: int | None = None, bar=None) -> TrainResult:
    """PPO on ``vector`` (a Gymnasium vector environment whose rows are the learner's environments) into ``out``:
    the config as train.json, a curve row and a progress line every update, checkpoints, and policy.onnx
    (exported by ``vector``'s own :meth:`export` when it has one, else :func:`export_onnx`). Closes ``vector``.

    ``resume_from``: the steps ``out``'s checkpoint has done (:func:`check_resume`'s answer; None: a fresh run):
    the models, optimiser and observation scaler from that checkpoint, the curve's rows kept and
    the step count, wall time and episode count going on from them; the worlds restart from a seed moved on by
    the steps done (their episodes in flight at the stop are not kept), so the resumed run is not the bits of one
    that never stopped. ``bar``: a :class:`~nexus.gym.bar_best.BarBest` that scores the policy at checkpoints."""
    import torch  # noqa: PLC0415  (reason: torch, of the learn extra, loads only for a policy)
    from skrl.envs.wrappers.torch import wrap_env  # noqa: PLC0415  (reason: skrl, of the learn extra, loads only to train)
    from skrl.utils import set_seed  # noqa: PLC0415  (reason: skrl, of the learn extra, loads only to train)

    export = getattr(vector, "export", None) or (lambda agent, path: export_onnx(agent, vector, path, config))
    out = Path(out)
    trained = resume_from or 0  # steps the checkpoint has done
    out.mkdir(parents=True, exist_ok=True)
    (out / "train.json").write_text(json.dumps(asdict(config), indent=2) + "\n")
    set_seed(config.seed, deterministic=True)
    torch.set_num_threads(1)
    env = wrap_env(vector, wrapper="gymnasium")
    agent = make_agent(env, config)
    curve = Curve(out / "curve.csv")
    best = BestPolicy(out, resumed=resume_from is not None)
    per_step = vector.num_envs
    first, wall_before, episodes_before = 0, 0.0, 0
    if resume_from is not None:
        agent.load(str(out / "checkpoint.pt"))
        with open(out / "curve.csv", newline="") as f:
            curve.rows = [{k: _number(v) for k, v in row.items() if v not in ("", None)} for row in csv.DictReader(f)
                          if int(row["steps"]) <= trained]
        first = trained // per_step
        if curve.rows:
            wall_before, episodes_before = float(curve.rows[-1]["wall_s"]), int(curve.rows[-1]["episodes"])
        say(f"train: resumed from {out / 'checkpoint.pt'} at {trained:,} steps")
    total = int(np.ceil(config.steps / per_step))
    returns = np.zeros(per_step)
    lengths = np.zeros(per_step, dtype=np.int64)
    finished_returns: list[float] = []
    finished_lengths: list[int] = []
    env._seed = config.seed + trained  # skrl's wrapper passes its seed to the first reset (resumed: fresh starts)
    observations, _ = env.reset()
    if bar is not None:
        bar.start(trained)
    began = time.perf_counter()
    last: dict = {}
    updates = first // config.rollouts
    try:
        for timestep in range(first, total):
            agent.pre_interaction(timestep=timestep, timesteps=total)
            with torch.no_grad():
                actions, _ = agent.act(observations, None, timestep=timestep, timesteps=total)
                next_observations, rewards, terminated, truncated, infos = env.step(actions)
                agent.record_transition(observations=observations, states=None, actions=actions, rewards=rewards,
                                        next_observations=next_observations, next_states=None, terminated=terminated,
                                        truncated=truncated, infos=infos, timestep=timestep, timesteps=total)
            agent.post_interaction(timestep=timestep, timesteps=total)
            observations = next_observations
            r = rewards.reshape(-1).cpu().numpy()
            done = (terminated | truncated).reshape(-1).cpu().numpy()
            returns += r
            lengths += 1
            if done.any():
                finished_returns.extend(returns[done].tolist())
                finished_lengths.extend(lengths[done].tolist())
                returns[done] = 0.0
                lengths[done] = 0
            if (timestep + 1) % config.rollouts == 0:
                updates += 1
                wall = time.perf_counter() - began
                steps = (timestep + 1) * per_step
                recent_r = finished_returns[-4 * per_step:] or [float(returns.mean())]
                recent_l = finished_lengths[-4 * per_step:] or [float(lengths.mean())]
                rate = (steps - trained) / max(wall, 1e-9)  # this run's own steps over its own time
                wall += wall_before
                last = {"steps": steps, "wall_s": round(wall, 2), "steps_per_s": round(rate, 1),
                        "episodes": episodes_before + len(finished_returns),
                        "mean_return": round(float(np.mean(recent_r)), 4),
                        "mean_length": round(float(np.mean(recent_l)), 2),
                        "learning_rate": float(f"{_learning_rate(agent, config):.4g}"),
                        "action_std": round(float(agent.policy.log_std_parameter.detach()
                                                  .clamp(MIN_LOG_STD, config.max_log_std).exp().mean()), 4)}
                curve.add(last)
                say(f"train: {steps:,} steps, {last['steps_per_s']:,.0f} steps/s, mean return "
                    f"{last['mean_return']:.2f}, episode length {last['mean_length']:.0f} "
                    f"({last['episodes']} episodes, {wall:.0f} s)")
                if updates % config.checkpoint_every == 0:
                    save_checkpoint(agent, out, steps)
                    export(agent, out / "policy.onnx")
                    best.offer(last, lambda path: export(agent, path))
                    if bar is not None and bar.due(steps):
                        bar.offer(steps, lambda path: export(agent, path))
        if bar is not None and last and bar.due(last["steps"]):  # the end, reached (not stopped): scored if due
            bar.offer(last["steps"], lambda path: export(agent, path))
    finally:
        steps = last.get("steps", trained)
        save_checkpoint(agent, out, steps)
        curve.plot(out / "curve.png", title)
        export(agent, out / "policy.onnx")
        if last:
            best.offer(last, lambda path: export(agent, path))
        vector.close()
        if bar is not None:
            bar.close()
    return TrainResult(last, agent)
