"""``causal-lab soak``: every protocol passes a short soak, and the soak catches a broken run."""

import dataclasses

import numpy as np
import pytest

from causal_lab import catalog, cli, soak
from causal_lab.families.vcube_broadcast import soak as broadcast_soak


@pytest.mark.parametrize("protocol", catalog.protocols(), ids=lambda p: p.name)
def test_short_soak_of_every_protocol_is_clean(protocol):
    tally = soak.Tally(protocol.name)
    for index in range(40):
        tally.add(soak.soak_one(protocol, index))
    assert tally.failed_runs == 0, tally.examples
    assert tally.violations == 0 and tally.undelivered == 0 and tally.events > 0


def test_configurations_depend_only_on_the_protocol_and_the_index():
    p = catalog.protocols("vcube_broadcast")[0]
    assert p.draw(soak.seeds(p, 3)[0]) == p.draw(soak.seeds(p, 3)[0])
    assert p.draw(soak.seeds(p, 3)[0]) != p.draw(soak.seeds(p, 4)[0])


def _dropping(config, seed):
    """A broken protocol: the VCube broadcast run with its last delivery lost."""
    run = broadcast_soak.run(config, seed)
    return dataclasses.replace(run, log_kind=run.log_kind[:-1], log_node=run.log_node[:-1],
                               log_msg=run.log_msg[:-1])


def _duplicating(config, seed):
    """A broken protocol: the VCube broadcast run with its last delivery made twice."""
    run = broadcast_soak.run(config, seed)
    return dataclasses.replace(run, log_kind=np.append(run.log_kind, run.log_kind[-1]),
                               log_node=np.append(run.log_node, run.log_node[-1]),
                               log_msg=np.append(run.log_msg, run.log_msg[-1]))


@pytest.mark.parametrize("broken, column", [(_dropping, "undelivered"), (_duplicating, "violations")])
def test_the_soak_catches_a_broken_protocol(broken, column):
    protocol = soak.Protocol("vcube_broadcast", "broken", broadcast_soak.draw, broken)
    caught = [soak.soak_one(protocol, i) for i in range(10)]
    assert all(t.failed_runs == 1 and t.examples for t in caught)
    assert sum(getattr(t, column) for t in caught) > 0


def test_known_flaws_are_counted_apart():
    """The thesis's strict CHECKCB under churn can break causal order: such runs are counted as a
    known flaw, not failed; the safe rule soaked beside it never is."""
    protocol = next(p for p in catalog.protocols("vcube_ps") if p.name == "vcube_ps")
    tally = soak.Tally("vcube_ps")
    for index in range(300):
        tally.add(soak.soak_one(protocol, index))
    assert tally.failed_runs == 0
    assert any("out of causal order" in flaw for flaw in tally.flaws)


def test_cli_rejects_bad_arguments(capsys):
    assert cli.main(["soak", "--runs", "0"]) == cli.EXIT_USAGE
    assert cli.main(["soak", "nope"]) == cli.EXIT_USAGE
    assert "unknown family 'nope'" in capsys.readouterr().err
