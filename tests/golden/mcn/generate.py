#!/usr/bin/env python3
"""Writes the MachineConfigNode golden cases, one directory per case.

Each case holds the eval inputs (node.yaml, pools.yaml, machineconfigs.yaml,
optional previous.yaml and now.txt) and expected.json, the output of
`mco-host eval mcn`. Update walks chain: each step's previous.yaml is the
MCN the step before produced, as a controller would read it back.

The expected outputs are snapshots: review the diff before committing. The
behaviour itself is pinned by guests/mcn/tests/sequence.rs, which asserts
upstream's conditions step by step without snapshots.

    python3 tests/golden/mcn/generate.py [path/to/mco-host]
"""

import json
import pathlib
import shutil
import subprocess
import sys
from datetime import datetime, timedelta, timezone

import yaml

HERE = pathlib.Path(__file__).resolve().parent
HOST = sys.argv[1] if len(sys.argv) > 1 else "target/release/mco-host"
P = "machineconfiguration.openshift.io/"
START = datetime(2026, 1, 1, tzinfo=timezone.utc)
ROLE = "node-role.kubernetes.io/"


def node(annotations, name="worker-0", roles=("worker",), unschedulable=False, phase="Running", labels=None):
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "uid": f"uid-{name}",
            "labels": {**{ROLE + r: "" for r in roles}, **(labels or {})},
            "annotations": {P + k: v for k, v in annotations.items()},
        },
        "spec": {"unschedulable": True} if unschedulable else {},
        "status": {"phase": phase},
    }


def pool(name, target, selector=None):
    return {
        "apiVersion": "machineconfiguration.openshift.io/v1",
        "kind": "MachineConfigPool",
        "metadata": {"name": name},
        "spec": {
            "nodeSelector": selector if selector is not None else {"matchLabels": {ROLE + name: ""}},
            "configuration": {"name": target},
        },
    }


def machineconfig(name, os="os-a", key="key-a", files=()):
    return {
        "apiVersion": "machineconfiguration.openshift.io/v1",
        "kind": "MachineConfig",
        "metadata": {"name": name},
        "spec": {
            "osImageURL": f"quay.io/openshift/{os}@sha256:" + "0" * 64,
            "config": {
                "ignition": {"version": "3.4.0"},
                "passwd": {"users": [{"name": "core", "sshAuthorizedKeys": [f"ssh-ed25519 {key}"]}]},
                "storage": {"files": [{"path": p, "contents": {"source": "data:," + d}} for p, d in files]},
            },
        },
    }


POOLS = [
    pool("master", "rendered-master-a"),
    pool("worker", "rendered-worker-b"),
    pool("infra", "rendered-infra-a"),
]
CONFIGS = {
    "a": machineconfig("rendered-worker-a"),
    "b": machineconfig("rendered-worker-b", os="os-b"),
    "ssh": machineconfig("rendered-worker-b", key="key-b"),
    "crio": machineconfig("rendered-worker-b", files=[("/etc/containers/registries.conf", "mirror")]),
}
DONE_ON_A = {
    "currentConfig": "rendered-worker-a",
    "desiredConfig": "rendered-worker-a",
    "state": "Done",
    "desiredDrain": "uncordon-rendered-worker-a",
    "lastAppliedDrain": "uncordon-rendered-worker-a",
}


def write_yaml(path, objects):
    path.write_text(yaml.safe_dump_all(objects, sort_keys=False))


def case(name, the_node, pools=POOLS, configs=("a", "b"), previous=None, now=START):
    directory = HERE / name
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir()
    write_yaml(directory / "node.yaml", [the_node])
    write_yaml(directory / "pools.yaml", pools)
    write_yaml(directory / "machineconfigs.yaml", [CONFIGS[c] for c in configs])
    stamp = now.strftime("%Y-%m-%dT%H:%M:%SZ")
    (directory / "now.txt").write_text(stamp + "\n")
    args = [HOST, "eval", "mcn", "--now", stamp]
    for flag in ("node", "pools", "machineconfigs"):
        args += [f"--{flag}", str(directory / f"{flag}.yaml")]
    if previous is not None:
        write_yaml(directory / "previous.yaml", [previous])
        args += ["--previous", str(directory / "previous.yaml")]
    result = subprocess.run(args, capture_output=True, text=True, check=True)
    output = json.loads(result.stdout)
    (directory / "expected.json").write_text(json.dumps(output, indent=2, sort_keys=True) + "\n")
    return output.get("machineConfigNode")


def walk(prefix, configs, steps):
    """One node through an update; steps are (label, annotation changes, unschedulable)."""
    annotations = dict(DONE_ON_A)
    previous = case(f"{prefix}-00-updated-on-a", node(annotations), pools=[pool("worker", "rendered-worker-a")], configs=configs)
    for index, (label, changes, unschedulable) in enumerate(steps, start=1):
        annotations.update(changes)
        now = START + timedelta(minutes=index)
        previous = case(f"{prefix}-{index:02d}-{label}", node(annotations, unschedulable=unschedulable), configs=configs, previous=previous, now=now)
    return previous


def main():
    for stale in HERE.iterdir():
        if stale.is_dir():
            shutil.rmtree(stale)
    b = "rendered-worker-b"
    walk("reboot", ("a", "b"), [
        ("desired-config-set", {"desiredConfig": b}, False),
        ("working", {"state": "Working"}, False),
        ("drain-requested", {"desiredDrain": f"drain-{b}"}, False),
        ("cordoned", {}, True),
        ("drained", {"lastAppliedDrain": f"drain-{b}"}, True),
        ("rebooting", {"post-config-action": "Rebooting"}, True),
        ("rebooted", {"post-config-action": ""}, True),
        ("uncordon-requested", {"desiredDrain": f"uncordon-{b}"}, True),
        ("uncordoned", {"lastAppliedDrain": f"uncordon-{b}"}, False),
        ("done", {"state": "Done", "currentConfig": b}, False),
        ("resync", {}, False),
    ])
    walk("rebootless", ("a", "ssh"), [
        ("desired-config-set", {"desiredConfig": b}, False),
        ("working-no-drain", {"state": "Working"}, False),
        ("uncordon-requested", {"desiredDrain": f"uncordon-{b}"}, False),
        ("uncordoned", {"lastAppliedDrain": f"uncordon-{b}"}, False),
        ("done", {"state": "Done", "currentConfig": b}, False),
    ])
    walk("crio-reload", ("a", "crio"), [
        ("desired-config-set", {"desiredConfig": b}, False),
        ("working", {"state": "Working"}, False),
        ("uncordon-requested", {"desiredDrain": f"uncordon-{b}"}, False),
    ])
    walk("single-node", ("a", "b"), [
        ("working", {"desiredConfig": b, "state": "Working", "controlPlaneTopology": "SingleReplica"}, False),
    ])
    draining = walk("degraded", ("a", "b"), [
        ("working", {"desiredConfig": b, "state": "Working"}, False),
        ("drain-requested", {"desiredDrain": f"drain-{b}"}, True),
        ("drain-failed", {"state": "Degraded", "reason": "failed to drain node: Cannot evict pod as it would violate the pod's disruption budget."}, True),
    ])
    assert draining is not None
    walk("unreconcilable", ("a", "b"), [
        ("validation-failed", {"desiredConfig": b, "state": "Unreconcilable", "reason": "ignition Passwd Groups section contains changes"}, False),
    ])
    walk("drift", ("a", "b"), [
        ("degraded-on-current", {"desiredConfig": "rendered-worker-a", "state": "Degraded", "reason": "unexpected on-disk state validating against rendered-worker-a"}, False),
    ])
    broken = dict(CONFIGS["b"], spec={"config": {"storage": {"files": "not-a-list"}}})
    CONFIGS["broken"] = broken
    case("machineconfig-unreadable", node(dict(DONE_ON_A, desiredConfig=b, state="Working")), configs=("a", "broken"))
    case("machineconfigs-not-given", node(dict(DONE_ON_A, desiredConfig=b, state="Working")), configs=())

    done = dict(DONE_ON_A)
    case("pool-master-beats-custom", node(done, name="master-0", roles=("master", "infra")))
    case("pool-custom-beats-worker", node(done, name="infra-0", roles=("worker", "infra")))
    case("pool-two-custom-is-an-error", node(done, roles=("infra", "gpu")), pools=POOLS + [pool("gpu", "rendered-gpu-a")])
    case("pool-none-matches", node(done, roles=("storage",)))
    case("pool-empty-selector-matches-nothing", node(done), pools=[pool("worker", "rendered-worker-a", selector={})])
    case("pool-match-expressions", node(done, roles=(), labels={"gpu": "a100"}),
         pools=[pool("gpu", "rendered-worker-a", selector={"matchExpressions": [{"key": "gpu", "operator": "In", "values": ["a100", "h100"]}]})])
    case("pool-invalid-operator-is-an-error", node(done),
         pools=[pool("worker", "rendered-worker-a", selector={"matchExpressions": [{"key": "x", "operator": "Near"}]})])
    case("windows-node-skipped", node(done, labels={"kubernetes.io/os": "windows"}))
    case("pending-node-skipped", node(done, phase="Pending"))
    case("provisioning-node-skipped", node(done, phase="Provisioning"))
    case("fresh-node-placeholders", node({}))
    image = "quay.io/openshift/os-layered@sha256:" + "ab" * 32
    case("image-mode-config-image", node(dict(DONE_ON_A, currentImage=image, desiredImage=image)), pools=[pool("worker", "rendered-worker-a")])
    case("invalid-desired-config-is-an-error", node(dict(DONE_ON_A, desiredConfig="Rendered_Worker!")))
    case("invalid-desired-image-is-an-error", node(dict(DONE_ON_A, desiredImage="quay.io/os:latest")))


if __name__ == "__main__":
    main()
