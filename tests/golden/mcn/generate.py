#!/usr/bin/env python3
"""Writes the MachineConfigNode golden cases, one directory per case.

Each case holds the eval inputs (node.yaml, pools.yaml, machineconfigs.yaml,
optional machineconfiguration.yaml, previous.yaml, featuregate.yaml and now.txt) and expected.json, the output of
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
import urllib.parse
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


def machineconfig(name, os="os-a", key="key-a", files=(), units=(), groups=()):
    config = {
        "ignition": {"version": "3.4.0"},
        "passwd": {"users": [{"name": "core", "sshAuthorizedKeys": [f"ssh-ed25519 {key}"]}]},
        "storage": {"files": [{"path": p, "contents": {"source": "data:," + urllib.parse.quote(d)}} for p, d in files]},
    }
    if units:
        config["systemd"] = {"units": [{"name": n, "contents": c} for n, c in units]}
    if groups:
        config["passwd"]["groups"] = [{"name": g} for g in groups]
    return {
        "apiVersion": "machineconfiguration.openshift.io/v1",
        "kind": "MachineConfig",
        "metadata": {"name": name},
        "spec": {
            "osImageURL": f"quay.io/openshift/{os}@sha256:" + "0" * 64,
            "config": config,
        },
    }


def machineconfiguration(files=(), units=(), generation=1, published=False):
    """MachineConfiguration `cluster` with admin policies in its spec; with
    `published`, the operator's merged status says the same (and only it)."""
    def action(a):
        kind, _, service = a.partition(":")
        out = {"type": kind}
        if service:
            out[kind.lower()] = {"serviceName": service}
        return out
    policy = {
        "files": [{"path": p, "actions": [action(a) for a in actions]} for p, actions in files],
        "units": [{"name": n, "actions": [action(a) for a in actions]} for n, actions in units],
    }
    status = {"observedGeneration": generation}
    if published:
        status["nodeDisruptionPolicyStatus"] = {"clusterPolicies": policy}
    return {
        "apiVersion": "operator.openshift.io/v1",
        "kind": "MachineConfiguration",
        "metadata": {"name": "cluster", "generation": generation},
        "spec": {"nodeDisruptionPolicy": policy},
        "status": status,
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
    "policy-a": machineconfig("rendered-worker-a", files=[("/etc/containers/policy.json", "1")]),
    "policy-b": machineconfig("rendered-worker-b", files=[("/etc/containers/policy.json", "2")]),
    "groups": machineconfig("rendered-worker-b", groups=["wheel"]),
}
DONE_ON_A = {
    "currentConfig": "rendered-worker-a",
    "desiredConfig": "rendered-worker-a",
    "state": "Done",
    "desiredDrain": "uncordon-rendered-worker-a",
    "lastAppliedDrain": "uncordon-rendered-worker-a",
}


def featuregate(enabled=(), disabled=(), feature_set="TechPreviewNoUpgrade"):
    """FeatureGate `cluster` as the cluster publishes it, for one version."""
    return {
        "apiVersion": "config.openshift.io/v1",
        "kind": "FeatureGate",
        "metadata": {"name": "cluster"},
        "spec": {"featureSet": feature_set},
        "status": {"featureGates": [{
            "version": "4.22.0",
            "enabled": [{"name": n} for n in enabled],
            "disabled": [{"name": n} for n in disabled],
        }]},
    }


IMAGE_MODE_ON = featuregate(enabled=["ImageModeStatusReporting", "ManagedBootImagesCPMS"])
IMAGE_MODE_OFF = featuregate(disabled=["ImageModeStatusReporting"], feature_set="")


def write_yaml(path, objects):
    path.write_text(yaml.safe_dump_all(objects, sort_keys=False))


def case(name, the_node, pools=POOLS, configs=("a", "b"), previous=None, now=START, mc=None, gates=None):
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
    if mc is not None:
        write_yaml(directory / "machineconfiguration.yaml", [mc])
        args += ["--machineconfiguration", str(directory / "machineconfiguration.yaml")]
    if gates is not None:
        write_yaml(directory / "featuregate.yaml", [gates])
        args += ["--featuregate", str(directory / "featuregate.yaml")]
    if previous is not None:
        write_yaml(directory / "previous.yaml", [previous])
        args += ["--previous", str(directory / "previous.yaml")]
    result = subprocess.run(args, capture_output=True, text=True, check=True)
    output = json.loads(result.stdout)
    (directory / "expected.json").write_text(json.dumps(output, indent=2, sort_keys=True) + "\n")
    return output.get("machineConfigNode")


def stored(output, generation):
    """An eval output as the API server would return it once applied."""
    if output is None:
        return None
    return dict(output, metadata=dict(output["metadata"], generation=generation))


def walk(prefix, configs, steps, mc=None, gates=None, start=DONE_ON_A, pools=POOLS):
    """One node through an update; steps are (label, annotation changes, unschedulable);
    `pools` are those of the steps (the first case's pool targets rendered-worker-a)."""
    annotations = dict(start)
    previous = case(f"{prefix}-00-updated-on-a", node(annotations), pools=[pool("worker", "rendered-worker-a")], configs=configs,
                    mc=mc, gates=gates)
    generation = 1
    for index, (label, changes, unschedulable) in enumerate(steps, start=1):
        annotations.update(changes)
        now = START + timedelta(minutes=index)
        output = case(f"{prefix}-{index:02d}-{label}", node(annotations, unschedulable=unschedulable), pools=pools,
                      configs=configs, previous=stored(previous, generation), now=now, mc=mc, gates=gates)
        if output is not None and previous is not None and output["spec"] != previous["spec"]:
            generation += 1
        previous = output
    return previous


def reboot_steps(config, request, done):
    """A reboot update to `config` step by step: `request` (the node
    controller's step), then the daemon's and the drain controller's
    annotations; `done` is what the daemon sets besides the state at the end."""
    return [
        request,
        ("working", {"state": "Working"}, False),
        # Asked for, not yet cordoned: the drain controller cordons first.
        ("drain-requested", {"desiredDrain": f"drain-{config}"}, False),
        ("cordoned", {}, True),
        ("drained", {"lastAppliedDrain": f"drain-{config}"}, True),
        ("rebooting", {"post-config-action": "Rebooting"}, True),
        ("rebooted", {"post-config-action": ""}, True),
        ("uncordon-requested", {"desiredDrain": f"uncordon-{config}"}, True),
        ("uncordoned", {"lastAppliedDrain": f"uncordon-{config}"}, False),
        ("done", {"state": "Done", **done}, False),
    ]


def policy_case(name, files_a=(), files_b=(), units_a=(), units_b=(), key_b="key-a", mc=None):
    """One policy class: the update from A to B prepared (W5, W6) and, for
    a rebootless plan, resumed (the post-config action writes)."""
    b = "rendered-worker-b"
    CONFIGS[f"{name}-a"] = machineconfig("rendered-worker-a", files=files_a, units=units_a)
    CONFIGS[f"{name}-b"] = machineconfig(b, key=key_b, files=files_b, units=units_b)
    walk(f"policy-{name}", (f"{name}-a", f"{name}-b"), [
        ("working", {"desiredConfig": b, "state": "Working"}, False),
        ("uncordon-requested", {"desiredDrain": f"uncordon-{b}"}, False),
    ], mc=mc)


def main():
    for stale in HERE.iterdir():
        if stale.is_dir():
            shutil.rmtree(stale)
    b = "rendered-worker-b"
    walk("reboot", ("a", "b"), reboot_steps(b, ("desired-config-set", {"desiredConfig": b}, False), {"currentConfig": b})
         + [("resync", {}, False)])
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
    # A single-node cluster never drains: the reboot shows (W17) while the
    # drain annotations still name the old config.
    walk("single-node", ("a", "b"), [
        ("working", {"desiredConfig": b, "state": "Working", "controlPlaneTopology": "SingleReplica"}, False),
        ("rebooting", {"post-config-action": "Rebooting"}, False),
        ("rebooted", {"post-config-action": ""}, False),
        ("uncordon-requested", {"desiredDrain": f"uncordon-{b}"}, False),
        ("uncordoned", {"lastAppliedDrain": f"uncordon-{b}"}, False),
        ("done", {"state": "Done", "currentConfig": b}, False),
    ])
    # A reload that fails, then the daemon's retry succeeds with the state
    # still Degraded (it sets Working only on a node that has not failed).
    walk("degraded-retry", ("policy-a", "policy-b"), [
        ("working", {"desiredConfig": b, "state": "Working"}, False),
        ("reload-failed", {"state": "Degraded", "reason": "could not apply update: reloading crio.service configuration failed. Error: exit status 1"}, False),
        ("uncordon-requested", {"desiredDrain": f"uncordon-{b}"}, False),
        ("uncordoned", {"lastAppliedDrain": f"uncordon-{b}"}, False),
        ("done", {"state": "Done", "currentConfig": b, "reason": ""}, False),
    ])
    draining = walk("degraded", ("a", "b"), [
        ("working", {"desiredConfig": b, "state": "Working"}, False),
        ("drain-requested", {"desiredDrain": f"drain-{b}"}, True),
        ("drain-failed", {"state": "Degraded", "reason": "failed to drain node: Cannot evict pod as it would violate the pod's disruption budget."}, True),
    ])
    assert draining is not None
    # A new group is not reconcilable: with the Working step seen, the
    # derivation runs the daemon's check there; without, it reads the error
    # from the reason annotation. Both end the same.
    refused = ("can't reconcile config rendered-worker-a with rendered-worker-b: configs rendered-worker-a, rendered-worker-b "
               "are not reconcilable: new machineconfig \"rendered-worker-a\" is not reconcilable against \"rendered-worker-b\": "
               "invalid passwd change(s): ignition Passwd Groups section contains changes")
    walk("unreconcilable", ("a", "groups"), [
        ("desired-config-set", {"desiredConfig": b}, False),
        ("working", {"state": "Working"}, False),
        ("validation-failed", {"state": "Unreconcilable", "reason": refused}, False),
    ])
    walk("unreconcilable-unseen", ("a", "groups"), [
        ("validation-failed", {"desiredConfig": b, "state": "Unreconcilable", "reason": refused}, False),
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
    case("windows-node-spec-only", node(done, labels={"kubernetes.io/os": "windows"}))
    case("windows-node-no-pool-matches", node({}, roles=("worker",), labels={"kubernetes.io/os": "windows"}))
    takeover = {
        "apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfigNode",
        "metadata": {"name": "worker-0", "generation": 7},
        "spec": {"node": {"name": "worker-0"}, "pool": {"name": "worker"}, "configVersion": {"desired": "rendered-worker-a"}},
        "status": {"observedGeneration": 12, "conditions": []},
    }
    case("observed-generation-takeover", node(done), pools=[pool("worker", "rendered-worker-a")], previous=takeover)
    case("observed-generation-spec-change", node(dict(done, desiredConfig="rendered-worker-b")), previous=dict(takeover, status={"observedGeneration": 3}))

    conf = "/etc/containers/registries.conf"
    base = 'unqualified-search-registries = ["registry.access.redhat.com"]\n'
    ca = "/etc/pki/ca-trust/source/anchors/openshift-config-user-ca-bundle.crt"
    policy_case("none-nmstate", files_b=[("/etc/nmstate/openshift/eth0.yml", "x")])
    policy_case("reload-crio-policy", files_a=[("/etc/containers/policy.json", "1")], files_b=[("/etc/containers/policy.json", "2")])
    policy_case("restart-ca-bundle", files_a=[(ca, "1")], files_b=[(ca, "2")])
    policy_case("daemon-reload-credential-provider", files_b=[
        ("/etc/systemd/system/kubelet.service.d/40-kubelet-crio-image-credential-provider.conf", "x")])
    policy_case("special-registries-safe", files_a=[(conf, base)],
                files_b=[(conf, base.replace('"]', '", "quay.io"]'))])
    policy_case("special-registries-unsafe", files_a=[(conf, base)],
                files_b=[(conf, base + '[[registry]]\nlocation = "quay.io/openshift"\n[[registry.mirror]]\nlocation = "mirror.example.com"\n')])
    policy_case("ssh-keys", key_b="key-b")
    policy_case("unknown-file-reboots", files_b=[("/etc/motd", "hello")])
    admin = machineconfiguration(
        files=[("/etc/app", ["Restart:app.service"]), ("/etc/containers/policy.json", ["Drain", "Reload:crio.service"])],
        units=[("app.service", ["DaemonReload", "Reload:app.service"])])
    policy_case("admin-file-restart", files_b=[("/etc/app/app.conf", "x")], mc=admin)
    policy_case("admin-replaces-default-drain", files_a=[("/etc/containers/policy.json", "1")],
                files_b=[("/etc/containers/policy.json", "2")], mc=admin)
    policy_case("admin-unit-several-actions", units_b=[("app.service", "[Service]\nExecStart=/bin/app\n")], mc=admin)
    policy_case("admin-published-status", files_b=[("/etc/app/app.conf", "x")],
                mc=machineconfiguration(files=[("/etc/app", ["None"])], generation=2, published=True))
    case("pending-node-skipped", node(done, phase="Pending"))
    case("provisioning-node-skipped", node(done, phase="Provisioning"))
    case("fresh-node-placeholders", node({}))
    image = "quay.io/openshift/os-layered@sha256:" + "ab" * 32
    on_image = dict(DONE_ON_A, currentImage=image, desiredImage=image)
    # Gate ImageModeStatusReporting: off (Default, with or without a
    # FeatureGate), no configImage whatever the annotations say; on, the
    # configImage and the gate's condition set.
    case("image-mode-gate-default-no-config-image", node(on_image), pools=[pool("worker", "rendered-worker-a")])
    case("image-mode-gate-off-no-config-image", node(on_image), pools=[pool("worker", "rendered-worker-a")], gates=IMAGE_MODE_OFF)
    case("image-mode-gate-on-config-image", node(on_image), pools=[pool("worker", "rendered-worker-a")], gates=IMAGE_MODE_ON)
    # Gate on through an update that changes files and OS: AppliedFiles and
    # AppliedOSImage apart, UpdateExecuted ending with the OS write.
    gate_on_done = walk("image-mode-gate-on-reboot", ("a", "b"), [
        ("working", {"desiredConfig": b, "state": "Working"}, False),
        ("drained", {"desiredDrain": f"drain-{b}", "lastAppliedDrain": f"drain-{b}"}, True),
        ("rebooting", {"post-config-action": "Rebooting"}, True),
        ("done", {"state": "Done", "currentConfig": b, "post-config-action": "",
                  "desiredDrain": f"uncordon-{b}", "lastAppliedDrain": f"uncordon-{b}"}, False),
    ], gates=IMAGE_MODE_ON)
    assert gate_on_done is not None
    # The gate turned on under an MCN written with it off: upstream's
    # one-time migration (AppliedFilesAndOS goes, the gate's three come).
    gate_off_done = json.loads((HERE / "reboot-10-done" / "expected.json").read_text())["machineConfigNode"]
    done_on_b = dict(DONE_ON_A, currentConfig=b, desiredConfig=b, desiredDrain=f"uncordon-{b}", lastAppliedDrain=f"uncordon-{b}")
    case("image-mode-gate-turned-on-migrates", node(done_on_b), configs=("a", "b"),
         previous=stored(gate_off_done, 3), now=START + timedelta(hours=1), gates=IMAGE_MODE_ON)
    # Gate on, only the OS image changes (the config stays): the daemon
    # drains and reboots, and its drain requests carry the config's name,
    # as the last update's did. Not cordoned yet, the drain shows nothing.
    a = "rendered-worker-a"
    image_2 = "quay.io/openshift/os-layered@sha256:" + "cd" * 32
    walk("image-only", ("a",), reboot_steps(a, ("desired-image-set", {"desiredImage": image_2}, False), {"currentImage": image_2}),
         gates=IMAGE_MODE_ON, start=on_image, pools=[pool("worker", a)])
    # The same on a single-node cluster: no drain, and the uncordon request
    # names what was already applied, so the drain controller never writes.
    walk("image-only-single-node", ("a",), [
        ("working", {"desiredImage": image_2, "state": "Working", "controlPlaneTopology": "SingleReplica"}, False),
        ("rebooting", {"post-config-action": "Rebooting"}, False),
        ("rebooted", {"post-config-action": ""}, False),
        ("done", {"state": "Done", "currentImage": image_2}, False),
    ], gates=IMAGE_MODE_ON, start=on_image, pools=[pool("worker", a)])
    case("invalid-desired-config-is-an-error", node(dict(DONE_ON_A, desiredConfig="Rendered_Worker!")))
    case("invalid-desired-image-is-an-error", node(dict(DONE_ON_A, desiredImage="quay.io/os:latest")))
    # Pinned by digest, but the CRD's rule wants a dot-qualified host.
    case("single-label-image-host-is-an-error", node(dict(DONE_ON_A, currentImage="localhost:5000/os@sha256:" + "ab" * 32)))


if __name__ == "__main__":
    main()
