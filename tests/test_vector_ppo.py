"""PPO on the batched environment (train/vector_ppo.py): the privileged features and what the actor sees, the save
format (a MaskablePPO zip that ``ppo:path=`` plays), the update, the opponents, config errors, resuming."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

import torch  # noqa: E402

import sixtysix_env  # noqa: E402
from sixtysix_env import Game, InformationSet, Rules  # noqa: E402
from sixtysix_env.cards import parse_card  # noqa: E402
from sixtysix_env.core import state_from_game  # noqa: E402
from sixtysix_env.core.observation import encode_state  # noqa: E402
from sixtysix_env.observation import OBSERVATION_SIZE, ObservationEncoder  # noqa: E402
from sixtysix_env.vector import PRIVILEGED_SIZE, privileged_features  # noqa: E402
from train.vector_ppo import (  # noqa: E402
    Args, VectorPpo, args_from_mapping, load_args, load_initial_weights, ppo_update, random_legal, read_checkpoint,
    sb3_actor_state,
)

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / "models" / "ppo_standard.zip"

DECK = [  # R4 order: forehand 1-3, dealer 4-6, forehand 7-9, dealer 10-12, trump card 13, talon 14-24
    "AH", "TH", "KH", "9C", "JC", "QC", "QH", "AC", "9D", "TC", "KC", "JD", "9H",
    "QD", "KD", "TD", "AD", "9S", "JS", "QS", "KS", "TS", "AS", "JH",
]


def card_mask(names) -> np.ndarray:
    row = np.zeros(24, dtype=np.float32)
    for name in names:
        row[parse_card(name)] = 1.0
    return row


# ---------------------------------------------------------------------------------------------- privileged features
def test_r4_privileged_features_are_the_hidden_cards_of_an_explicit_deck():
    """R4: with dealer 0, forehand (player 1) holds cards 1-3 and 7-9, the dealer 4-6 and 10-12; cards 14-24 are
    the face-down talon, top first. Forehand's privileged features are the dealer's hand and that talon in its
    order; the dealer's are forehand's hand and the same talon."""
    game = Game.deal(Rules(), deck=DECK, dealer=0)
    states = np.stack([state_from_game(game)] * 2)
    features = privileged_features(states, np.array([1, 0]))
    assert features.shape == (2, PRIVILEGED_SIZE)
    dealer_hand = card_mask(DECK[3:6] + DECK[9:12])
    forehand_hand = card_mask(DECK[0:3] + DECK[6:9])
    np.testing.assert_array_equal(features[0, :24], dealer_hand)
    np.testing.assert_array_equal(features[1, :24], forehand_hand)
    talon = DECK[13:]
    for row in features:
        np.testing.assert_array_equal(row[24:48], card_mask(talon))
        expected_order = np.zeros(24, dtype=np.float32)
        for position, name in enumerate(talon):
            expected_order[parse_card(name)] = (position + 1) / 11
        np.testing.assert_allclose(row[48:], expected_order, rtol=1e-6)


def test_r4_r6_privileged_features_follow_the_deal_as_cards_are_drawn():
    """R6: after a trick both players draw from the talon's top; the features then show the remaining face-down
    cards, renumbered from the new top, and the opponent's hand as the engine holds it."""
    game = Game.deal(Rules(), deck=DECK, dealer=0)
    rng = np.random.default_rng(5)
    for _ in range(12):
        if game.is_over:
            break
        game.apply(int(rng.choice(game.legal_actions())))
        for seat in (0, 1):
            row = privileged_features(state_from_game(game)[None, :], np.array([seat]))[0]
            opponent = [card for card in range(24) if game.hands[1 - seat] >> card & 1]
            np.testing.assert_array_equal(np.flatnonzero(row[:24]), opponent)
            face_down = [card for card in game.stock[game.stock_pos:]]
            np.testing.assert_array_equal(np.flatnonzero(row[24:48]), sorted(face_down))
            for position, card in enumerate(face_down):
                assert row[48 + card] == pytest.approx((position + 1) / 11)


def test_r4_the_actors_observation_does_not_change_with_the_hidden_cards():
    """Swapping a card of the dealer's hand (R4 position 4) with a talon card (position 15) changes forehand's
    privileged features but not one number of his observation row: the actor cannot see them."""
    swapped = list(DECK)
    swapped[3], swapped[14] = swapped[14], swapped[3]
    states = [state_from_game(Game.deal(Rules(), deck=deck, dealer=0)) for deck in (DECK, swapped)]
    rows = [encode_state(state, 1) for state in states]
    np.testing.assert_array_equal(rows[0], rows[1])
    features = privileged_features(np.stack(states), np.array([1, 1]))
    assert not np.array_equal(features[0], features[1])


def test_vector_env_rows_are_the_information_sets_and_privileged_rows_the_rest():
    """Across many deals of the self-play vector env: the observation row of the seat to move equals the encoding
    of his information set (no hidden card) and ``seat_observations`` of that seat; the privileged rows match
    the opponent's hand and the talon of the same deal replayed from its deck (R4)."""
    envs = sixtysix_env.vector_env(16, self_play=True, autoreset_mode="SameStep")
    observations, infos = envs.reset(seed=3)
    rules = envs.rules
    encoder = ObservationEncoder(rules)
    games = [Game.deal(rules, deck=[int(c) for c in envs.deal_cards[i, :rules.deck]], dealer=int(envs.dealers[i]))
             for i in range(16)]
    rng = np.random.default_rng(3)
    for _ in range(40):
        seats = infos["seat"]
        seat_rows, seat_masks = envs.seat_observations(seats)
        np.testing.assert_array_equal(seat_rows, observations)
        np.testing.assert_array_equal(seat_masks, infos["action_mask"])
        privileged = envs.privileged_observations()
        for index, game in enumerate(games):
            seat = int(seats[index])
            assert game.to_move == seat
            expected = encoder.encode_infoset(InformationSet(game, seat))
            np.testing.assert_array_equal(observations[index], expected)
            hidden_hand = [card for card in range(24) if game.hands[1 - seat] >> card & 1]
            assert list(np.flatnonzero(privileged[index, :24])) == hidden_hand
        actions = random_legal(infos["action_mask"], rng)
        for index, game in enumerate(games):
            game.apply(int(actions[index]))
        observations, _rewards, terminations, _truncations, infos = envs.step(actions)
        for index in np.flatnonzero(terminations):
            assert games[index].is_over
            games[index] = Game.deal(rules, deck=[int(c) for c in envs.deal_cards[index, :rules.deck]],
                                     dealer=int(envs.dealers[index]))


def test_playout_policy_opponent_and_random_opponent_play_legal_moves():
    """The core's playout policy on a batch of rows (the ``policy`` opponent) and ``random_legal`` choose legal
    actions in every row, over many positions of many deals."""
    from agents.pimc import policy_weights
    from sixtysix_env.core.policy import policy_actions

    envs = sixtysix_env.vector_env(32, self_play=True, autoreset_mode="SameStep")
    _observations, infos = envs.reset(seed=11)
    rng = np.random.default_rng(11)
    weights = policy_weights()
    for step in range(60):
        masks = infos["action_mask"]
        actions = np.full(32, -1, dtype=np.int64)
        if step % 2:
            policy_actions(envs.core_states(), np.arange(32, dtype=np.int64), weights, actions)
        else:
            actions = random_legal(masks, rng)
        assert masks[np.arange(32), actions].all()
        _observations, _rewards, _terminations, _truncations, infos = envs.step(actions)


def test_heuristic_opponent_on_a_batch_chooses_what_it_chooses_alone():
    """The compiled heuristic on a batch of rows (the ``heuristic`` opponent) chooses a legal action in every row,
    and in each row the same action as one call on that row's state under the same random stream."""
    from agents.rule_based import HeuristicAgent
    from agents.solver import core_table
    from sixtysix_env.core.heuristic import heuristic_action, heuristic_actions
    from sixtysix_env.core.search import seed_kernels

    envs = sixtysix_env.vector_env(16, self_play=True, autoreset_mode="SameStep")
    _observations, infos = envs.reset(seed=12)
    params = HeuristicAgent().core_params()
    table = core_table()
    for step in range(60):
        masks = infos["action_mask"]
        states = envs.core_states()
        actions = np.full(16, -1, dtype=np.int64)
        seed_kernels(step)
        heuristic_actions(states, np.arange(16, dtype=np.int64), params, table.entries, table.nodes, actions)
        assert masks[np.arange(16), actions].all()
        seed_kernels(step)
        alone = [int(heuristic_action(states[row].copy(), params, table.entries, table.nodes)) for row in range(16)]
        assert actions.tolist() == alone
        _observations, _rewards, _terminations, _truncations, infos = envs.step(actions)


# ---------------------------------------------------------------------------------------------- networks and update
def _networks(args: Args):
    from train.vector_ppo import _networks as classes

    Actor, Critic, _SuitActor = classes()
    return (Actor(OBSERVATION_SIZE, 37, args.hidden, args.activation),
            Critic(OBSERVATION_SIZE + PRIVILEGED_SIZE, args.critic_hidden, args.activation))


def test_initial_weights_reproduce_the_model_actor_and_value():
    """From models/ppo_standard.zip: the actor's logits are the sb3 policy's, and the critic (privileged columns
    at zero weight) starts as the model's own value network, whatever the hidden cards."""
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.save_util import load_from_zip_file

    args = Args()
    actor, critic = _networks(args)
    _data, params, _variables = load_from_zip_file(MODEL, device="cpu", load_data=False)
    load_initial_weights(actor, critic, params["policy"], OBSERVATION_SIZE, same_critic_shape=True)
    model = MaskablePPO.load(MODEL, device="cpu")
    observations = torch.rand(8, OBSERVATION_SIZE)
    privileged = torch.randint(0, 2, (8, PRIVILEGED_SIZE)).float()
    with torch.no_grad():
        expected_logits = model.policy.get_distribution(observations).distribution.logits
        logits = torch.log_softmax(actor(observations), dim=1)
        expected_values = model.policy.predict_values(observations).squeeze(-1)
        values = critic(torch.cat([observations, privileged], dim=1))
    torch.testing.assert_close(logits, expected_logits, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(values, expected_values, rtol=1e-5, atol=1e-5)
    assert set(sb3_actor_state(actor)) <= set(model.policy.state_dict())


def test_loss_decreases_on_a_fixed_batch():
    """Repeated PPO updates on one fixed rollout lower its value loss and its clipped surrogate."""
    torch.manual_seed(0)
    args = Args(hidden=[32], critic_hidden=[32], num_minibatches=1, update_epochs=1, learning_rate=3e-3,
                target_kl=None, ent_coef=0.0)
    actor, critic = _networks(args)
    optimizer = torch.optim.Adam(list(actor.parameters()) + list(critic.parameters()), lr=args.learning_rate)
    size = 256
    inputs = torch.rand(size, OBSERVATION_SIZE + PRIVILEGED_SIZE)
    masks = torch.rand(size, 37) < 0.3
    masks[:, 0] = True
    actions = torch.stack([torch.multinomial(row.float(), 1)[0] for row in masks])
    with torch.no_grad():
        logits = actor(inputs[:, :OBSERVATION_SIZE]).masked_fill(~masks, -1e8)
        logprobs = torch.distributions.Categorical(logits=logits).log_prob(actions)
        values = critic(inputs)
    batch = {"masks": masks, "learner": torch.rand(size) < 0.6, "actions": actions, "logprobs": logprobs,
             "advantages": torch.randn(size), "returns": torch.randint(-3, 4, (size,)).float(), "values": values}
    first = ppo_update(actor, critic, optimizer, inputs, batch, args, OBSERVATION_SIZE)
    for _ in range(30):
        last = ppo_update(actor, critic, optimizer, inputs, batch, args, OBSERVATION_SIZE)
    assert last["value_loss"] < 0.8 * first["value_loss"]
    assert last["policy_loss"] < first["policy_loss"] - 0.05


def test_initial_logit_scale_multiplies_the_models_logits():
    """``init_logit_scale`` sharpens a q fit's softmax: the actor's logits are the model's times the scale."""
    from stable_baselines3.common.save_util import load_from_zip_file

    args = Args()
    _data, params, _variables = load_from_zip_file(MODEL, device="cpu", load_data=False)
    plain, critic = _networks(args)
    scaled, _critic = _networks(args)
    load_initial_weights(plain, critic, params["policy"], OBSERVATION_SIZE, same_critic_shape=True)
    load_initial_weights(scaled, critic, params["policy"], OBSERVATION_SIZE, same_critic_shape=True,
                         logit_scale=4.0)
    observations = torch.rand(8, OBSERVATION_SIZE)
    with torch.no_grad():
        torch.testing.assert_close(scaled(observations), 4.0 * plain(observations), rtol=1e-5, atol=1e-5)


def test_critic_warmup_update_trains_the_critic_only():
    """During the critic's warm-up (``train_actor=False``) the actor's weights stay exactly as they were while
    the value loss falls; the same update with the actor trained moves it."""
    torch.manual_seed(0)
    args = Args(hidden=[32], critic_hidden=[32], num_minibatches=1, update_epochs=1, learning_rate=3e-3,
                target_kl=None)
    actor, critic = _networks(args)
    optimizer = torch.optim.Adam(list(actor.parameters()) + list(critic.parameters()), lr=args.learning_rate)
    size = 128
    inputs = torch.rand(size, OBSERVATION_SIZE + PRIVILEGED_SIZE)
    masks = torch.ones(size, 37, dtype=torch.bool)
    actions = torch.randint(0, 37, (size,))
    with torch.no_grad():
        logprobs = torch.distributions.Categorical(logits=actor(inputs[:, :OBSERVATION_SIZE])).log_prob(actions)
    batch = {"masks": masks, "learner": torch.ones(size, dtype=torch.bool), "actions": actions,
             "logprobs": logprobs, "advantages": torch.randn(size), "returns": torch.randint(-3, 4, (size,)).float(),
             "values": torch.zeros(size)}
    before = {name: value.clone() for name, value in actor.state_dict().items()}
    first = ppo_update(actor, critic, optimizer, inputs, batch, args, OBSERVATION_SIZE, train_actor=False)
    for _ in range(20):
        last = ppo_update(actor, critic, optimizer, inputs, batch, args, OBSERVATION_SIZE, train_actor=False)
    for name, value in actor.state_dict().items():
        assert torch.equal(value, before[name]), name
    assert last["value_loss"] < 0.8 * first["value_loss"]
    ppo_update(actor, critic, optimizer, inputs, batch, args, OBSERVATION_SIZE, train_actor=True)
    assert any(not torch.equal(value, before[name]) for name, value in actor.state_dict().items())


# ---------------------------------------------------------------------------------------------- config errors
@pytest.mark.parametrize("values, message", [
    ({"num_envz": 4}, "unknown config key 'num_envz'"),
    ({"num_envs": 2.5}, "'num_envs' must be an integer"),
    ({"num_envs": 0}, "'num_envs' must be positive"),
    ({"eval_pairs": 1}, "'eval_pairs' must be at least 2"),  # an infinite interval in eval.jsonl, then no resume
    ({"num_envs": 10, "num_steps": 3, "num_minibatches": 4}, "'num_minibatches' (4) must divide"),
    ({"seed": -1}, "config key 'seed' must lie in 0..9223372036854775807, got -1"),  # torch takes no negative seed
    ({"seed": 2**63}, "config key 'seed' must lie in 0..9223372036854775807"),
    ({"opponents": {"self": 1.0, "expert": 1.0}}, "'opponents.expert': unknown opponent kind"),
    ({"opponents": {"self": 0.0}}, "'opponents' needs weights"),
    ({"device": "tpu"}, "'device' must be one of auto, cpu, cuda"),
    # the batched env is two-player only (R21 runs elsewhere): refused before args.yaml, not at the env's start
    ({"rules": "three"}, "'rules' must be one of standard, paderborn, scharf, got 'three'"),
    ({"gae_lambda": 1.5}, "'gae_lambda' must lie in [0, 1]"),
    ({"init_model": "models/none.zip"}, "'init_model': no model file"),
    ({"eval_opponent": "nobody"}, "'eval_opponent'"),
    ({"rules": "paderborn", "eval_opponent": "suit_iterated"}, "'eval_opponent': suit network"),  # R19
    ({"hidden": []}, "'hidden' must list positive layer widths"),
    ({"init_logit_scale": 0}, "'init_logit_scale' must be positive"),
    ({"critic_warmup_updates": -1}, "'critic_warmup_updates' must be zero or more"),
    ({"init_suit": "models/none.npz"}, "'init_suit': no suit-network weights file 'models/none.npz'"),
    ({"init_suit": "models/suit_three_standard.npz+models/ppo_standard.zip"},
     "'init_suit': no suit-network weights file 'models/ppo_standard.zip'"),
    ({"init_suit": "models/suit_three_standard.npz", "init_model": "models/ppo_standard.zip"},
     "'init_model' and 'init_suit' exclude each other"),
    ({"init_suit": "models/suit_three_standard.npz", "rules": "paderborn"}, "'init_suit'"),
    # hidden shapes the MLP actor only: with a suit actor it was accepted and ignored (the critic is critic_hidden)
    ({"init_suit": "models/suit_three_standard.npz", "hidden": [7]}, "'hidden' shapes the MLP actor"),
])
def test_config_errors_name_the_key(values, message):
    with pytest.raises(ValueError) as error:
        args_from_mapping(values)
    assert message in str(error.value)


def test_config_file_and_overrides(tmp_path):
    path = tmp_path / "run.yaml"
    path.write_text("num_envs: 8\nnum_steps: 4\nnum_envs: 16\n")
    with pytest.raises(ValueError, match="duplicate key"):
        load_args(path)
    path.write_text("num_envs: 8\nnum_steps: 4\n")
    args = load_args(path, ["num_minibatches=2", "opponents={random: 1.0}"])
    assert (args.num_envs, args.num_steps, args.num_minibatches, args.opponents) == (8, 4, 2, {"random": 1.0})
    with pytest.raises(ValueError, match="malformed override"):
        load_args(path, ["num_envs"])


def test_cli_bad_config_exits_2_without_traceback(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("num_envs: -3\n")
    result = subprocess.run([sys.executable, "-m", "sixtysix_cli", "train-vector", "--config", str(path)],
                            capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert result.returncode == 2
    assert "'num_envs' must be positive" in result.stderr
    assert "Traceback" not in result.stderr


# ---------------------------------------------------------------------------------------------- a tiny run
TINY = dict(num_envs=16, num_steps=8, total_steps=256, num_minibatches=2, update_epochs=2, eval_every=1,
            eval_pairs=2, checkpoint_every=1, snapshot_every=1, pool_size=1, progress_bar=False,
            opponents={"self": 1.0, "pool": 1.0, "policy": 1.0, "heuristic": 1.0, "random": 1.0})


def test_tiny_run_writes_a_maskable_ppo_model_that_plays(tmp_path, monkeypatch):
    """Two updates from models/ppo_standard.zip: model.zip loads with MaskablePPO.load, its policy's logits are
    the ones ``ppo:path=`` computes, the metadata says the network plays every decision, and the agent plays a
    whole deal against heuristic; the run logged the CleanRL tags and the evaluation. The start model is named
    relative to the folder the run starts in, and args.yaml keeps it absolute: --resume from another folder found
    no model file."""
    from sb3_contrib import MaskablePPO

    from agents.ppo import load_actor
    from agents.registry import make_agent
    from eval.play import play_deal

    monkeypatch.chdir(ROOT)
    args = args_from_mapping(dict(TINY, out_dir=str(tmp_path), run_name="tiny", init_model="models/ppo_standard.zip"))
    learner = VectorPpo(args, quiet=True)
    path = learner.train()
    monkeypatch.chdir(tmp_path)
    assert VectorPpo.resume_run(tmp_path / "tiny", ["total_steps=512"], quiet=True).args.init_model == str(MODEL)
    assert path == tmp_path / "tiny" / "model.zip" and path.is_file()
    model = MaskablePPO.load(path, device="cpu")
    network, metadata, _rules = load_actor(path)
    assert metadata["phase2"] == "policy" and metadata["trained_steps"] == 256
    observations = np.random.default_rng(0).random((4, OBSERVATION_SIZE)).astype(np.float32)
    with torch.no_grad():
        sb3_logits = model.policy.get_distribution(torch.from_numpy(observations)).distribution.logits.numpy()
    ours = network.logits(observations)
    np.testing.assert_allclose(sb3_logits - sb3_logits.max(1, keepdims=True), ours - ours.max(1, keepdims=True),
                               atol=1e-4)
    agent = make_agent(f"ppo:path={path}")
    assert agent.phase2 == "policy"
    game = Game.deal(Rules(), seed=1)
    outcome = play_deal(game, [agent, make_agent("heuristic", seed=0)], [1, 2])
    assert game.is_over and sum(outcome.returns) == 0  # R16: zero-sum game points
    tags = {line.split(",")[1] for line in (tmp_path / "tiny" / "scalars.csv").read_text().splitlines()[1:]}
    assert {"charts/SPS", "charts/margin_vs_heuristic", "losses/value_loss", "losses/policy_loss",
            "losses/entropy", "losses/approx_kl", "charts/explained_variance"} <= tags
    assert "losses/explained_variance" not in tags  # the tag of `sixtysix train`, not a second one
    assert len((tmp_path / "tiny" / "eval.jsonl").read_text().splitlines()) == 2
    assert (tmp_path / "tiny" / "learning_curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not list((tmp_path / "tiny").glob("*.tmp*"))  # atomic writes leave no temporary file


def test_a_run_on_two_envs_survives_steps_and_minibatches_without_a_learner_decision(tmp_path):
    """With two environments the opponents may be to move in both at once (self-play seats, R3 dealer): the actor
    is then not asked, and a minibatch without a learner decision trains the critic only."""
    args = args_from_mapping(dict(TINY, out_dir=str(tmp_path), run_name="two", num_envs=2, total_steps=64,
                                  num_minibatches=8, init_model=str(MODEL)))
    path = VectorPpo(args, quiet=True).train()
    assert path.is_file()
    checkpoint = read_checkpoint(tmp_path / "two" / "checkpoint.pt")
    assert (checkpoint["update"], checkpoint["global_step"]) == (4, 64)


class _NotAStateDict:  # a pickled object of a class: reading it would run this module's code
    pass


@pytest.mark.parametrize("content, fragment", [
    (b"not a checkpoint", "cannot be read"),
    ({"actor": {}, "update": 1}, "is missing key 'critic'"),
    ({**{key: {} for key in ("actor", "critic", "optimizer", "pool")}, "next_snapshot_id": 0, "update": -1,
      "global_step": 0, "learner_steps": 0}, "checkpoint update must be an integer >= 0"),
    ({"actor": _NotAStateDict()}, "cannot be read"),
])
def test_a_damaged_or_foreign_checkpoint_is_refused_naming_it(tmp_path, content, fragment):
    """``checkpoint.pt`` is read with ``weights_only=True`` (no code runs while it loads) and checked: a damaged
    or foreign file is a ValueError naming it (the CLI's exit 2), not a traceback."""
    path = tmp_path / "checkpoint.pt"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        torch.save(content, path)
    with pytest.raises(ValueError, match=f"checkpoint {re.escape(repr(str(path)))} .*{re.escape(fragment)}") as error:
        read_checkpoint(path)
    # one line, and not torch's advice to load the file again with weights_only=False (code execution allowed)
    assert "\n" not in str(error.value) and "weights_only" not in str(error.value)


def test_a_damaged_policy_pth_is_named_with_its_cause_not_torchs_advice(tmp_path):
    """A model zip whose policy.pth is damaged: the error names the file and the cause torch found, on one line,
    without torch's advice to retry with ``weights_only=False`` (unsafe for a foreign file, useless for a damaged
    one); a checkpoint likewise."""
    import zipfile

    from agents.ppo import read_policy_state

    damaged = tmp_path / "damaged.zip"
    with zipfile.ZipFile(MODEL) as source, zipfile.ZipFile(damaged, "w") as target:
        for name in source.namelist():
            target.writestr(name, b"garbage" * 20 if name == "policy.pth" else source.read(name))
    with pytest.raises(ValueError, match=r"^model x: its policy.pth cannot be read \(UnpicklingError: Unsupported "
                                         r"operand \d+\)$"):
        read_policy_state(damaged, "model x")
    checkpoint = tmp_path / "checkpoint.pt"
    checkpoint.write_bytes(b"garbage" * 20)
    with pytest.raises(ValueError, match=r"cannot be read \(UnpicklingError: Unsupported operand \d+\); the run"):
        read_checkpoint(checkpoint)


@pytest.mark.slow
def test_resume_continues_from_the_checkpoint(tmp_path):
    """A run resumed with a larger total_steps continues from its checkpoint's counters (the logged steps go on
    from there, none repeated) and keeps its pool."""
    args = args_from_mapping(dict(TINY, out_dir=str(tmp_path), run_name="resumed", privileged_critic=False))
    VectorPpo(args, quiet=True).train()
    checkpoint = read_checkpoint(tmp_path / "resumed" / "checkpoint.pt")  # tensors and numbers: weights_only
    assert (checkpoint["update"], checkpoint["global_step"]) == (2, 256)
    VectorPpo.resume_run(tmp_path / "resumed", ["total_steps=512"], quiet=True).train()
    checkpoint = read_checkpoint(tmp_path / "resumed" / "checkpoint.pt")
    assert (checkpoint["update"], checkpoint["global_step"]) == (4, 512)
    steps = [int(line.split(",")[0]) for line in (tmp_path / "resumed" / "scalars.csv").read_text().splitlines()[1:]
             if line.split(",")[1] == "charts/SPS"]
    assert steps == [128, 256, 384, 512]
    # TensorBoard keeps the checkpoint's own step too (purge only what came after it), each step once
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(tmp_path / "resumed" / "tb"))
    events.Reload()
    assert [event.step for event in events.Scalars("charts/SPS")] == [128, 256, 384, 512]
    with pytest.raises(ValueError, match="already holds a run: continue it with --resume"):
        VectorPpo(args, quiet=True).train()
    # What the checkpoint's networks and update size fix cannot change on resume, and args.yaml stays as it was
    saved = (tmp_path / "resumed" / "args.yaml").read_text()
    for override in ("hidden=[16,16]", "num_envs=32"):
        with pytest.raises(ValueError, match=f"cannot change '{override.split('=')[0]}' when resuming"):
            VectorPpo.resume_run(tmp_path / "resumed", [override], quiet=True)
    assert (tmp_path / "resumed" / "args.yaml").read_text() == saved


# ---------------------------------------------------------------------------------------------- a suit-network actor
def _tiny_suit_files(tmp_path: Path, temperature: float = 0.25) -> list[Path]:
    """Two small suit networks of different shapes (one and two rounds), saved as train/suit_network.py saves them."""
    from agents.suit import save_suit_weights
    from train.suit_network import build_suit_network

    paths = []
    for rounds in (1, 2):
        torch.manual_seed(rounds)
        network = build_suit_network(width=8, context=16, rounds=rounds)
        path = tmp_path / f"tiny_suit_{rounds}.npz"
        save_suit_weights(path, {name: value.detach().numpy() for name, value in network.state_dict().items()},
                          Rules(), {"temperature": temperature, "rounds": rounds})
        paths.append(path)
    return paths


def test_suit_actor_is_the_ensemble_with_its_logits_scaled(tmp_path):
    """The suit actor started from two weights files computes the mean of their logits (as ``suit:path=A+B`` plays
    them) times ``init_logit_scale``."""
    from agents.suit import load_suit_networks
    from train.vector_ppo import suit_start

    paths = _tiny_suit_files(tmp_path)
    args = args_from_mapping({"init_suit": "+".join(map(str, paths))})
    weights, started_from, temperature, rules = suit_start(args)
    assert temperature == 0.25 and [start["path"] for start in started_from] == [str(path) for path in paths]
    assert rules == Rules() and [len(member) for member in weights] == [14, 20]  # one round; two: mix, recombine
    from train.vector_ppo import _networks as classes

    _Actor, _Critic, SuitActor = classes()
    ensemble, _rules = load_suit_networks(paths)
    observations = np.random.default_rng(3).integers(0, 2, (6, OBSERVATION_SIZE)).astype(np.float32)
    with torch.no_grad():
        plain = SuitActor(weights)(torch.from_numpy(observations)).numpy()
        scaled = SuitActor(weights, logit_scale=4.0)(torch.from_numpy(observations)).numpy()
    np.testing.assert_allclose(plain, ensemble.logits(observations), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(scaled, 4.0 * plain, rtol=1e-4, atol=1e-4)


def test_tiny_run_from_suit_networks_writes_members_that_play(tmp_path):
    """Two updates from two suit networks: one weights file per member, played by ``suit:path=A+B`` whole deals
    against heuristic; the headers' q temperature is the start's over the logit scale and records the start; the
    actor moved. With the critic's warm-up covering every update the members are the start's, scaled exactly."""
    from agents.registry import make_agent
    from agents.suit import SuitNetwork, suit_header
    from eval.play import play_deal

    paths = _tiny_suit_files(tmp_path)
    spec = "+".join(map(str, paths))
    for run_name, warmup in (("suit_run", 0), ("suit_warmup", 2)):
        args = args_from_mapping(dict(TINY, out_dir=str(tmp_path), run_name=run_name, init_suit=spec,
                                      init_logit_scale=2.0, learning_rate=3e-3, critic_warmup_updates=warmup))
        learner = VectorPpo(args, quiet=True)
        first = learner.train()
        members = [tmp_path / run_name / f"suit_member_{index}.npz" for index in range(2)]
        assert first == members[0] and learner.model_spec == "suit:path=" + "+".join(map(str, members))
        assert not (tmp_path / run_name / "model.zip").exists()
        header = suit_header(members[1])["provenance"]
        assert header["temperature"] == 0.125 and header["init"]["path"] == str(paths[1])
        assert header["trained_steps"] == 256 and header["opponents"] == TINY["opponents"]
        start = SuitNetwork.load(paths[1])[0].weights
        trained = SuitNetwork.load(members[1])[0].weights
        expected = {name: array * (2.0 if name.startswith(("suit_head.2.", "other_head.")) else 1.0)
                    for name, array in start.items()}
        same = all(np.allclose(trained[name], expected[name], rtol=1e-6, atol=1e-7) for name in start)
        assert same == (warmup == 2), run_name
    agent = make_agent(learner.model_spec.replace("suit_warmup", "suit_run"))
    game = Game.deal(Rules(), seed=2)
    outcome = play_deal(game, [make_agent("heuristic", seed=0), agent], [1, 2])
    assert game.is_over and sum(outcome.returns) == 0  # R16: zero-sum game points
    assert len((tmp_path / "suit_run" / "eval.jsonl").read_text().splitlines()) == 2


def test_anchor_penalty_pulls_the_actor_back_to_its_start():
    """With the advantages all zero the policy loss gives no direction; the anchor's KL to the start policy then
    falls under repeated updates, while without the anchor (coefficient 0) the actor stays where it was moved."""
    torch.manual_seed(0)
    size = 128
    inputs = torch.rand(size, OBSERVATION_SIZE + PRIVILEGED_SIZE)
    masks = torch.rand(size, 37) < 0.4
    masks[:, 0] = True
    for coefficient in (1.0, 0.0):
        args = Args(hidden=[32], critic_hidden=[32], num_minibatches=1, update_epochs=1, learning_rate=3e-3,
                    target_kl=None, ent_coef=0.0, anchor_coef=coefficient)
        actor, critic = _networks(args)
        with torch.no_grad():
            start = torch.log_softmax(actor(inputs[:, :OBSERVATION_SIZE]).masked_fill(~masks, -1e8), dim=1)
            for parameter in actor.parameters():
                parameter.add_(0.3 * torch.randn_like(parameter))  # the actor moved away from its start
            logits = actor(inputs[:, :OBSERVATION_SIZE]).masked_fill(~masks, -1e8)
            actions = torch.distributions.Categorical(logits=logits).sample()
            logprobs = torch.distributions.Categorical(logits=logits).log_prob(actions)
        optimizer = torch.optim.Adam(list(actor.parameters()) + list(critic.parameters()), lr=args.learning_rate)
        batch = {"masks": masks, "learner": torch.ones(size, dtype=torch.bool), "actions": actions,
                 "logprobs": logprobs, "advantages": torch.zeros(size), "returns": torch.zeros(size),
                 "values": torch.zeros(size), "anchor_logprobs": start}
        args.norm_adv = False
        first = ppo_update(actor, critic, optimizer, inputs, batch, args, OBSERVATION_SIZE)
        for _ in range(40):
            last = ppo_update(actor, critic, optimizer, inputs, batch, args, OBSERVATION_SIZE)
        with torch.no_grad():
            now = torch.log_softmax(actor(inputs[:, :OBSERVATION_SIZE]).masked_fill(~masks, -1e8), dim=1)
            kl_to_start = float((start.exp() * (start - now)).sum(1).mean())
        if coefficient:
            assert first["anchor_kl"] > 0.01 and last["anchor_kl"] < 0.5 * first["anchor_kl"]
            assert kl_to_start < 0.5 * first["anchor_kl"]
        else:
            assert "anchor_kl" not in last and kl_to_start > 0.01  # no pull back without the anchor


def test_anchor_needs_a_start():
    with pytest.raises(ValueError, match="'anchor_coef' keeps the policy near its start: it needs"):
        args_from_mapping({"anchor_coef": 0.5})


def test_a_damaged_args_yaml_or_a_model_without_its_checkpoint_is_refused_on_resume(tmp_path):
    """Resuming reads the run's args.yaml as a config file (bad YAML or no mapping is named, not a traceback), and
    a run directory that holds model.zip but no checkpoint.pt is refused: starting over would delete the model."""
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "args.yaml").write_text("seed: [1\n")
    with pytest.raises(ValueError, match=r"config file .*args\.yaml.* is not valid YAML"):
        VectorPpo.resume_run(run_dir, quiet=True)
    (run_dir / "args.yaml").write_text("- just a list\n")
    with pytest.raises(ValueError, match=r"args\.yaml.* must hold a mapping"):
        VectorPpo.resume_run(run_dir, quiet=True)
    (run_dir / "args.yaml").write_text("seed: 1\n")
    (run_dir / "model.zip").write_bytes(b"a model from an earlier update")
    with pytest.raises(ValueError, match="holds model.zip but no checkpoint.pt"):
        VectorPpo.resume_run(run_dir, quiet=True).train()
    assert (run_dir / "model.zip").read_bytes() == b"a model from an earlier update"
