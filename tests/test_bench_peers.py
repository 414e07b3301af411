"""bench/peers.py: the peer inventory reports on exactly the peers that ``sixtysix bench`` measures."""

from __future__ import annotations

from bench import peers


def test_inventory_names_every_pettingzoo_env_the_bench_measures(monkeypatch):
    measured_envs: list[str] = []

    def record(env_name, seconds=2.0, seed=0):
        measured_envs.append(env_name)
        return 1.0

    monkeypatch.setattr(peers, "pettingzoo_classic_steps_per_second", record)
    monkeypatch.setattr(peers, "openspiel_euchre_decisions_per_second", lambda seconds: 1.0)
    monkeypatch.setattr(peers, "openspiel_euchre_steps_per_second", lambda seconds: 1.0)
    for measure in peers.peer_measurements(0.01).values():
        measure()
    inventory = peers.available_peers()
    assert measured_envs, "the bench measures no PettingZoo env"
    for env_name in measured_envs:
        assert peers.inventory_key(env_name) in inventory, f"{env_name} is measured but not in the inventory"
    listed = {key for key in inventory if key.startswith("pettingzoo_")}
    assert listed == {peers.inventory_key(env_name) for env_name in measured_envs}


def test_inventory_key_drops_the_version_suffix():
    assert peers.inventory_key("texas_holdem_v4") == "pettingzoo_texas_holdem"
    assert peers.inventory_key("leduc_holdem") == "pettingzoo_leduc_holdem"
