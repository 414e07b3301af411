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


def test_a_run_without_the_peers_names_the_extra_once_and_warns_per_measurement_no_more(monkeypatch, capsys, recwarn):
    """Each missing peer printed a RuntimeWarning with a line of source per measurement, and nothing said that the
    peers are the ``peers`` extra."""
    from bench.run import PEERS_INSTALL, main

    monkeypatch.setattr(peers, "_import_pyspiel", lambda: (None, "open_spiel not importable (test)"))
    monkeypatch.setattr(peers, "_import_classic_env", lambda env_name: (None, f"{env_name} not importable (test)"))
    assert main(["--seconds", "0.02", "--repeats", "1", "--no-core"]) == 0
    out = capsys.readouterr().out
    assert out.count(PEERS_INSTALL) == 1 and "peer openspiel_euchre: unavailable: open_spiel not importable" in out
    assert not [warning for warning in recwarn if "benchmark peer" in str(warning.message)]
