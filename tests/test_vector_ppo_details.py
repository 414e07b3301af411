"""Details of train/vector_ppo.py pinned against independent computations: the PPO update's figures and step (a
hand-written clipped loss in NumPy and torch on a tiny batch), its minibatches and early stop, the rollout's
storage and GAE (recomputed in NumPy from what the environments returned), the opponents' helpers, config checks
and reading a checkpoint back."""

from __future__ import annotations

import json
import math
import re
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

import torch  # noqa: E402

from train.vector_ppo import Args, masked_logits, ppo_update, random_legal, sample_masked  # noqa: E402

OBS, PRIV, ACTIONS = 5, 2, 4  # a tiny actor's input, the critic's extra columns, the actions
MODEL = Path(__file__).resolve().parent.parent / "models" / "ppo_standard.zip"


# ---------------------------------------------------------------------------------------------- tiny networks
def _tiny_networks(seed: int = 0):
    from train.vector_ppo import _networks

    Actor, Critic, _SuitActor = _networks()
    torch.manual_seed(seed)
    actor = Actor(OBS, ACTIONS, [3], "tanh")
    critic = Critic(OBS + PRIV, [3], "tanh")
    with torch.no_grad():  # sb3's orthogonal start gives the logits a gain of 0.01: spread them out
        actor.action_net.weight.mul_(100.0)
        critic.value_head.weight.mul_(3.0)
    return actor, critic


def _tiny_batch(size: int = 12, seed: int = 0, learner=None):
    """Inputs, masks (every row with at least one legal action), actions taken among the legal ones, old log
    probabilities that differ from the current ones (so some ratios leave the clip range), advantages, returns and
    values."""
    rng = np.random.default_rng(seed)
    inputs = torch.from_numpy(rng.normal(size=(size, OBS + PRIV)).astype(np.float32))
    masks = rng.random((size, ACTIONS)) < 0.6
    masks[np.arange(size), rng.integers(0, ACTIONS, size)] = True
    actions = np.array([rng.choice(np.flatnonzero(row)) for row in masks])
    if learner is None:
        learner = rng.random(size) < 0.7
        learner[:2] = True
    batch = {"masks": torch.from_numpy(masks), "learner": torch.from_numpy(np.asarray(learner, dtype=bool)),
             "actions": torch.from_numpy(actions),
             "logprobs": torch.from_numpy(rng.normal(-1.0, 0.5, size).astype(np.float32)),
             "advantages": torch.from_numpy(rng.normal(0.3, 1.5, size).astype(np.float32)),
             "returns": torch.from_numpy(rng.integers(-3, 4, size).astype(np.float32)),
             "values": torch.from_numpy(rng.normal(0, 1, size).astype(np.float32))}
    return inputs, batch


def _log_softmax_legal(logits: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """Log probabilities of the softmax over the legal actions only (-inf for the illegal ones)."""
    shown = np.where(masks, logits, -np.inf)
    top = shown.max(axis=1, keepdims=True)
    return shown - top - np.log(np.exp(shown - top).sum(axis=1, keepdims=True))


def _expected_figures(actor, critic, inputs, batch, args: Args) -> dict[str, float]:
    """The update's figures on one minibatch of every row, computed in NumPy (float64) from the networks' outputs."""
    with torch.no_grad():
        logits = actor(inputs[:, :OBS]).double().numpy()
        values = critic(inputs).double().numpy()
    learner = batch["learner"].numpy()
    returns = batch["returns"].double().numpy()
    value_loss = 0.5 * np.mean((values - returns) ** 2)
    logp = _log_softmax_legal(logits[learner], batch["masks"].numpy()[learner])
    new = logp[np.arange(learner.sum()), batch["actions"].numpy()[learner]]
    log_ratio = new - batch["logprobs"].double().numpy()[learner]
    ratio = np.exp(log_ratio)
    advantages = batch["advantages"].double().numpy()[learner]
    if args.norm_adv and len(advantages) > 1:
        advantages = (advantages - advantages.mean()) / (advantages.std(ddof=1) + 1e-8)
    clipped = np.clip(ratio, 1 - args.clip_coef, 1 + args.clip_coef)
    policy_loss = np.mean(np.maximum(-advantages * ratio, -advantages * clipped))
    binding = {side for side, rows in (("below", (ratio < 1 - args.clip_coef) & (advantages < 0)),
                                       ("above", (ratio > 1 + args.clip_coef) & (advantages > 0))) if rows.any()}
    probabilities = np.exp(logp)
    entropy = np.mean(-(probabilities * np.where(np.isfinite(logp), logp, 0.0)).sum(axis=1))
    all_returns, all_values = returns, batch["values"].double().numpy()
    return {"policy_loss": policy_loss, "value_loss": value_loss, "entropy": entropy,
            "approx_kl": np.mean(ratio - 1 - log_ratio),
            "clipfrac": np.mean(np.abs(ratio - 1) > args.clip_coef), "binding": binding,
            "explained_variance": 1 - np.var(all_returns - all_values, ddof=1) / np.var(all_returns, ddof=1)}


def _one_step_args(**changes) -> Args:
    values = dict(num_minibatches=1, update_epochs=1, target_kl=None, clip_coef=0.2, ent_coef=0.05, vf_coef=0.7,
                  max_grad_norm=1e9, norm_adv=True)
    values.update(changes)
    return Args(**values)


# ---------------------------------------------------------------------------------------------- the update
@pytest.mark.parametrize("norm_adv", [True, False])
def test_update_figures_are_the_hand_computed_clipped_loss_value_loss_entropy_kl_and_clip_fraction(norm_adv):
    """One epoch, one minibatch: the policy loss is the clipped surrogate on the learner's rows only (normalised
    advantages when ``norm_adv``), the value loss half the mean squared error on every row, the entropy the
    masked softmax's, the approximate KL ``(r - 1) - log r``, the clip fraction that of ``|r - 1| > clip``, the
    explained variance ``1 - var(returns - values) / var(returns)``; ``seconds`` is the time the call took."""
    actor, critic = _tiny_networks()
    inputs, batch = _tiny_batch(size=48)
    args = _one_step_args(norm_adv=norm_adv)
    expected = _expected_figures(actor, critic, inputs, batch, args)
    assert 0 < expected["clipfrac"] < 1  # some ratios are clipped, some not: the max picks both sides
    assert {"below", "above"} <= expected.pop("binding")  # the clip binds at both ends of the range
    optimizer = torch.optim.SGD(list(actor.parameters()) + list(critic.parameters()), lr=0.01)
    started = time.perf_counter()
    figures = ppo_update(actor, critic, optimizer, inputs, batch, args, OBS)
    took = time.perf_counter() - started
    for key, value in expected.items():
        assert figures[key] == pytest.approx(value, rel=1e-4, abs=1e-5), key
    assert 0 <= figures["seconds"] <= took
    assert "anchor_kl" not in figures


def test_update_step_is_minus_the_gradient_of_the_whole_loss_from_zeroed_gradients():
    """With plain SGD (lr 1) and no effective norm clipping, the parameters move by minus the gradient of
    ``policy_loss - ent_coef * entropy + vf_coef * value_loss + anchor_coef * KL(start || policy)``, written here
    independently; gradients left over from before the call do not count."""
    actor, critic = _tiny_networks()
    inputs, batch = _tiny_batch()
    start_actor, _critic = _tiny_networks(seed=5)
    with torch.no_grad():
        batch["anchor_logprobs"] = torch.log_softmax(
            start_actor(inputs[:, :OBS]).masked_fill(~batch["masks"], -1e8), dim=1)
    args = _one_step_args(anchor_coef=0.3)
    parameters = list(actor.parameters()) + list(critic.parameters())
    before = [parameter.detach().clone() for parameter in parameters]

    learner = batch["learner"]
    logits = actor(inputs[learner][:, :OBS])
    logp = torch.log_softmax(torch.where(batch["masks"][learner], logits, torch.tensor(-math.inf)), dim=1)
    new = logp.gather(1, batch["actions"][learner][:, None])[:, 0]
    ratio = torch.exp(new - batch["logprobs"][learner])
    advantages = batch["advantages"][learner]
    advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
    surrogate = torch.maximum(-advantages * ratio, -advantages * torch.clamp(ratio, 0.8, 1.2)).mean()
    probabilities = logp.exp()
    entropy = -(probabilities * torch.where(probabilities > 0, logp, torch.zeros_like(logp))).sum(1).mean()
    value_loss = 0.5 * ((critic(inputs) - batch["returns"]) ** 2).mean()
    start = batch["anchor_logprobs"][learner]
    kl = (start.exp() * (start - torch.where(batch["masks"][learner], logp, torch.zeros_like(logp)))).sum(1).mean()
    loss = surrogate - 0.05 * entropy + 0.7 * value_loss + 0.3 * kl
    expected = torch.autograd.grad(loss, parameters)

    for parameter in parameters:
        parameter.grad = torch.full_like(parameter, 7.0)  # stale gradients: zeroed before the backward pass
    optimizer = torch.optim.SGD(parameters, lr=1.0)
    figures = ppo_update(actor, critic, optimizer, inputs, batch, args, OBS)
    assert figures["anchor_kl"] == pytest.approx(kl.item(), rel=1e-4)
    for old, parameter, gradient in zip(before, parameters, expected):
        torch.testing.assert_close(old - parameter.detach(), gradient, rtol=1e-4, atol=1e-6)


def test_update_clips_the_gradient_norm_of_both_networks():
    """The step's gradient norm over actor and critic together is clipped to ``max_grad_norm``."""
    actor, critic = _tiny_networks()
    inputs, batch = _tiny_batch()
    parameters = list(actor.parameters()) + list(critic.parameters())
    before = [parameter.detach().clone() for parameter in parameters]
    optimizer = torch.optim.SGD(parameters, lr=1.0)
    ppo_update(actor, critic, optimizer, inputs, batch, _one_step_args(max_grad_norm=1e-3), OBS)
    moved = torch.sqrt(sum(((old - new.detach()) ** 2).sum() for old, new in zip(before, parameters)))
    assert float(moved) == pytest.approx(1e-3, rel=1e-3)


def test_a_minibatch_without_learner_rows_steps_the_critic_alone_on_its_clipped_value_loss():
    """No learner decision in the batch: the critic moves by minus ``vf_coef`` times the value loss's gradient
    (clipped to ``max_grad_norm``), the actor stays, and the figures are the value loss and a NaN clip fraction."""
    actor, critic = _tiny_networks()
    inputs, batch = _tiny_batch(learner=np.zeros(12, dtype=bool))
    actor_before = {name: value.clone() for name, value in actor.state_dict().items()}
    critic_parameters = list(critic.parameters())
    before = [parameter.detach().clone() for parameter in critic_parameters]
    value_loss = 0.5 * ((critic(inputs) - batch["returns"]) ** 2).mean()
    expected = torch.autograd.grad(0.7 * value_loss, critic_parameters)
    for parameter in critic_parameters:
        parameter.grad = torch.full_like(parameter, 7.0)
    optimizer = torch.optim.SGD(list(actor.parameters()) + critic_parameters, lr=1.0)
    figures = ppo_update(actor, critic, optimizer, inputs, batch, _one_step_args(), OBS)
    assert figures["value_loss"] == pytest.approx(value_loss.item(), rel=1e-5)
    assert "policy_loss" not in figures and math.isnan(figures["clipfrac"])
    for old, parameter, gradient in zip(before, critic_parameters, expected):
        torch.testing.assert_close(old - parameter.detach(), gradient, rtol=1e-4, atol=1e-6)
    assert all(torch.equal(value, actor_before[name]) for name, value in actor.state_dict().items())
    # no KL without a learner decision: the epochs all run, whatever target_kl
    steps = []
    original_step = optimizer.step
    optimizer.step = lambda *a, **k: (steps.append(1), original_step(*a, **k))[1]
    ppo_update(actor, critic, optimizer, inputs, batch, _one_step_args(update_epochs=3, target_kl=0.03), OBS)
    assert len(steps) == 3
    optimizer.step = original_step
    # clipped: the critic's step norm is max_grad_norm
    before = [parameter.detach().clone() for parameter in critic_parameters]
    ppo_update(actor, critic, optimizer, inputs, batch, _one_step_args(max_grad_norm=1e-3), OBS)
    moved = torch.sqrt(sum(((old - new.detach()) ** 2).sum() for old, new in zip(before, critic_parameters)))
    assert float(moved) == pytest.approx(1e-3, rel=1e-3)


def test_one_learner_decision_is_not_normalised_into_nan():
    """A minibatch with a single learner decision keeps its advantage as it is (the std of one value is NaN)."""
    actor, critic = _tiny_networks()
    learner = np.zeros(12, dtype=bool)
    learner[3] = True
    inputs, batch = _tiny_batch(learner=learner)
    args = _one_step_args()
    expected = _expected_figures(actor, critic, inputs, batch, args)
    expected.pop("binding")
    optimizer = torch.optim.SGD(list(actor.parameters()) + list(critic.parameters()), lr=0.01)
    figures = ppo_update(actor, critic, optimizer, inputs, batch, args, OBS)
    assert math.isfinite(figures["policy_loss"])
    assert figures["policy_loss"] == pytest.approx(expected["policy_loss"], rel=1e-4)


class _Recorder(torch.nn.Module):
    """A critic that records the rows it is asked about (each minibatch's, in order)."""

    def __init__(self, critic):
        super().__init__()
        self.critic = critic
        self.seen: list[list[int]] = []

    def forward(self, inputs):
        self.seen.append(inputs[:, 0].long().tolist())
        return self.critic(inputs)


@pytest.mark.parametrize("minibatches, epochs", [(4, 2), (3, 1)])
def test_every_epoch_visits_every_row_once_in_num_minibatches_equal_minibatches(minibatches, epochs):
    actor, critic = _tiny_networks()
    inputs, batch = _tiny_batch()
    inputs[:, 0] = torch.arange(12)  # the row's number, read back by the recorder
    recorder = _Recorder(critic)
    steps = []
    optimizer = torch.optim.SGD(list(actor.parameters()) + list(critic.parameters()), lr=1e-3)
    original_step = optimizer.step
    optimizer.step = lambda *a, **k: (steps.append(1), original_step(*a, **k))[1]
    ppo_update(actor, recorder, optimizer, inputs, batch, _one_step_args(num_minibatches=minibatches,
                                                                         update_epochs=epochs), OBS)
    assert len(recorder.seen) == len(steps) == minibatches * epochs
    assert all(len(rows) == 12 // minibatches for rows in recorder.seen)
    for epoch in range(epochs):
        rows = sum(recorder.seen[epoch * minibatches:(epoch + 1) * minibatches], [])
        assert sorted(rows) == list(range(12))


def test_target_kl_stops_the_epochs_once_the_kl_passes_it():
    """The first epoch's KL is 0 (old log probabilities are the current ones), the second's positive: with a tiny
    ``target_kl`` the update stops after two epochs of four; with null it runs all four."""
    for target_kl, expected_steps in ((1e-12, 2), (None, 4)):
        actor, critic = _tiny_networks()
        inputs, batch = _tiny_batch()
        with torch.no_grad():
            logits = masked_logits(actor(inputs[:, :OBS]), batch["masks"])
            batch["logprobs"] = torch.distributions.Categorical(logits=logits).log_prob(batch["actions"])
        steps = []
        optimizer = torch.optim.SGD(list(actor.parameters()) + list(critic.parameters()), lr=0.1)
        original_step = optimizer.step
        optimizer.step = lambda *a, **k: (steps.append(1), original_step(*a, **k))[1]
        figures = ppo_update(actor, critic, optimizer, inputs, batch,
                             _one_step_args(update_epochs=4, target_kl=target_kl), OBS)
        assert len(steps) == expected_steps, target_kl
        assert figures["approx_kl"] > 0


# ---------------------------------------------------------------------------------------------- opponents' helpers
def test_masked_logits_and_sampling_never_choose_an_illegal_action():
    """Illegal actions get -1e8 (legal logits untouched); the argmax and the samples are legal even where an
    illegal action has by far the largest logit."""
    logits = torch.tensor([[5.0, 0.0, -1.0, 9.0], [0.0, 0.0, 0.0, 0.0], [100.0, -3.0, 2.0, 1.0]])
    masks = torch.tensor([[False, True, True, False], [False, False, False, True], [False, True, False, True]])
    shown = masked_logits(logits, masks)
    torch.testing.assert_close(shown[masks], logits[masks])
    assert (shown[~masks] == -1e8).all()
    for _ in range(50):  # the argmax every time (row 0's sample would be action 2 a quarter of the time)
        assert sample_masked(logits, masks, deterministic=True).tolist() == [1, 3, 3]
    torch.manual_seed(0)
    draws = torch.stack([sample_masked(logits, masks, deterministic=False) for _ in range(300)])
    assert masks[torch.arange(3).expand(300, 3), draws].all()
    assert set(draws[:, 0].tolist()) == {1, 2}  # both legal actions of row 0 are sampled (not only the argmax)


def test_random_legal_is_uniform_over_the_legal_actions():
    masks = np.array([[True, False, True, False, True], [False, False, False, False, True]])
    rng = np.random.default_rng(0)
    draws = np.stack([random_legal(masks, rng) for _ in range(3000)])
    assert (draws[:, 1] == 4).all()
    counts = np.bincount(draws[:, 0], minlength=5)
    assert counts[[1, 3]].sum() == 0 and all(900 < counts[action] < 1100 for action in (0, 2, 4))


# ---------------------------------------------------------------------------------------------- the rollout
class _RecordingEnvs:
    """The vector environments of a run, recording (copies of) what the learner asked and what they returned."""

    def __init__(self, envs):
        self.envs = envs
        self.reset_infos = None
        self.side_calls: list[tuple[np.ndarray, np.ndarray]] = []  # (learner seats asked, their observation rows)
        self.privileged_calls: list[tuple[np.ndarray, np.ndarray]] = []
        self.steps: list[dict[str, np.ndarray]] = []

    def __getattr__(self, name):
        return getattr(self.envs, name)

    def reset(self, **kwargs):
        observations, infos = self.envs.reset(**kwargs)
        self.reset_infos = {key: np.array(value) for key, value in infos.items()}
        return observations, infos

    def seat_observations(self, seats):
        rows, masks = self.envs.seat_observations(seats)
        self.side_calls.append((np.array(seats), np.array(rows)))
        return rows, masks

    def privileged_observations(self, seats=None):
        rows = self.envs.privileged_observations(seats)
        self.privileged_calls.append((np.array(seats), np.array(rows)))
        return rows

    def step(self, actions):
        observations, rewards, terminations, truncations, infos = self.envs.step(actions)
        self.steps.append({"actions": np.array(actions), "rewards": np.array(rewards),
                           "terminations": np.array(terminations), "seat": np.array(infos["seat"]),
                           "mask": np.array(infos["action_mask"])})
        return observations, rewards, terminations, truncations, infos


def _record(monkeypatch):
    """Record every vector environment a run makes and every update call: (environments, update calls)."""
    import sixtysix_env
    import train.vector_ppo as vector_ppo

    recorders: list[_RecordingEnvs] = []
    real_vector_env = sixtysix_env.vector_env

    def recording_vector_env(*args, **kwargs):
        recorders.append(_RecordingEnvs(real_vector_env(*args, **kwargs)))
        return recorders[-1]

    calls = []
    real_update = vector_ppo.ppo_update

    def recording_update(actor, critic, optimizer, inputs, batch, args, observation_size, train_actor=True):
        with torch.no_grad():
            calls.append({"inputs": inputs.clone(), "batch": {key: value.clone() for key, value in batch.items()},
                          "values_now": critic(inputs), "lr": optimizer.param_groups[0]["lr"],
                          "eps": optimizer.param_groups[0]["eps"],
                          "train_actor": train_actor,
                          "actor": {key: value.clone() for key, value in actor.state_dict().items()},
                          "critic_state": {key: value.clone() for key, value in critic.state_dict().items()}})
        return real_update(actor, critic, optimizer, inputs, batch, args, observation_size, train_actor)

    monkeypatch.setattr(sixtysix_env, "vector_env", recording_vector_env)
    monkeypatch.setattr(vector_ppo, "ppo_update", recording_update)
    return recorders, calls


def _run_recorded(monkeypatch, tmp_path, quiet=True, **changes):
    """A tiny run whose environments and update calls are recorded: (learner, environments, update calls)."""
    import train.vector_ppo as vector_ppo

    recorders, calls = _record(monkeypatch)
    values = dict(num_envs=4, num_steps=8, total_steps=96, num_minibatches=1, update_epochs=1, eval_every=0,
                  eval_pairs=2, eval_opponent="random", hidden=[8], critic_hidden=[8], gamma=0.9, gae_lambda=0.8,
                  progress_bar=False, out_dir=str(tmp_path), run_name="recorded", learning_rate=1e-3,
                  opponents={"self": 1.0, "pool": 1.0, "policy": 1.0, "heuristic": 1.0, "random": 1.0})
    values.update(changes)
    learner = vector_ppo.VectorPpo(vector_ppo.args_from_mapping(values), quiet=quiet)
    learner.train()
    (recorder,) = recorders
    return learner, recorder, calls


def test_rollout_rows_and_gae_are_what_the_environments_returned(monkeypatch, tmp_path):
    """Three updates of 8 steps on 4 deals (gamma 0.9, lambda 0.8, deals ending inside the rollouts): each update
    gets, per step and deal, the learner-side critic input the environments gave for the learner's seat, the legal
    mask, whether the learner was to move, its action (the one sent to the environments; every opponent kind's
    moves are legal too) and its log probability
    under the actor, the critic's values; the advantages are GAE recomputed here in NumPy from the learner's
    rewards and the deal ends (the value after the rollout from the critic on the next learner-side input), the
    returns advantages plus values. The step size anneals linearly; the critic's warm-up holds the actor back; the
    checkpoint counts the learner's decisions; checkpoints and evaluations come every so many updates and at the
    last (the last one is the saved model's, played deterministically against the seeded opponent); the figures
    logged per update are these."""
    from sixtysix_env.observation import OBSERVATION_SIZE

    from sixtysix_env import Rules
    from train.vector_ppo import read_checkpoint

    import train.vector_ppo as vector_ppo

    saved_at = []
    real_save = vector_ppo.VectorPpo._save_checkpoint
    monkeypatch.setattr(vector_ppo.VectorPpo, "_save_checkpoint",
                        lambda self, *args: (saved_at.append(args[6]), real_save(self, *args))[1])
    run, recorder, calls = _run_recorded(monkeypatch, tmp_path, critic_warmup_updates=1, rules="scharf",
                                         checkpoint_every=2, eval_every=2)
    assert saved_at == [2, 3]  # every checkpoint_every updates, and at the last
    evaluated = [json.loads(line)["step"] for line in (tmp_path / "recorded" / "eval.jsonl").read_text().splitlines()]
    assert evaluated == [64, 96]  # every eval_every updates, and at the last
    assert [call["eps"] for call in calls] == [1e-5] * 3  # Adam's epsilon
    torch.manual_seed(1)  # a new run seeds torch with its seed, then builds the actor
    from train.vector_ppo import _networks as network_classes

    fresh = network_classes()[0](OBSERVATION_SIZE, 37, [8], "tanh")
    assert all(torch.equal(value, calls[0]["actor"][key]) for key, value in fresh.state_dict().items())
    assert 0 < run.steps_per_second
    # The last evaluation is the saved model, deterministic, against the seeded opponent on the fixed deals.
    from agents.ppo import PolicyAgent, load_actor
    from agents.registry import make_agent
    from eval.deals import generate_deals
    from train.selfplay import duplicate_margin

    network, _metadata, rules = load_actor(tmp_path / "recorded" / "model.zip")
    seed = Args().eval_seed
    figures = duplicate_margin(PolicyAgent(network, rules, deterministic=True, seed=5),
                               make_agent("random", seed=0), rules, generate_deals(seed, 2, rules), seed)
    assert run.eval_history[-1]["margin"] == pytest.approx(figures["margin"])
    assert json.loads((tmp_path / "recorded" / "eval.jsonl").read_text().splitlines()[-1])["margin"] == \
        pytest.approx(figures["margin"])
    assert recorder.envs.rules == Rules.preset("scharf")  # the run's rules (R20), not the default ones
    checkpoint = read_checkpoint(tmp_path / "recorded" / "checkpoint.pt")
    assert checkpoint["learner_steps"] == sum(int(call["batch"]["learner"].sum()) for call in calls)
    assert checkpoint["global_step"] == 96
    count, steps, updates = 4, 8, 3
    assert len(calls) == updates and len(recorder.steps) == steps * updates
    assert len(recorder.side_calls) == len(recorder.privileged_calls) == (steps + 1) * updates
    assert [call["lr"] for call in calls] == pytest.approx([1e-3, 1e-3 * 2 / 3, 1e-3 / 3])
    assert [call["train_actor"] for call in calls] == [False, True, True]
    ended = 0
    for update, call in enumerate(calls):
        from train.vector_ppo import _networks

        Actor, Critic, _SuitActor = _networks()
        actor = Actor(OBSERVATION_SIZE, 37, [8], "tanh")
        actor.load_state_dict(call["actor"])
        batch = call["batch"]
        inputs = call["inputs"].numpy().reshape(steps, count, -1)
        expected_rewards = np.zeros((steps, count))
        expected_dones = np.zeros((steps, count))
        for step in range(steps):
            index = update * (steps + 1) + step
            seats_asked, rows = recorder.side_calls[index]
            privileged_seats, privileged = recorder.privileged_calls[index]
            np.testing.assert_array_equal(privileged_seats, seats_asked)
            np.testing.assert_array_equal(inputs[step], np.concatenate([rows, privileged], axis=1))
            before = (recorder.reset_infos if update == step == 0 else
                      {"seat": recorder.steps[update * steps + step - 1]["seat"],
                       "action_mask": recorder.steps[update * steps + step - 1]["mask"]})
            done = recorder.steps[update * steps + step]
            learner = before["seat"] == seats_asked
            rows_of_step = slice(step * count, (step + 1) * count)
            np.testing.assert_array_equal(batch["learner"][rows_of_step].numpy(), learner)
            np.testing.assert_array_equal(batch["masks"][rows_of_step].numpy(), before["action_mask"])
            actions = batch["actions"][rows_of_step].numpy()
            np.testing.assert_array_equal(actions[learner], done["actions"][learner])
            assert before["action_mask"][np.arange(count), done["actions"]].all()  # every seat moved legally
            with torch.no_grad():
                logits = actor(torch.from_numpy(rows)).numpy()
            logp = _log_softmax_legal(logits, before["action_mask"])
            # (the other rows keep what an earlier rollout left: the policy loss reads the learner's rows only)
            np.testing.assert_allclose(batch["logprobs"][rows_of_step].numpy()[learner],
                                       logp[np.flatnonzero(learner), actions[learner]], atol=1e-5)
            expected_rewards[step] = done["rewards"][np.arange(count), seats_asked]
            expected_dones[step] = done["terminations"]
        ended += int(expected_dones.sum())
        values = batch["values"].numpy().reshape(steps, count)
        np.testing.assert_allclose(values, call["values_now"].numpy().reshape(steps, count), rtol=1e-5, atol=1e-6)
        _seats, next_rows = recorder.side_calls[update * (steps + 1) + steps]
        _seats, next_privileged = recorder.privileged_calls[update * (steps + 1) + steps]
        critic = Critic(inputs.shape[-1], [8], "tanh")
        critic.load_state_dict(call["critic_state"])
        with torch.no_grad():
            next_value = critic(torch.from_numpy(np.concatenate([next_rows, next_privileged], axis=1))).numpy()
        advantages = np.zeros((steps, count))
        last = np.zeros(count)
        for step in reversed(range(steps)):
            following = next_value if step == steps - 1 else values[step + 1]
            alive = 1.0 - expected_dones[step]
            last = expected_rewards[step] + 0.9 * following * alive - values[step] + 0.9 * 0.8 * alive * last
            advantages[step] = last
        np.testing.assert_allclose(batch["advantages"].numpy().reshape(steps, count), advantages, rtol=1e-4,
                                   atol=1e-4)
        np.testing.assert_allclose(batch["returns"].numpy().reshape(steps, count), advantages + values, rtol=1e-4,
                                   atol=1e-4)
    assert ended >= 2  # deals ended inside the rollouts: the ends cut the GAE
    # A deal that ends draws its next learner seat (and opponent); no other deal changes its learner seat.
    seats = np.array([seats_asked for seats_asked, _rows in recorder.side_calls])
    seats = np.delete(seats, [update * (steps + 1) + steps for update in range(updates)], axis=0)
    terminations = np.array([step["terminations"] for step in recorder.steps])
    changed = seats[1:] != seats[:-1]
    assert not (changed & ~terminations[:-1]).any() and changed.any()
    # The returns logged per update are the learner's rewards at the deals that ended in its rollout.
    logged = {}
    for line in (tmp_path / "recorded" / "scalars.csv").read_text().splitlines()[1:]:
        step, tag, value = line.split(",")[:3]
        logged[int(step), tag] = float(value)
    for update in range(updates):
        rewards = np.array([recorder.steps[update * steps + step]["rewards"][np.arange(count),
                                                                             seats[update * steps + step]]
                            for step in range(steps)])
        ends = terminations[update * steps:(update + 1) * steps]
        key = ((update + 1) * steps * count, "charts/episodic_return")
        if ends.any():
            assert logged[key] == pytest.approx(rewards[ends].mean(), rel=1e-5)
        else:
            assert key not in logged
        at = (update + 1) * steps * count
        assert 0 <= logged[at, "charts/rollout_seconds"] < 30
        assert logged[at, "charts/learning_rate"] == pytest.approx(calls[update]["lr"], rel=1e-5)
        assert logged[at, "charts/learner_steps"] == sum(int(call["batch"]["learner"].sum())
                                                        for call in calls[:update + 1])
        assert logged[at, "charts/pool_size"] == 1  # a snapshot every 10 updates
    for key in ("margin", "margin_ci_low", "margin_ci_high"):
        assert logged[96, f"eval/random/{key}"] == pytest.approx(run.eval_history[-1][key], rel=1e-5, abs=1e-6)
    assert np.any([np.any(step["rewards"]) for step in recorder.steps])
    assert calls[1]["actor"].keys() and all(torch.equal(calls[0]["actor"][key], calls[1]["actor"][key])
                                            for key in calls[0]["actor"])  # warm-up: the actor held back
    assert any(not torch.equal(calls[1]["actor"][key], calls[2]["actor"][key]) for key in calls[1]["actor"])


# ---------------------------------------------------------------------------------------------- config and resume
def test_opponent_weights_need_a_finite_sum():
    """Two weights of 1e308 pass as finite numbers but sum to infinity: every draw probability became NaN or 0 and
    the run died at its first deal with numpy's "probabilities do not sum to 1", after writing args.yaml."""
    from train.vector_ppo import args_from_mapping

    with pytest.raises(ValueError, match="'opponents' needs weights of zero or more with a positive finite sum"):
        args_from_mapping({"opponents": {"random": 1e308, "policy": 1e308}})
    assert args_from_mapping({"opponents": {"random": 1e300, "policy": 0.0}}).opponents["random"] == 1e300


TINY = dict(num_envs=4, num_steps=8, total_steps=64, num_minibatches=2, update_epochs=1, eval_every=2, eval_pairs=2,
            eval_opponent="random", hidden=[8], critic_hidden=[8], progress_bar=False, snapshot_every=1, pool_size=2,
            checkpoint_every=2, opponents={"self": 1.0, "pool": 1.0, "policy": 1.0, "heuristic": 1.0, "random": 1.0})


def test_resume_restores_the_networks_the_pool_and_the_logs_and_reproduces_itself(tmp_path, monkeypatch):
    """Two updates with a snapshot after each (pool of 2: snapshots 1 and 2 of 0, 1, 2), then resumed to three: the
    first resumed update starts from the checkpoint's actor and critic, the pool goes on (3 joins, 1 leaves, the
    newest is the actor after update 3), evaluation records and scalars written after the checkpoint go, and so
    does a temporary file a killed write left. A resumed run is
    seeded from (seed, update): two resumes of the same checkpoint train the same networks."""
    import json
    import shutil

    from train.vector_ppo import VectorPpo, args_from_mapping, read_checkpoint

    VectorPpo(args_from_mapping(dict(TINY, out_dir=str(tmp_path), run_name="first", anneal_lr=False,
                                     learning_rate=3e-3)), quiet=True).train()
    first = read_checkpoint(tmp_path / "first" / "checkpoint.pt")
    assert (first["update"], first["next_snapshot_id"], sorted(first["pool"])) == (2, 3, [1, 2])
    for name in ("again", "twice"):
        shutil.copytree(tmp_path / "first", tmp_path / name)
    with open(tmp_path / "again" / "eval.jsonl", "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"step": 80, "margin": 9.0}) + "\n")  # logged by a killed run after its checkpoint
    (tmp_path / "again" / ".checkpoint.pt.x1y2.tmp").write_bytes(b"half a checkpoint")  # a write the kill cut
    with open(tmp_path / "again" / "scalars.csv", "a", encoding="utf-8") as handle:
        handle.write("80,charts/SPS,1\n")
    _recorders, calls = _record(monkeypatch)
    VectorPpo.resume_run(tmp_path / "again", ["total_steps=96"], quiet=True).train()
    monkeypatch.undo()
    VectorPpo.resume_run(tmp_path / "twice", ["total_steps=96"], quiet=True).train()
    assert len(calls) == 1
    for key in ("actor", "critic"):
        state = calls[0]["actor" if key == "actor" else "critic_state"]
        assert all(torch.equal(state[name], first[key][name]) for name in first[key]), key
    again, twice = (read_checkpoint(tmp_path / name / "checkpoint.pt") for name in ("again", "twice"))
    assert (again["update"], again["global_step"], again["next_snapshot_id"]) == (3, 96, 4)
    assert sorted(again["pool"]) == [2, 3]
    assert all(torch.equal(again["pool"][2][name], first["pool"][2][name]) for name in first["pool"][2])
    assert all(torch.equal(again["pool"][3][name], again["actor"][name]) for name in again["actor"])
    assert again["learner_steps"] == first["learner_steps"] + int(calls[0]["batch"]["learner"].sum())
    steps = [json.loads(line)["step"] for line in (tmp_path / "again" / "eval.jsonl").read_text().splitlines()]
    assert steps == [64, 96]
    assert not list((tmp_path / "again").glob(".*.tmp"))
    rows = [line.split(",")[:2] for line in (tmp_path / "again" / "scalars.csv").read_text().splitlines()[1:]]
    assert [int(step) for step, tag in rows if tag == "charts/SPS"] == [32, 64, 96]
    assert calls[0]["lr"] == 3e-3  # anneal_lr false: the step size stays
    for key in ("actor", "critic"):
        assert again[key].keys() == twice[key].keys()
        assert all(torch.equal(again[key][name], twice[key][name]) for name in again[key]), key
    assert not all(torch.equal(first["actor"][name], again["actor"][name]) for name in first["actor"])
    with pytest.raises(ValueError, match="already holds a run: continue it with --resume"):
        VectorPpo(args_from_mapping(dict(TINY, out_dir=str(tmp_path), run_name="first")), quiet=True).train()


def test_a_checkpoint_that_does_not_fit_the_run_is_refused_naming_it(tmp_path):
    """A checkpoint whose networks do not fit the run's args.yaml (edited widths, a pool entry that is no state
    dict or has no snapshot number) is a ValueError naming the checkpoint (the CLI's exit 2), not torch's
    RuntimeError or TypeError, and the checkpoint is left as it was."""
    from train.vector_ppo import VectorPpo, args_from_mapping, read_checkpoint

    VectorPpo(args_from_mapping(dict(TINY, out_dir=str(tmp_path), run_name="first", total_steps=32)),
              quiet=True).train()
    run_dir = tmp_path / "first"
    first = read_checkpoint(run_dir / "checkpoint.pt")
    path = run_dir / "checkpoint.pt"
    text = (run_dir / "args.yaml").read_text()
    (run_dir / "args.yaml").write_text(text.replace("critic_hidden:\n- 8\n", "critic_hidden:\n- 9\n")
                                       .replace("critic_hidden: [8]", "critic_hidden: [9]"))
    assert VectorPpo.resume_run(run_dir, quiet=True).args.critic_hidden == [9]
    message = f"checkpoint {str(path)!r} does not fit the networks of the run's args.yaml"
    saved = path.read_bytes()
    with pytest.raises(ValueError, match=re.escape(message)):
        VectorPpo.resume_run(run_dir, ["total_steps=96"], quiet=True).train()
    assert path.read_bytes() == saved
    (run_dir / "args.yaml").write_text(text)
    for pool in ({0: 5}, {"snapshot": first["actor"]}):
        torch.save(dict(first, pool=pool), path)
        with pytest.raises(ValueError, match=re.escape(message)):
            VectorPpo.resume_run(run_dir, ["total_steps=96"], quiet=True).train()


@pytest.mark.parametrize("leftover", ["checkpoint.pt", "model.zip", "scalars.csv", "eval.jsonl", "tb"])
def test_a_new_run_refuses_a_folder_with_files_of_an_earlier_run_but_no_args(tmp_path, leftover):
    """A folder whose args.yaml is gone but that still holds a run's files: a new run there deleted its model and
    logs. It is refused, naming them, and nothing is written or deleted (as ``sixtysix train`` refuses them)."""
    from train.vector_ppo import VectorPpo, args_from_mapping

    run_dir = tmp_path / "old"
    run_dir.mkdir()
    if "." in leftover:
        (run_dir / leftover).write_text("old")
    else:
        (run_dir / leftover).mkdir()
    with pytest.raises(ValueError, match=rf"holds {re.escape(leftover)} of an earlier run but no args.yaml: move "
                                         r"them away"):
        VectorPpo(args_from_mapping(dict(TINY, out_dir=str(tmp_path), run_name="old")), quiet=True).train()
    assert sorted(entry.name for entry in run_dir.iterdir()) == [leftover]


def test_resuming_with_a_total_below_what_the_run_has_trained_is_refused_and_changes_nothing(tmp_path):
    """A resume whose total_steps is below the steps the checkpoint has trained did nothing and wrote the smaller
    total into args.yaml; it is refused, saying how far the run got, and the run is as it was. The same total again
    trains nothing more and leaves the run as it was (as ``sixtysix train --resume`` of a finished run does)."""
    from train.vector_ppo import VectorPpo, args_from_mapping

    VectorPpo(args_from_mapping(dict(TINY, out_dir=str(tmp_path), run_name="done", total_steps=64)),
              quiet=True).train()
    run_dir = tmp_path / "done"
    before = {name: (run_dir / name).read_bytes() for name in ("args.yaml", "checkpoint.pt", "scalars.csv")}
    with pytest.raises(ValueError, match=r"has already trained 64 steps \(2 updates\), more than total_steps 32: "
                                         r"resume it with a total at least that large"):
        VectorPpo.resume_run(run_dir, ["total_steps=32"], quiet=True).train()
    assert {name: (run_dir / name).read_bytes() for name in before} == before
    VectorPpo.resume_run(run_dir, quiet=True).train()
    assert {name: (run_dir / name).read_bytes() for name in before} == before


@pytest.mark.parametrize("values, message", [
    ({"target_kl": 0.0}, "'target_kl' must be positive or null, got 0.0"),
    ({"target_kl": -0.5}, "'target_kl' must be positive or null"),
    ({"hidden": [8, 0]}, "'hidden' must list positive layer widths, got [8, 0]"),
    ({"critic_hidden": [-2]}, "'critic_hidden' must list positive layer widths"),
    ({"opponents": {"self": -0.5, "random": 1.0}}, "'opponents' needs weights of zero or more"),
    ({"gamma": 1.01}, "'gamma' must lie in [0, 1], got 1.01"),
    ({"ent_coef": -0.01}, "'ent_coef' must be zero or more"),
    ({"learning_rate": 0.0}, "'learning_rate' must be positive"),
    ({"num_envs": 6, "num_steps": 4, "num_minibatches": 16}, "num_envs * num_steps = 24 rows"),
])
def test_config_edges_are_refused_naming_the_key(values, message):
    from train.vector_ppo import args_from_mapping

    with pytest.raises(ValueError) as error:
        args_from_mapping(values)
    assert message in str(error.value)


def test_config_edges_that_are_accepted():
    """The boundaries themselves are valid: a null target_kl, layers one wide, a zero opponent weight beside a
    positive one, gamma and lambda of 0 and 1, minibatches of one row; no mapping at all is the defaults."""
    from train.vector_ppo import args_from_mapping

    args = args_from_mapping({"target_kl": None, "hidden": [1], "critic_hidden": [1, 1], "gamma": 0.0,
                              "gae_lambda": 1.0, "ent_coef": 0.0, "opponents": {"self": 0.0, "random": 1.0},
                              "num_envs": 3, "num_steps": 2, "num_minibatches": 6})
    assert (args.target_kl, args.hidden, args.opponents, args.num_minibatches) == (None, [1], {"self": 0.0,
                                                                                            "random": 1.0}, 6)
    assert args_from_mapping(None) == Args()


def test_config_that_is_no_mapping_and_bad_override_yaml_are_named(tmp_path):
    from train.vector_ppo import args_from_mapping, load_args

    with pytest.raises(ValueError, match=r"run 'x' must be a mapping of argument names to values, got \[1, 2\]"):
        args_from_mapping([1, 2], "run 'x'")
    path = tmp_path / "list.yaml"
    path.write_text("- num_envs: 8\n")
    with pytest.raises(ValueError, match=r"list\.yaml.* must hold a mapping of argument names to values"):
        load_args(path)
    with pytest.raises(ValueError, match=r"override 'hidden': value '\[8' is not valid YAML"):
        load_args(None, ["hidden=[8"])
    assert load_args(None, ["num_envs=8", "num_minibatches=4"]).num_envs == 8


def test_an_init_suit_file_that_is_no_suit_network_is_named_by_the_key(tmp_path):
    from train.vector_ppo import args_from_mapping

    path = tmp_path / "plain.npz"
    np.savez(path, weights=np.zeros(3))
    with pytest.raises(ValueError, match=r"^config key 'init_suit': .*plain\.npz.* is not a suit-network weights"):
        args_from_mapping({"init_suit": str(path)})


@pytest.mark.parametrize("key", ["actor", "critic", "optimizer", "pool"])
def test_a_checkpoint_entry_that_is_no_state_dict_is_named(tmp_path, key):
    from train.vector_ppo import read_checkpoint

    content = {"actor": {}, "critic": {}, "optimizer": {}, "pool": {}, "next_snapshot_id": 0, "update": 1,
               "global_step": 8, "learner_steps": 4}
    path = tmp_path / "checkpoint.pt"
    torch.save(content, path)
    assert read_checkpoint(path)["global_step"] == 8
    torch.save(dict(content, **{key: [1, 2]}), path)
    with pytest.raises(ValueError, match=f"is not a train-vector checkpoint \\(checkpoint {key} must be a state dict"):
        read_checkpoint(path)


def test_an_unreadable_checkpoint_gives_the_reason_in_words(tmp_path):
    """The reason is the error's class and its words, on one line, not only its class name."""
    from train.vector_ppo import read_checkpoint

    path = tmp_path / "checkpoint.pt"
    path.write_bytes(b"PK\x03\x04 a truncated zip")
    with pytest.raises(ValueError, match=r"cannot be read \(RuntimeError: [A-Za-z]+ [^)]*\)") as error:
        read_checkpoint(path)
    assert "\n" not in str(error.value)


def test_resuming_a_folder_without_args_yaml_is_refused_naming_it(tmp_path):
    from train.vector_ppo import VectorPpo

    with pytest.raises(ValueError, match=f"{re.escape(str(tmp_path))} is not a vector PPO run directory"):
        VectorPpo.resume_run(tmp_path, quiet=True)
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------------------------------------- start and save
def _model_policy():
    from stable_baselines3.common.save_util import load_from_zip_file

    _data, params, _variables = load_from_zip_file(MODEL, device="cpu", load_data=False)
    return params["policy"]


def test_anchor_is_the_scaled_start_model_and_stays_there(monkeypatch, tmp_path, capsys):
    """From models/ppo_standard.zip with ``init_logit_scale`` 2 and an anchor: at the first update the anchor's log
    probabilities (learner rows, legal actions) are the actor's own, whose sampled actions' log probabilities the
    batch holds; at the second they are still the start's (the actor moved, the anchor did not). The run sets
    torch's threads to ``torch_threads`` and shows its progress bar."""
    from sixtysix_env.actions import NUM_ACTIONS
    from sixtysix_env.observation import OBSERVATION_SIZE
    from train.vector_ppo import _networks

    threads = torch.get_num_threads()
    try:
        _learner, _recorder, calls = _run_recorded(
            monkeypatch, tmp_path, quiet=False, init_model=str(MODEL), init_logit_scale=2.0, anchor_coef=0.5,
            hidden=[256, 256], critic_hidden=[256, 256], total_steps=64, learning_rate=1e-2, progress_bar=True,
            torch_threads=threads + 1)
        assert torch.get_num_threads() == threads + 1
    finally:
        torch.set_num_threads(threads)
    assert "vector ppo" in capsys.readouterr().err  # the progress bar (progress_bar, not quiet)
    from agents.ppo import load_actor
    from train.vector_ppo import read_checkpoint

    model = _model_policy()
    assert torch.equal(calls[0]["critic_state"]["value_head.weight"], model["value_net.weight"])  # same widths
    _network, metadata, _rules = load_actor(tmp_path / "recorded" / "model.zip")
    checkpoint = read_checkpoint(tmp_path / "recorded" / "checkpoint.pt")
    assert metadata["learner_decisions"] == checkpoint["learner_steps"] > 0
    assert metadata["training"].endswith(f"64 env steps from {MODEL}")
    assert len(calls) == 2
    Actor, _Critic, _SuitActor = _networks()
    start = Actor(OBSERVATION_SIZE, NUM_ACTIONS, [256, 256], "tanh")
    start.load_state_dict(calls[0]["actor"])
    torch.testing.assert_close(start.action_net.weight, 2.0 * model["action_net.weight"])
    for index, call in enumerate(calls):
        batch = call["batch"]
        learner = batch["learner"]
        anchor = batch["anchor_logprobs"][learner]
        with torch.no_grad():
            expected = torch.log_softmax(masked_logits(start(call["inputs"][learner][:, :OBSERVATION_SIZE]),
                                                       batch["masks"][learner]), dim=1)
        torch.testing.assert_close(anchor, expected, rtol=1e-4, atol=1e-4)
        taken = anchor.gather(1, batch["actions"][learner][:, None])[:, 0]
        if index == 0:
            torch.testing.assert_close(taken, batch["logprobs"][learner], rtol=1e-4, atol=1e-4)
        else:
            assert not torch.allclose(taken, batch["logprobs"][learner], atol=1e-3)


def test_saved_zip_holds_the_actor_the_start_models_value_network_and_the_run(tmp_path):
    """``save_maskable_ppo``: the zip's actor is the trained one, its value network ``init_model``'s (the privileged
    critic stays in checkpoint.pt), its metadata names the run and its seed."""
    from stable_baselines3.common.save_util import load_from_zip_file

    from agents.ppo import load_actor
    from sixtysix_env import Rules
    from sixtysix_env.actions import NUM_ACTIONS
    from sixtysix_env.observation import OBSERVATION_SIZE
    from train.vector_ppo import _networks, save_maskable_ppo, sb3_actor_state

    Actor, _Critic, _SuitActor = _networks()
    torch.manual_seed(3)
    actor = Actor(OBSERVATION_SIZE, NUM_ACTIONS, [256, 256], "tanh")
    model = _model_policy()
    path = tmp_path / "model.zip"
    save_maskable_ppo(actor, path, Rules(), Args(run_name="saved", seed=7), model, trained_steps=5)
    _data, params, _variables = load_from_zip_file(path, device="cpu", load_data=False)
    saved = params["policy"]
    for key, value in sb3_actor_state(actor).items():
        assert torch.equal(saved[key], value), key
    value_keys = [key for key in model if key.startswith(("mlp_extractor.value_net.", "value_net."))]
    assert value_keys and all(torch.equal(saved[key], model[key]) for key in value_keys)
    _network, metadata, _rules = load_actor(path)
    assert (metadata["run"], metadata["seed"], metadata["trained_steps"]) == ("saved", 7, 5)
    # ... and says its value network is not the run's critic, which load_critic then refuses to read as one
    assert metadata["value_net_trained"] is False
    from agents.ppo import load_critic

    with pytest.raises(ValueError, match="its value network was not trained with its policy"):
        load_critic(path)


def test_a_critic_of_other_widths_keeps_its_own_start():
    """``init_model``'s value network goes into the critic only when the widths agree; otherwise (and for the
    anchor, which has no critic) the critic is left as it was and only the actor is loaded."""
    from sixtysix_env.observation import OBSERVATION_SIZE
    from sixtysix_env.vector import PRIVILEGED_SIZE
    from train.vector_ppo import _networks, load_initial_weights

    Actor, Critic, _SuitActor = _networks()
    actor = Actor(OBSERVATION_SIZE, 37, [256, 256], "tanh")
    critic = Critic(OBSERVATION_SIZE + PRIVILEGED_SIZE, [16], "tanh")
    before = {key: value.clone() for key, value in critic.state_dict().items()}
    model = _model_policy()
    load_initial_weights(actor, critic, model, OBSERVATION_SIZE, same_critic_shape=False)
    assert all(torch.equal(value, before[key]) for key, value in critic.state_dict().items())
    assert torch.equal(actor.action_net.bias, model["action_net.bias"])
    load_initial_weights(actor, None, model, OBSERVATION_SIZE, same_critic_shape=False, logit_scale=3.0)
    torch.testing.assert_close(actor.action_net.bias, 3.0 * model["action_net.bias"])


def test_args_yaml_keeps_the_start_files_absolute(tmp_path, monkeypatch):
    from train.vector_ppo import _with_absolute_paths

    monkeypatch.chdir(tmp_path)
    args = _with_absolute_paths(Args(init_suit="a.npz+sub/b.npz"))
    assert args.init_suit == f"{tmp_path / 'a.npz'}+{tmp_path / 'sub' / 'b.npz'}" and args.init_model is None
    assert _with_absolute_paths(Args(init_model="m.zip")).init_model == str(tmp_path / "m.zip")


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
def test_device_cuda_without_cuda_is_refused_before_the_run_directory_is_made(tmp_path):
    from train.vector_ppo import VectorPpo, args_from_mapping

    args = args_from_mapping(dict(TINY, out_dir=str(tmp_path), run_name="cuda", device="cuda"))
    with pytest.raises(ValueError, match="config key 'device' is 'cuda', but torch finds no CUDA device"):
        VectorPpo(args, quiet=True).train()
    assert not (tmp_path / "cuda").exists()


def test_each_opponent_kind_plays_by_its_own_player_and_its_returns_are_logged_under_it(monkeypatch, tmp_path):
    """With one kind of positive weight (the others at 0), every opponent move comes from that kind's player:
    ``random_legal``, the core's playout policy, the compiled heuristic, or a snapshot's network (``self``); the
    learner's returns are logged under that kind."""
    import sixtysix_env.core.heuristic as heuristic
    import sixtysix_env.core.policy as policy
    import train.vector_ppo as vector_ppo

    used: list[str] = []
    for name, module, attribute in (("random", vector_ppo, "random_legal"), ("policy", policy, "policy_actions"),
                                    ("heuristic", heuristic, "_heuristic_actions"),
                                    ("self", vector_ppo, "sample_masked")):
        real = getattr(module, attribute)
        monkeypatch.setattr(module, attribute, lambda *args, real=real, name=name: (used.append(name),
                                                                                    real(*args))[1])
    for kind in ("random", "policy", "heuristic", "self"):
        used.clear()
        weights = {other: 0.0 for other in ("random", "policy", "heuristic", "self")}
        weights[kind] = 1.0
        args = vector_ppo.args_from_mapping(dict(TINY, out_dir=str(tmp_path), run_name=kind, total_steps=64,
                                                 num_steps=16, eval_every=0, opponents=weights))
        vector_ppo.VectorPpo(args, quiet=True).train()
        assert used and set(used) == {kind}, kind
        tags = {line.split(",")[1] for line in (tmp_path / kind / "scalars.csv").read_text().splitlines()[1:]}
        assert {tag for tag in tags if tag.startswith("opponents/")} == {f"opponents/{kind}/return"}
        assert f"charts/return_vs_{kind}" in tags


def test_a_run_killed_before_its_first_checkpoint_starts_over_and_runs_at_least_one_update(tmp_path):
    """Resuming a run directory with args.yaml but no checkpoint (nor model) starts the run over: the killed
    run's scalars, evaluations and TensorBoard events go. A total_steps below one rollout still runs one update."""
    from train.vector_ppo import VectorPpo, _args_yaml, args_from_mapping, read_checkpoint

    run_dir = tmp_path / "killed"
    (run_dir / "tb").mkdir(parents=True)
    args = args_from_mapping(dict(TINY, out_dir=str(tmp_path), run_name="killed", total_steps=8))
    (run_dir / "args.yaml").write_text(_args_yaml(args))
    (run_dir / "tb" / "events.old").write_text("stale")
    (run_dir / "eval.jsonl").write_text('{"step": 999}\n')
    (run_dir / "scalars.csv").write_text("step,tag,value\n999,charts/SPS,1\n")
    VectorPpo.resume_run(run_dir, quiet=True).train()
    assert not (run_dir / "tb" / "events.old").exists()
    assert [json.loads(line)["step"] for line in (run_dir / "eval.jsonl").read_text().splitlines()] == [32]
    assert "999" not in (run_dir / "scalars.csv").read_text()
    assert read_checkpoint(run_dir / "checkpoint.pt")["update"] == 1


def test_networks_start_as_sb3_initialises_them():
    """Orthogonal weights (gain sqrt 2 in the hidden layers, 0.01 for the logits, 1 for the value) and zero
    biases, as sb3's ``MaskableActorCriticPolicy``."""
    from train.vector_ppo import _networks

    Actor, Critic, _SuitActor = _networks()
    torch.manual_seed(0)
    actor, critic = Actor(20, 6, [12], "tanh"), Critic(9, [7, 5], "relu")
    for layer, gain in ((actor.policy_net[0], 2 ** 0.5), (actor.action_net, 0.01), (critic.value_net[0], 2 ** 0.5),
                        (critic.value_net[2], 2 ** 0.5), (critic.value_head, 1.0)):
        weight = layer.weight.detach()
        rows, columns = weight.shape
        gram = weight @ weight.T if rows <= columns else weight.T @ weight
        torch.testing.assert_close(gram, gain ** 2 * torch.eye(min(rows, columns)), rtol=1e-4, atol=1e-5)
        assert not layer.bias.detach().any()
    with torch.no_grad():  # the output layers read the last hidden width (the layers narrow here)
        assert actor(torch.zeros(3, 20)).shape == (3, 6) and critic(torch.zeros(3, 9)).shape == (3,)
        assert Actor(20, 6, [12, 4], "tanh")(torch.zeros(2, 20)).shape == (2, 6)


# ---------------------------------------------------------------------------------------------- command line
def test_command_line_describes_trains_resumes_and_names_what_is_missing(tmp_path, capsys):
    """``main``: ``--describe`` lists every argument with its default and docstring; no config is exit 2 naming
    the choices; a config trains and prints the agent spec that plays the model; ``--resume`` continues it where
    it now is (moved to another folder)."""
    import dataclasses

    import yaml

    from train.config import field_docs
    from train.vector_ppo import main, read_checkpoint

    assert main(["--describe"]) == 0
    lines = capsys.readouterr().out.splitlines()
    docs = field_docs(Args)
    assert len(lines) == 2 * len(dataclasses.fields(Args))
    for index, item in enumerate(dataclasses.fields(Args)):
        assert lines[2 * index] == f"{item.name}: {getattr(Args(), item.name)!r}"
        assert lines[2 * index + 1] == f"    {docs[item.name]}"
    assert main([]) == 2
    assert "give --config FILE, --resume RUN_DIR or --describe" in capsys.readouterr().err
    config = tmp_path / "run.yaml"
    config.write_text(yaml.safe_dump(dict(TINY, out_dir=str(tmp_path), run_name="cli", total_steps=32,
                                          progress_bar=True)))
    assert main(["--config", str(config), "--quiet"]) == 0
    captured = capsys.readouterr()
    model = tmp_path / "cli" / "model.zip"
    assert f'model: {model} (play it: sixtysix match "ppo:path={model},phase2=policy" heuristic)' in captured.out
    assert "env steps/s: " in captured.out and "vector ppo" not in captured.err  # --quiet: no progress bar
    (tmp_path / "moved").mkdir()
    (tmp_path / "cli").rename(tmp_path / "moved" / "cli")  # args.yaml still names the old out_dir
    assert main(["--resume", str(tmp_path / "moved" / "cli"), "--set", "total_steps=64", "--quiet"]) == 0
    assert "vector ppo" not in capsys.readouterr().err
    assert read_checkpoint(tmp_path / "moved" / "cli" / "checkpoint.pt")["update"] == 2
    assert not (tmp_path / "cli").exists()


def test_module_run_as_a_script_exits_2_naming_a_bad_config(tmp_path):
    import subprocess
    import sys

    config = tmp_path / "bad.yaml"
    config.write_text("pool_size: 0\n")
    result = subprocess.run([sys.executable, "-m", "train.vector_ppo", "--config", str(config)], capture_output=True,
                            text=True, cwd=Path(__file__).resolve().parent.parent, timeout=120)
    assert result.returncode == 2
    assert result.stderr.strip() == "train-vector: error: config key 'pool_size' must be positive, got 0"


def test_a_suit_actor_plays_as_one_network_or_as_the_ensemble_of_its_members():
    """``playing_network`` of a suit actor (what the evaluation plays): a single member's SuitNetwork, or the
    ensemble of the members, whose logits are the mean of theirs, as the torch actor computes them."""
    from agents.suit import SuitEnsemble, SuitNetwork
    from sixtysix_env.observation import OBSERVATION_SIZE
    from train.suit_network import build_suit_network
    from train.vector_ppo import _networks, playing_network

    _Actor, _Critic, SuitActor = _networks()
    weights = []
    for rounds in (1, 2):
        torch.manual_seed(rounds)
        network = build_suit_network(width=8, context=16, rounds=rounds)
        weights.append({name: value.detach().numpy() for name, value in network.state_dict().items()})
    observations = np.random.default_rng(1).integers(0, 2, (5, OBSERVATION_SIZE)).astype(np.float32)
    for members in (weights[:1], weights):
        actor = SuitActor(members)
        played = playing_network(actor, "tanh")
        assert isinstance(played, SuitNetwork if len(members) == 1 else SuitEnsemble)
        with torch.no_grad():
            expected = actor(torch.from_numpy(observations)).numpy()
        np.testing.assert_allclose(played.logits(observations), expected, rtol=1e-4, atol=1e-4)
