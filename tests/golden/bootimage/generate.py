#!/usr/bin/env python3
"""Regenerates tests/golden/bootimage/*: inputs plus expected.json.

The expectations here are written out independently of the Rust code (patch
bodies, converted stubs and message texts), so `cargo test --workspace --test
host -- golden_bootimage::` checks the implementation against a second
opinion rather than against its own output. Rewrites the whole tree; needs PyYAML.

    python3 tests/golden/bootimage/generate.py [OUTPUT_DIR]
"""
import base64
import copy
import json
import os
import shutil
import sys

import yaml

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tests", "golden", "bootimage")

# ---------------------------------------------------------------- stream fixture
REL = "9.8.20260428-0"
BASE = "https://rhcos.mirror.openshift.com/art/storage/prod/streams/rhel-9.8/builds/9.8.20260428-0"
MP_VER = "4.18.2025031114"
NOPLAN_VER = "9.6.20251015"


def paid(publisher, offer):
    return {
        "hyperVGen1": {"publisher": publisher, "offer": offer, "sku": offer + "-gen1", "version": MP_VER},
        "hyperVGen2": {"publisher": publisher, "offer": offer, "sku": offer, "version": MP_VER},
    }


STREAM = {
    "stream": "rhcos-4.21",
    "metadata": {"last-modified": "2026-04-28T22:11:54Z", "generator": "plume cosa2stream 211dee6"},
    "architectures": {
        "x86_64": {
            "artifacts": {
                "aws": {"release": REL, "formats": {"vmdk.gz": {"disk": {
                    "location": BASE + "/x86_64/rhcos-9.8.20260428-0-aws.x86_64.vmdk.gz",
                    "sha256": "b45a2194d0304a174859c11a4a11371a854c8366110f26606be63832a954a7ed",
                    "uncompressed-sha256": "d88f6419a46c6a07b8bcf68c80347aacc2c4e9b3994ebccf40ce0cd20fd43466"}}}},
                "vmware": {"release": REL, "formats": {"ova": {"disk": {
                    "location": BASE + "/x86_64/rhcos-9.8.20260428-0-vmware.x86_64.ova",
                    "sha256": "29dcca5f196f09104e68bdae7f7706dee6bb84e9a1de4515a04ed9b8f288ce3c"}}}},
            },
            "images": {
                "aws": {"regions": {
                    "us-east-1": {"release": REL, "image": "ami-0fbc8be8796dc1df5"},
                    "us-east-2": {"release": REL, "image": "ami-0f87100a0927b4e1e"},
                    "eu-west-1": {"release": REL, "image": "ami-0554dc0c838511ba9"}}},
                "gcp": {"release": REL, "project": "rhcos-cloud", "name": "rhcos-9-8-20260428-0-gcp-x86-64"},
                "kubevirt": {"release": REL,
                             "image": "quay.io/openshift-release-dev/ocp-v4.0-art-dev:rhel-9.8-coreos-kubevirt",
                             "digest-ref": "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:1dc8aa4ed62574ca7dc7d9674f86521c73d24d8013a5e78b69f1bc084fc669e8"},
            },
            "rhel-coreos-extensions": {"marketplace": {"azure": {
                "no-purchase-plan": {
                    "hyperVGen1": {"publisher": "azureopenshift", "offer": "aro4", "sku": "aro_420", "version": NOPLAN_VER},
                    "hyperVGen2": {"publisher": "azureopenshift", "offer": "aro4", "sku": "420-v2", "version": NOPLAN_VER}},
                "ocp": paid("redhat", "rh-ocp-worker"),
                "opp": paid("redhat", "rh-opp-worker"),
                "oke": paid("redhat", "rh-oke-worker"),
                "ocp-emea": paid("redhat-limited", "rh-ocp-worker"),
            }}},
        },
        "aarch64": {
            "artifacts": {"gcp": {"release": REL, "formats": {"tar.gz": {"disk": {
                "location": BASE + "/aarch64/rhcos-9.8.20260428-0-gcp.aarch64.tar.gz",
                "sha256": "b76536dfaec2914333f3d6831ca62ac1aea37ae4ac39a4d857290a5281f9682d"}}}}},
            "images": {
                "aws": {"regions": {"us-east-1": {"release": REL, "image": "ami-01fdfbdd638f16b5f"}}},
                "gcp": {"release": REL, "project": "rhcos-cloud", "name": "rhcos-9-8-20260428-0-gcp-aarch64"},
            },
            "rhel-coreos-extensions": {
                "azure-disk": {"release": REL, "url": "https://rhcos.blob.core.windows.net/imagebucket/rhcos-9.8.20260428-0-azure.aarch64.vhd"},
                "marketplace": {"azure": {"no-purchase-plan": {"hyperVGen2": {
                    "publisher": "azureopenshift", "offer": "aro4", "sku": "420-arm", "version": NOPLAN_VER}}}},
            },
        },
        "ppc64le": {"images": {"powervs": {"regions": {"dal10": {
            "release": REL, "object": "rhcos-9-8-20260428-0-ppc64le-powervs.ova.gz",
            "bucket": "rhcos-powervs-images-us-south", "url": "https://s3.us-south.cloud-object-storage.appdomain.cloud"}}}}},
        "s390x": {"images": {"kubevirt": {"release": REL,
                                          "image": "quay.io/openshift-release-dev/ocp-v4.0-art-dev:rhel-9.8-coreos-kubevirt-s390x",
                                          "digest-ref": "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:5e1a7b0c2f0a4c8d9e3b6a1f7c2d4e8b0a9c3f5d7e1b2a4c6d8e0f1a3b5c7d9e"}}},
    },
}

GCP_NEW = "projects/rhcos-cloud/global/images/rhcos-9-8-20260428-0-gcp-x86-64"
GCP_NEW_ARM = "projects/rhcos-cloud/global/images/rhcos-9-8-20260428-0-gcp-aarch64"
GCP_OLD = "projects/rhcos-cloud/global/images/rhcos-418-94-202511191518-0-gcp-x86-64"
GCP_OLD_ARM = "projects/rhcos-cloud/global/images/rhcos-418-94-202511191518-0-gcp-aarch64"
AMI_E1 = "ami-0fbc8be8796dc1df5"
AMI_E2 = "ami-0f87100a0927b4e1e"
AMI_ARM = "ami-01fdfbdd638f16b5f"
AMI_OLD = "ami-0c5a8e7f3b2d1e4f6"  # a 4.18 RHCOS AMI, known only through known-images.txt
AMI_OLD_ARM = "ami-07d1b3f5a9c2e4b68"
KNOWN = "# RHCOS AMIs published by earlier releases\n%s\n%s\nami-0123456789abcdef0\n" % (AMI_OLD, AMI_OLD_ARM)

CA = "data:text/plain;charset=utf-8;base64,LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSURFRENDQWZpZ0F3SUJBZ0lJYzFtbW1NdmJ1YzR3RFFZSktvWklodmNOQVFFTEJRQXdKakVTTUJBR0ExVUUKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo="


def stub22(cluster="c1", extra=None):
    d = {"ignition": {"config": {"append": [{"source": "https://api-int.%s.example.com:22623/config/worker" % cluster, "verification": {}}]},
                      "security": {"tls": {"certificateAuthorities": [{"source": CA, "verification": {}}]}},
                      "timeouts": {}, "version": "2.2.0"},
         "networkd": {}, "passwd": {}, "storage": {}, "systemd": {}}
    if extra:
        for k, v in extra.items():
            d[k] = v
    return json.dumps(d, separators=(",", ":"))


def stub21(cluster="c1", version="2.1.0"):
    """The installer stub in spec 2.1 (or 2.0): neither spec has a security
    section, and 2.0 has no timeouts."""
    ign = {"config": {"append": [{"source": "https://api-int.%s.example.com:22623/config/worker" % cluster, "verification": {}}]},
           "timeouts": {}, "version": version}
    if version == "2.0.0":
        del ign["timeouts"]
    return json.dumps({"ignition": ign, "networkd": {}, "passwd": {}, "storage": {}, "systemd": {}}, separators=(",", ":"))


def stub35_from_21(cluster="c1"):
    """What upstream makes of a spec 2.0 or 2.1 stub: no certificate authorities,
    since those specs cannot carry any."""
    return json.dumps({"ignition": {"config": {"merge": [{"source": "https://api-int.%s.example.com:22623/config/worker" % cluster}]},
                                    "version": "3.5.0"}}, separators=(",", ":"))


def stub35_expected(cluster="c1", passwd=None):
    d = {"ignition": {"config": {"merge": [{"source": "https://api-int.%s.example.com:22623/config/worker" % cluster}]},
                      "security": {"tls": {"certificateAuthorities": [{"source": CA}]}},
                      "version": "3.5.0"}}
    if passwd:
        d["passwd"] = passwd
    return json.dumps(d, separators=(",", ":"), ensure_ascii=False)


def stub3(version="3.2.0", cluster="c1"):
    return json.dumps({"ignition": {"config": {"merge": [{"source": "https://api-int.%s.example.com:22623/config/worker" % cluster}]},
                                    "security": {"tls": {"certificateAuthorities": [{"source": CA}]}},
                                    "version": version}}, separators=(",", ":"))


def b64(s):
    return base64.b64encode(s.encode()).decode()


# ---------------------------------------------------------------- object builders
def infra(ptype, azure_cloud=None):
    st = {"type": ptype}
    if ptype == "GCP":
        st["gcp"] = {"projectID": "openshift-c1", "region": "us-central1"}
    elif ptype == "AWS":
        st["aws"] = {"region": "us-east-1"}
    elif ptype == "Azure":
        st["azure"] = {"cloudName": azure_cloud or "AzurePublicCloud", "networkResourceGroupName": "c1-x7k2p-rg",
                       "resourceGroupName": "c1-x7k2p-rg"}
    elif ptype == "VSphere":
        st["vsphere"] = {}
    return {"apiVersion": "config.openshift.io/v1", "kind": "Infrastructure",
            "metadata": {"name": "cluster"},
            "spec": {"cloudConfig": {"name": ""}, "platformSpec": {"type": ptype}},
            "status": {"apiServerURL": "https://api.c1.example.com:6443", "controlPlaneTopology": "HighlyAvailable",
                       "infrastructureName": "c1-x7k2p", "infrastructureTopology": "HighlyAvailable",
                       "platform": ptype, "platformStatus": st}}


def configmap(stream_text):
    data = {"releaseVersion": "4.21.3"}
    if stream_text is not None:
        data["stream"] = stream_text
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "coreos-bootimages", "namespace": "openshift-machine-config-operator",
                         "annotations": {"include.release.openshift.io/ibm-cloud-managed": "true",
                                         "include.release.openshift.io/self-managed-high-availability": "true",
                                         "include.release.openshift.io/single-node-developer": "true"}},
            "data": data}


def std_stream_text(stream=None):
    """Compact JSON, one architecture per line: small, still diffable."""
    st = stream or STREAM
    c = lambda o: json.dumps(o, separators=(",", ":"))
    arches = ",\n".join("  %s:%s" % (c(k), c(v)) for k, v in st["architectures"].items())
    return '{"stream":%s,"metadata":%s,\n "architectures":{\n%s\n}}\n' % (c(st["stream"]), c(st["metadata"]), arches)


def secret(name, user_data):
    return {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
            "metadata": {"name": name, "namespace": "openshift-machine-api"},
            "data": {"disableTemplating": b64("true"), "userData": b64(user_data)}}


def clusterversion(state="Completed", arch=None):
    cv = {"apiVersion": "config.openshift.io/v1", "kind": "ClusterVersion", "metadata": {"name": "version"},
          "spec": {"channel": "stable-4.21", "clusterID": "5d2c7a8e-3f1b-4e6a-9c0d-2b7f8e1a4c63"},
          "status": {"desired": {"version": "4.21.3", "image": "quay.io/openshift-release-dev/ocp-release@sha256:9f2c1e0a"},
                     "history": [{"state": state, "version": "4.21.3", "image": "quay.io/openshift-release-dev/ocp-release@sha256:9f2c1e0a",
                                  "startedTime": "2026-05-01T10:00:00Z", "verified": True},
                                 {"state": "Completed", "version": "4.20.9", "image": "quay.io/openshift-release-dev/ocp-release@sha256:1a2b3c4d",
                                  "startedTime": "2026-03-01T10:00:00Z", "completionTime": "2026-03-01T11:00:00Z", "verified": True}]}}
    if state == "Completed":
        cv["status"]["history"][0]["completionTime"] = "2026-05-01T11:10:00Z"
    if arch:
        cv["status"]["desired"]["architecture"] = arch
    return cv


def machineconfiguration(selection):
    mm = [{"apiGroup": "machine.openshift.io", "resource": "machinesets", "selection": selection}]
    return {"apiVersion": "operator.openshift.io/v1", "kind": "MachineConfiguration",
            "metadata": {"name": "cluster", "generation": 3},
            "spec": {"logLevel": "Normal", "managementState": "Managed", "operatorLogLevel": "Normal",
                     "managedBootImages": {"machineManagers": mm}},
            "status": {"observedGeneration": 3, "managedBootImagesStatus": {"machineManagers": mm}}}


def machineset(name, provider_value, arch_annotation="kubernetes.io/arch=amd64", labels=None,
               template_labels=None, owner_refs=None, provider_present=True):
    meta = {"name": name, "namespace": "openshift-machine-api",
            "uid": "0b7c0e2a-1d4f-4a8e-9b3c-5e6f7a8b9c0d",
            "resourceVersion": "48213", "generation": 1,
            "labels": {"machine.openshift.io/cluster-api-cluster": "c1-x7k2p"}}
    if labels:
        meta["labels"].update(labels)
    if arch_annotation is not None:
        meta["annotations"] = {"capacity.cluster-autoscaler.kubernetes.io/labels": arch_annotation,
                               "machine.openshift.io/memoryMb": "16384", "machine.openshift.io/vCPU": "4"}
    if owner_refs:
        meta["ownerReferences"] = owner_refs
    tl = {"machine.openshift.io/cluster-api-cluster": "c1-x7k2p",
          "machine.openshift.io/cluster-api-machine-role": "worker",
          "machine.openshift.io/cluster-api-machine-type": "worker",
          "machine.openshift.io/cluster-api-machineset": name}
    if template_labels:
        tl.update(template_labels)
    tspec = {"lifecycleHooks": {}, "metadata": {}}
    if provider_present:
        tspec["providerSpec"] = {"value": provider_value}
    return {"apiVersion": "machine.openshift.io/v1beta1", "kind": "MachineSet", "metadata": meta,
            "spec": {"replicas": 1,
                     "selector": {"matchLabels": {"machine.openshift.io/cluster-api-cluster": "c1-x7k2p",
                                                  "machine.openshift.io/cluster-api-machineset": name}},
                     "template": {"metadata": {"labels": tl}, "spec": tspec}},
            "status": {"replicas": 1, "availableReplicas": 1, "readyReplicas": 1, "fullyLabeledReplicas": 1,
                       "observedGeneration": 1}}


def gcp_spec(disks, uds="worker-user-data"):
    v = {"apiVersion": "machine.openshift.io/v1beta1", "kind": "GCPMachineProviderSpec",
         "canIPForward": False, "credentialsSecret": {"name": "gcp-cloud-credentials"}, "deletionProtection": False,
         "disks": disks, "machineType": "n2-standard-4", "metadata": {"creationTimestamp": None},
         "networkInterfaces": [{"network": "c1-x7k2p-network", "subnetwork": "c1-x7k2p-worker-subnet"}],
         "projectID": "openshift-c1", "region": "us-central1",
         "serviceAccounts": [{"email": "c1-x7k2p-w@openshift-c1.iam.gserviceaccount.com",
                              "scopes": ["https://www.googleapis.com/auth/cloud-platform"]}],
         "tags": ["c1-x7k2p-worker"], "zone": "us-central1-a"}
    if uds is not None:
        v["userDataSecret"] = {"name": uds}
    return v


def boot_disk(image, **kw):
    d = {"autoDelete": True, "boot": True, "image": image, "sizeGb": 128, "type": "pd-ssd"}
    d.update(kw)
    return d


def data_disk(image):
    return {"autoDelete": True, "boot": False, "image": image, "sizeGb": 256, "type": "pd-standard"}


def aws_spec(ami, region="us-east-1", uds="worker-user-data"):
    v = {"apiVersion": "machine.openshift.io/v1beta1", "kind": "AWSMachineProviderConfig",
         "ami": ami,
         "blockDevices": [{"ebs": {"encrypted": True, "iops": 0, "kmsKey": {"arn": ""}, "volumeSize": 120, "volumeType": "gp3"}}],
         "credentialsSecret": {"name": "aws-cloud-credentials"}, "deviceIndex": 0,
         "iamInstanceProfile": {"id": "c1-x7k2p-worker-profile"}, "instanceType": "m6i.xlarge",
         "metadata": {"creationTimestamp": None}, "metadataServiceOptions": {},
         "placement": {"availabilityZone": region + "a", "region": region},
         "securityGroups": [{"filters": [{"name": "tag:Name", "values": ["c1-x7k2p-node"]}]}],
         "subnet": {"filters": [{"name": "tag:Name", "values": ["c1-x7k2p-subnet-private-%sa" % region]}]},
         "tags": [{"name": "kubernetes.io/cluster/c1-x7k2p", "value": "owned"}]}
    if uds is not None:
        v["userDataSecret"] = {"name": uds}
    return v


def azure_spec(image, security=None, uds="worker-user-data"):
    v = {"apiVersion": "machine.openshift.io/v1beta1", "kind": "AzureMachineProviderSpec",
         "acceleratedNetworking": True, "credentialsSecret": {"name": "azure-cloud-credentials", "namespace": "openshift-machine-api"},
         "image": image, "kind": "AzureMachineProviderSpec", "location": "eastus", "managedIdentity": "c1-x7k2p-identity",
         "metadata": {"creationTimestamp": None}, "networkResourceGroup": "c1-x7k2p-rg",
         "osDisk": {"diskSettings": {}, "diskSizeGB": 128, "managedDisk": {"storageAccountType": "Premium_LRS"}, "osType": "Linux"},
         "publicIP": False, "resourceGroup": "c1-x7k2p-rg", "subnet": "c1-x7k2p-worker-subnet",
         "vmSize": "Standard_D4s_v3", "vnet": "c1-x7k2p-vnet", "zone": "1"}
    if security is not None:
        v["securityProfile"] = security
    if uds is not None:
        v["userDataSecret"] = {"name": uds}
    return v


def az_image(p="", o="", s="", v="", rid="", t=""):
    return {"offer": o, "publisher": p, "resourceID": rid, "sku": s, "type": t, "version": v}


# ---------------------------------------------------------------- expectations
def provider_patch(fragment):
    return {"spec": {"template": {"spec": {"providerSpec": {"value": fragment}}}}}


def exp_patch(target, fragment, uds=None):
    return {"action": "patch", "target": target, "patch": provider_patch(fragment), "userDataSecret": uds}


# The time a stub upgrade is stamped with (`--now`; the case's now.txt).
NOW = "2026-12-01T09:30:00Z"


def exp_uds(name, text):
    return {"name": name, "data": {"userData": b64(text)},
            "annotations": {"machineconfiguration.openshift.io/stub-ignition-upgraded-at": NOW,
                            "machineconfiguration.openshift.io/stub-ignition-upgraded-to": "3.5.0"}}


def on_target(ms, target):
    return {"action": "noop", "reason": "No patching required for MAPI machineset %s: boot image is already %s" % (ms, target)}


def p_noop(ms, reason):
    return {"action": "noop", "reason": "machineset %s: %s" % (ms, reason)}


def p_skip(ms, reason):
    return {"action": "skip", "reason": "%s, skipping boot image update of machineset %s" % (reason, ms)}


def p_err(ms, detail):
    return {"action": "error", "message": "failed to reconcile machineset %s, err: %s" % (ms, detail)}


def gcp_unknown(image, i=0):
    return 'current boot image "%s" of disk %d is unknown (not a published RHCOS image under projects/rhcos-cloud/global/images)' % (image, i)


CASES = []


def case(name, expected, *, ms, infra_obj, cm=None, cv=None, mc=None, secret_obj=None, known=None, fg=None,
         vcenter=None, install=None, ec2=None, note=None):
    CASES.append(dict(name=name, expected=expected, ms=ms, infra=infra_obj,
                      cm=cm if cm is not None else configmap(std_stream_text()),
                      cv=cv, mc=mc, secret=secret_obj, known=known, fg=fg, vcenter=vcenter, install=install,
                      ec2=ec2, note=note))


GCP = infra("GCP")
AWS = infra("AWS")
AZ = infra("Azure")
UDS = "worker-user-data"

# ---------------------------------------------------------------- GCP
n = "c1-x7k2p-worker-a"
disks = [boot_disk(GCP_OLD), data_disk("projects/openshift-c1/global/images/scratch-data")]
new_disks = copy.deepcopy(disks)
new_disks[0]["image"] = GCP_NEW
case("gcp-patch-boot-disk-only", exp_patch(GCP_NEW, {"disks": new_disks}),
     ms=machineset(n, gcp_spec(disks)), infra_obj=GCP,
     note="Old RHCOS boot disk is moved to the stream image; the data disk keeps its image, and the patch carries the whole disks array.")

case("gcp-noop-on-target", on_target(n, GCP_NEW),
     ms=machineset(n, gcp_spec([boot_disk(GCP_NEW), data_disk(GCP_OLD)])), infra_obj=GCP)

mk = "projects/redhat-marketplace-public/global/images/redhat-coreos-ocp-413-x86-64-202305021736"
case("gcp-skip-marketplace-image", p_skip(n, gcp_unknown(mk)),
     ms=machineset(n, gcp_spec([boot_disk(mk)])), infra_obj=GCP)

custom = "projects/openshift-c1/global/images/hardened-rhcos"
case("gcp-skip-one-custom-boot-disk", p_skip(n, gcp_unknown(custom, 1)),
     ms=machineset(n, gcp_spec([boot_disk(GCP_OLD), boot_disk(custom, sizeGb=64)])), infra_obj=GCP,
     note="All-or-nothing: one boot disk on a custom image leaves the whole MachineSet alone.")

d3 = [boot_disk(GCP_OLD), boot_disk(GCP_NEW, sizeGb=64), data_disk(GCP_OLD)]
nd3 = copy.deepcopy(d3)
nd3[0]["image"] = GCP_NEW
case("gcp-patch-two-boot-disks", exp_patch(GCP_NEW, {"disks": nd3}),
     ms=machineset(n, gcp_spec(d3)), infra_obj=GCP)

na = "c1-x7k2p-worker-arm-a"
da = [boot_disk(GCP_OLD_ARM)]
nda = [boot_disk(GCP_NEW_ARM)]
case("gcp-patch-arm64", exp_patch(GCP_NEW_ARM, {"disks": nda}),
     ms=machineset(na, gcp_spec(da), arch_annotation="kubernetes.io/arch=arm64"), infra_obj=GCP)

ns = "c1-x7k2p-worker-s390x"
case("gcp-error-s390x-no-gcp-image",
     p_err(ns, "stream:rhcos-4.21 architecture 's390x' has no GCP image (images.gcp is missing or incomplete)"),
     ms=machineset(ns, gcp_spec([boot_disk(GCP_OLD)]), arch_annotation="kubernetes.io/arch=s390x"), infra_obj=GCP)

mirror = "projects/openshift-c1/global/images/rhcos-418-94-202511191518-0-gcp-x86-64-copy"
case("gcp-patch-known-image", exp_patch(GCP_NEW, {"disks": [boot_disk(GCP_NEW)]}),
     ms=machineset(n, gcp_spec([boot_disk(mirror)])), infra_obj=GCP, known=mirror + "\n",
     note="An image outside rhcos-cloud that the known-images list names counts as published RHCOS.")

case("gcp-error-disks-wrong-type",
     p_err(n, "providerSpec.value.disks must be an array, got an object"),
     ms=machineset(n, gcp_spec(boot_disk(GCP_OLD))), infra_obj=GCP)

case("gcp-error-boot-wrong-type",
     p_err(n, "providerSpec.value.disks[0].boot must be a boolean, got a string"),
     ms=machineset(n, gcp_spec([boot_disk(GCP_OLD, boot="true")])), infra_obj=GCP)

case("gcp-noop-no-boot-disk", p_noop(n, "providerSpec.value.disks has no boot disk to update"),
     ms=machineset(n, gcp_spec([data_disk(GCP_OLD)])), infra_obj=GCP)

case("gcp-patch-stub-v2-converted",
     exp_patch(GCP_NEW, {"disks": [boot_disk(GCP_NEW)]}, exp_uds(UDS, stub35_expected())),
     ms=machineset(n, gcp_spec([boot_disk(GCP_OLD)])), infra_obj=GCP, secret_obj=secret(UDS, stub22()),
     note="A spec 2.2 installer stub is converted to spec 3.5.0 together with the patch.")

case("gcp-patch-stub-v20-converted",
     exp_patch(GCP_NEW, {"disks": [boot_disk(GCP_NEW)]}, exp_uds(UDS, stub35_from_21())),
     ms=machineset(n, gcp_spec([boot_disk(GCP_OLD)])), infra_obj=GCP, secret_obj=secret(UDS, stub21(version="2.0.0")),
     note="A spec 2.0 stub is read through Ignition's 2.0 and 2.1 types, as upstream's spec 2.2 parser reads it, and converted to 3.5.0.")

garbage21 = json.loads(stub21())
garbage21["storage"] = {"files": "not-a-list"}
case("gcp-error-stub-v21-garbage",
     p_err(n, 'converting ignition stub failed: failed to parse Ignition config: parsing Ignition spec v2 failed with error: invalid type: string "not-a-list", expected a sequence'),
     ms=machineset(n, gcp_spec([boot_disk(GCP_OLD)])), infra_obj=GCP, secret_obj=secret(UDS, json.dumps(garbage21, separators=(",", ":"))))

case("gcp-patch-stub-v3-untouched", exp_patch(GCP_NEW, {"disks": [boot_disk(GCP_NEW)]}),
     ms=machineset(n, gcp_spec([boot_disk(GCP_OLD)])), infra_obj=GCP, secret_obj=secret(UDS, stub3("3.2.0")))

case("gcp-noop-on-target-stub-v2-ignored", on_target(n, GCP_NEW),
     ms=machineset(n, gcp_spec([boot_disk(GCP_NEW)])), infra_obj=GCP, secret_obj=secret(UDS, stub22()),
     note="The stub is only upgraded when a patch is needed.")

bad_stub = stub22(extra={"passwd": {"users": [{"name": "core", "sshAuthorizedKeys": ["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB3 admin@example.com"]},
                                              {"name": "ops", "sshAuthorizedKeys": ["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIC4 ops@example.com"]}]}})
case("gcp-error-stub-unconvertible-user",
     p_err(n, "converting ignition stub failed: unexpected user with name: ops. Only core user is supported"),
     ms=machineset(n, gcp_spec([boot_disk(GCP_OLD)])), infra_obj=GCP, secret_obj=secret(UDS, bad_stub),
     note="Unconvertible stub: error, and no patch.")

case("gcp-error-malformed-stream",
     p_err(n, "failed to parse CoreOS stream metadata: key must be a string at line 1 column 3"),
     ms=machineset(n, gcp_spec([boot_disk(GCP_OLD)])), infra_obj=GCP,
     cm=configmap('{ architectures: {"x86_64": {}} }'))

case("gcp-error-empty-stream-object",
     p_err(n, "stream: does not have architecture 'x86_64'"),
     ms=machineset(n, gcp_spec([boot_disk(GCP_OLD)])), infra_obj=GCP, cm=configmap("{}"))

case("gcp-error-empty-stream-text",
     p_err(n, "failed to parse CoreOS stream metadata: the stream is empty"),
     ms=machineset(n, gcp_spec([boot_disk(GCP_OLD)])), infra_obj=GCP, cm=configmap(""))

case("gcp-error-stream-key-missing",
     p_err(n, "the coreos-bootimages ConfigMap has no data.stream key with CoreOS stream metadata"),
     ms=machineset(n, gcp_spec([boot_disk(GCP_OLD)])), infra_obj=GCP, cm=configmap(None))

case("gcp-error-stream-wrong-shape",
     p_err(n, "failed to parse CoreOS stream metadata: invalid type: sequence, expected a map at line 1 column 18"),
     ms=machineset(n, gcp_spec([boot_disk(GCP_OLD)])), infra_obj=GCP, cm=configmap('{"architectures": []}'))

case("gcp-skip-owner-references",
     {"action": "skip", "reason": "machineset %s has OwnerReference: MachinePool/c1-worker, skipping boot image update" % n},
     ms=machineset(n, gcp_spec([boot_disk(GCP_OLD)]),
                   owner_refs=[{"apiVersion": "hive.openshift.io/v1", "kind": "MachinePool", "name": "c1-worker",
                                "uid": "3f9a1c2e-7b4d-4e8f-a6c5-1d2e3f4a5b6c", "controller": True}]),
     infra_obj=GCP, cm=configmap("{ broken"),
     note="Owner references win over everything else, even a broken stream.")

case("gcp-noop-windows",
     {"action": "noop", "reason": "machineset c1-x7k2p-windows-a is a Windows MachineSet; boot image updates do not apply"},
     ms=machineset("c1-x7k2p-windows-a", gcp_spec([boot_disk("projects/windows-cloud/global/images/windows-server-2022-dc-core-v20260410")]),
                   template_labels={"machine.openshift.io/os-id": "Windows"}),
     infra_obj=GCP)

case("gcp-noop-osstream-rhel-10",
     {"action": "noop", "reason": 'machineset %s uses OS stream "rhel-10"; boot image updates only manage the rhel-9 stream' % n},
     ms=machineset(n, gcp_spec([boot_disk(GCP_OLD)]), labels={"machineconfiguration.openshift.io/osstream": "rhel-10"}),
     infra_obj=GCP)

case("gcp-patch-osstream-rhel-9", exp_patch(GCP_NEW, {"disks": [boot_disk(GCP_NEW)]}),
     ms=machineset(n, gcp_spec([boot_disk(GCP_OLD)]), labels={"machineconfiguration.openshift.io/osstream": "rhel-9"}),
     infra_obj=GCP)

case("gcp-skip-multi-arch-no-annotation",
     {"action": "skip", "reason": "no architecture annotation found on machineset %s, skipping boot image update until the MachineSet is annotated with its architecture" % n},
     ms=machineset(n, gcp_spec([boot_disk(GCP_OLD)]), arch_annotation=None), infra_obj=GCP,
     cv=clusterversion(arch="Multi"))

case("gcp-patch-multi-arch-annotated", exp_patch(GCP_NEW_ARM, {"disks": nda}),
     ms=machineset(na, gcp_spec(da), arch_annotation="kubernetes.io/arch=arm64"), infra_obj=GCP,
     cv=clusterversion(arch="Multi"))

case("gcp-patch-no-annotation-control-plane-arch", exp_patch(GCP_NEW, {"disks": [boot_disk(GCP_NEW)]}),
     ms=machineset(n, gcp_spec([boot_disk(GCP_OLD)]), arch_annotation=None), infra_obj=GCP, cv=clusterversion(),
     note="Single-arch cluster: no annotation means the control-plane arch (amd64 in tests).")

case("gcp-error-arch-invalid-value",
     p_err(n, "failed to determine architecture: invalid architecture value found in annotation: x86_64"),
     ms=machineset(n, gcp_spec([boot_disk(GCP_OLD)]), arch_annotation="kubernetes.io/arch=x86_64"), infra_obj=GCP)

case("gcp-error-arch-label-missing",
     p_err(n, "failed to determine architecture: kubernetes.io/arch label not found in annotation: topology.gke.io/zone=us-central1-a"),
     ms=machineset(n, gcp_spec([boot_disk(GCP_OLD)]), arch_annotation="topology.gke.io/zone=us-central1-a"), infra_obj=GCP)

case("gcp-patch-arch-annotation-spaces", exp_patch(GCP_NEW_ARM, {"disks": nda}),
     ms=machineset(na, gcp_spec(da), arch_annotation=" topology.gke.io/zone=us-central1-a ,  kubernetes.io/arch=arm64 , node.kubernetes.io/instance-type=t2a-standard-4"),
     infra_obj=GCP)

case("gcp-error-providerspec-missing", p_err(n, "providerSpec field was empty"),
     ms=machineset(n, None, provider_present=False), infra_obj=GCP)

case("gcp-error-no-user-data-secret",
     p_err(n, "error grabbing user data secret referenced in machineset: providerSpec.value.userDataSecret.name is not set"),
     ms=machineset(n, gcp_spec([boot_disk(GCP_OLD)], uds=None)), infra_obj=GCP)

# ---------------------------------------------------------------- AWS
m = "c1-x7k2p-worker-us-east-1a"
aws_patch = lambda t: {"ami": {"id": t, "arn": None, "filters": None}}
case("aws-patch-known-ami", exp_patch(AMI_E1, aws_patch(AMI_E1)),
     ms=machineset(m, aws_spec({"id": AMI_OLD})), infra_obj=AWS, known=KNOWN,
     note="The current AMI is an older RHCOS AMI named in known-images.txt.")

case("aws-noop-on-target", on_target(m, AMI_E1),
     ms=machineset(m, aws_spec({"id": AMI_E1})), infra_obj=AWS, known=KNOWN)

case("aws-skip-unknown-ami",
     p_skip(m, 'current AMI "ami-0badc0ffee0ddf00d" is unknown (not a published RHCOS AMI)'),
     ms=machineset(m, aws_spec({"id": "ami-0badc0ffee0ddf00d"})), infra_obj=AWS, known=KNOWN)

case("aws-skip-ami-by-arn",
     p_skip(m, "providerSpec.value.ami has no id (the AMI is given by ARN or filters)"),
     ms=machineset(m, aws_spec({"arn": "arn:aws:ec2:us-east-1::image/ami-0c5a8e7f3b2d1e4f6"})), infra_obj=AWS, known=KNOWN)

case("aws-skip-ami-by-filters",
     p_skip(m, "providerSpec.value.ami has no id (the AMI is given by ARN or filters)"),
     ms=machineset(m, aws_spec({"filters": [{"name": "name", "values": ["rhcos-418.94.*-x86_64"]}]})), infra_obj=AWS, known=KNOWN)

m2 = "c1-x7k2p-worker-ap-south-2a"
case("aws-skip-region-not-in-stream",
     p_skip(m2, 'failed to get AMI for region "ap-south-2": rhcos-4.21/x86_64: No AWS images in region ap-south-2'),
     ms=machineset(m2, aws_spec({"id": AMI_OLD}, region="ap-south-2")), infra_obj=AWS, known=KNOWN)

m3 = "c1-x7k2p-worker-us-east-2a"
case("aws-patch-stream-ami-of-other-region", exp_patch(AMI_E2, aws_patch(AMI_E2)),
     ms=machineset(m3, aws_spec({"id": AMI_E1}, region="us-east-2")), infra_obj=AWS,
     note="An AMI the stream lists for another region is a published RHCOS AMI; no known-images file needed.")

ma = "c1-x7k2p-worker-arm-us-east-1a"
case("aws-patch-arm64", exp_patch(AMI_ARM, aws_patch(AMI_ARM)),
     ms=machineset(ma, aws_spec({"id": AMI_OLD_ARM}), arch_annotation="kubernetes.io/arch=arm64,topology.ebs.csi.aws.com/zone=us-east-1a"),
     infra_obj=AWS, known=KNOWN)

mp = "c1-x7k2p-worker-ppc64le"
case("aws-skip-ppc64le-no-aws-images",
     p_skip(mp, 'failed to get AMI for region "us-east-1": rhcos-4.21/ppc64le: No AWS images'),
     ms=machineset(mp, aws_spec({"id": AMI_OLD}), arch_annotation="kubernetes.io/arch=ppc64le"), infra_obj=AWS, known=KNOWN)

case("aws-error-ami-wrong-type",
     p_err(m, "providerSpec.value.ami must be an object, got a string"),
     ms=machineset(m, aws_spec(AMI_OLD)), infra_obj=AWS, known=KNOWN)

bad_region = aws_spec({"id": AMI_OLD})
bad_region["placement"]["region"] = 42
case("aws-error-region-wrong-type",
     p_err(m, "providerSpec.value.placement.region must be a string, got a number"),
     ms=machineset(m, bad_region), infra_obj=AWS, known=KNOWN)

core_keys = {"passwd": {"users": [{"name": "core", "sshAuthorizedKeys": ["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB3 admin@example.com"]}]}}
case("aws-patch-stub-v2-converted",
     exp_patch(AMI_E1, aws_patch(AMI_E1),
               exp_uds(UDS, stub35_expected("c2", passwd={"users": [{"name": "core", "sshAuthorizedKeys": ["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB3 admin@example.com"]}]}))),
     ms=machineset(m, aws_spec({"id": AMI_OLD})), infra_obj=AWS, known=KNOWN,
     secret_obj=secret(UDS, stub22("c2", extra=core_keys)))

case("aws-error-stub-networkd",
     p_err(m, "converting ignition stub failed: failed to convert Ignition config spec v2 to v3: unable to convert Ignition spec v2 config to v3: config includes a networkd section, which Ignition spec 3 does not support"),
     ms=machineset(m, aws_spec({"id": AMI_OLD})), infra_obj=AWS, known=KNOWN,
     secret_obj=secret(UDS, stub22(extra={"networkd": {"units": [{"name": "10-eth0.network", "contents": "[Match]\nName=eth0\n"}]}})))

old23 = json.loads(stub22())
old23["ignition"]["version"] = "2.3.0"
case("aws-error-stub-unknown-version",
     p_err(m, "converting ignition stub failed: failed to parse Ignition config: parsing Ignition config failed: unknown version. Supported spec versions: 2.2, 3.0, 3.1, 3.2, 3.3, 3.4, 3.5"),
     ms=machineset(m, aws_spec({"id": AMI_OLD})), infra_obj=AWS, known=KNOWN,
     secret_obj=secret(UDS, json.dumps(old23, separators=(",", ":"))),
     note="Upstream's spec 2 parser reads 2.0, 2.1 and 2.2; a 2.3 stub is of an unknown version.")

case("aws-patch-stub-v21-converted",
     exp_patch(AMI_E1, aws_patch(AMI_E1), exp_uds(UDS, stub35_from_21())),
     ms=machineset(m, aws_spec({"id": AMI_OLD})), infra_obj=AWS, known=KNOWN,
     secret_obj=secret(UDS, stub21()),
     note="A spec 2.1 stub is read as upstream's spec 2.2 parser reads it (through Ignition's 2.1 types) and converted to 3.5.0.")

bad20 = json.loads(stub21(version="2.0.0"))
bad20["ignition"]["config"]["append"][0]["verification"] = {"hash": "sha512"}
case("aws-error-stub-v20-hash-malformed",
     p_err(m, 'converting ignition stub failed: failed to parse Ignition config: parsing Ignition spec v2 failed with error: hash is malformed: "sha512"'),
     ms=machineset(m, aws_spec({"id": AMI_OLD})), infra_obj=AWS, known=KNOWN,
     secret_obj=secret(UDS, json.dumps(bad20, separators=(",", ":"))),
     note="Ignition's spec 2.0 types refuse a hash without a function prefix.")

case("aws-error-ami-id-empty",
     p_err(m2, "providerSpec.value.ami.id is empty; EC2 refuses an empty AMI ID"),
     ms=machineset(m2, aws_spec({"id": ""}, region="ap-south-2")), infra_obj=AWS, known=KNOWN,
     note="An id that is present but empty is not an absent one: upstream asks EC2 about it (which refuses it) "
          "before it looks for the region, which this stream lacks.")

case("aws-error-stub-not-json",
     p_err(m, "converting ignition stub failed: failed to unmarshal decoded user-data to json: expected value at line 1 column 1"),
     ms=machineset(m, aws_spec({"id": AMI_OLD})), infra_obj=AWS, known=KNOWN,
     secret_obj=secret(UDS, "#cloud-config\nruncmd: []\n"))

case("aws-skip-empty-stream",
     p_skip(m, 'failed to get AMI for region "us-east-1": stream: does not have architecture \'x86_64\''),
     ms=machineset(m, aws_spec({"id": AMI_OLD})), infra_obj=AWS, known=KNOWN, cm=configmap("{}"),
     note="AWS treats missing stream data as a skip (upstream GetAwsRegionImage), unlike GCP.")

case("aws-error-malformed-stream",
     p_err(m, "failed to parse CoreOS stream metadata: EOF while parsing an object at line 3 column 0"),
     ms=machineset(m, aws_spec({"id": AMI_OLD})), infra_obj=AWS, known=KNOWN,
     cm=configmap('{"stream": "rhcos-4.21",\n  "architectures": {"x86_64": {"images": {"aws": {"regions": {}}}}\n'))

# ---------------------------------------------------------------- Azure
z = "c1-x7k2p-worker-eastus1"
NOPLAN_G2 = {"publisher": "azureopenshift", "offer": "aro4", "sku": "420-v2", "version": NOPLAN_VER, "resourceID": "", "type": "MarketplaceNoPlan"}
NOPLAN_G1 = {"publisher": "azureopenshift", "offer": "aro4", "sku": "aro_420", "version": NOPLAN_VER, "resourceID": "", "type": "MarketplaceNoPlan"}
urn = lambda i: "%s:%s:%s:%s" % (i["publisher"], i["offer"], i["sku"], i["version"])

case("azure-patch-legacy-gen2-resourceid", exp_patch(urn(NOPLAN_G2), {"image": NOPLAN_G2}),
     ms=machineset(z, azure_spec(az_image(rid="/resourceGroups/c1-x7k2p-rg/providers/Microsoft.Compute/galleries/gallery_c1_x7k2p/images/c1-x7k2p-gen2/versions/latest"))),
     infra_obj=AZ, note="Images uploaded at install time (resourceID) always migrate to the free marketplace image of the same Hyper-V generation.")

case("azure-patch-legacy-gen1", exp_patch(urn(NOPLAN_G1), {"image": NOPLAN_G1}),
     ms=machineset(z, azure_spec(az_image(rid="/resourceGroups/c1-x7k2p-rg/providers/Microsoft.Compute/galleries/gallery_c1_x7k2p/images/c1-x7k2p/versions/latest"))),
     infra_obj=AZ)

OCP_G2 = {"publisher": "redhat", "offer": "rh-ocp-worker", "sku": "rh-ocp-worker", "version": MP_VER, "resourceID": "", "type": "MarketplaceWithPlan"}
OCP_G1 = dict(OCP_G2, sku="rh-ocp-worker-gen1")
case("azure-patch-ocp-paid-gen2", exp_patch(urn(OCP_G2), {"image": OCP_G2}),
     ms=machineset(z, azure_spec(az_image("redhat", "rh-ocp-worker", "rh-ocp-worker", "4.16.2024101515", t="MarketplaceWithPlan"))),
     infra_obj=AZ, secret_obj=secret(UDS, stub3("3.4.0")))

case("azure-patch-ocp-paid-gen1", exp_patch(urn(OCP_G1), {"image": OCP_G1}),
     ms=machineset(z, azure_spec(az_image("redhat", "rh-ocp-worker", "rh-ocp-worker-gen1", "4.16.2024101515", t="MarketplaceWithPlan"))),
     infra_obj=AZ)

OCP_EMEA_G2 = dict(OCP_G2, publisher="redhat-limited")
case("azure-patch-ocp-emea", exp_patch(urn(OCP_EMEA_G2), {"image": OCP_EMEA_G2}),
     ms=machineset(z, azure_spec(az_image("redhat-limited", "rh-ocp-worker", "rh-ocp-worker", "4.16.2024101515", t="MarketplaceWithPlan"))),
     infra_obj=AZ)

case("azure-patch-noplan-empty-type-quirk", exp_patch(urn(NOPLAN_G2), {"image": NOPLAN_G2}),
     ms=machineset(z, azure_spec(az_image("azureopenshift", "aro4", "aro_419", "9.4.20240710", t=""))),
     infra_obj=AZ, note="Upstream quirk: a free image with an empty type takes the paid generation rule, so sku aro_419 counts as Gen2.")

case("azure-patch-noplan-gen1-typed", exp_patch(urn(NOPLAN_G1), {"image": NOPLAN_G1}),
     ms=machineset(z, azure_spec(az_image("azureopenshift", "aro4", "aro_419", "9.4.20240710", t="MarketplaceNoPlan"))),
     infra_obj=AZ)

case("azure-noop-on-target", on_target(z, urn(NOPLAN_G2)),
     ms=machineset(z, azure_spec(dict(NOPLAN_G2))), infra_obj=AZ)

case("azure-skip-security-type",
     p_skip(z, 'securityProfile.settings.securityType is "TrustedLaunch"; Confidential VM and Trusted Launch MachineSets keep their boot image'),
     ms=machineset(z, azure_spec(az_image("redhat", "rh-ocp-worker", "rh-ocp-worker", "4.16.2024101515", t="MarketplaceWithPlan"),
                                 security={"settings": {"securityType": "TrustedLaunch", "trustedLaunch": {"uefiSettings": {"secureBoot": "Enabled", "virtualizedTrustedPlatformModule": "Enabled"}}}})),
     infra_obj=AZ,
     note="A skip since upstream PR #6404 (a noop before): it counts among the skipped and resets the boot image skew record.")

zp = "c1-x7k2p-worker-ppc64le"
case("azure-noop-ppc64le", p_noop(zp, "Azure boot image updates are not supported for architecture ppc64le"),
     ms=machineset(zp, azure_spec(az_image("azureopenshift", "aro4", "aro_419", "9.4.20240710", t="MarketplaceNoPlan")),
                   arch_annotation="kubernetes.io/arch=ppc64le"), infra_obj=AZ)

case("azure-error-unknown-publisher",
     p_err(z, 'could not determine azure marketplace variant, cannot update boot images (image publisher "contoso", offer "hardened-rhcos")'),
     ms=machineset(z, azure_spec(az_image("contoso", "hardened-rhcos", "gen2", "1.0.0", t="MarketplaceWithPlan"))), infra_obj=AZ)

okd = copy.deepcopy(STREAM)
del okd["architectures"]["x86_64"]["rhel-coreos-extensions"]
okd["stream"] = "okd-scos-4.21"
okd["architectures"]["x86_64"]["rhel-coreos-extensions"] = {"azure-disk": {"release": REL, "url": "https://rhcos.blob.core.windows.net/imagebucket/scos-9.0.20260428-0-azure.x86_64.vhd"}}
case("azure-skip-no-marketplace",
     p_skip(z, "the stream has no Azure marketplace images for architecture x86_64"),
     ms=machineset(z, azure_spec(az_image("azureopenshift", "aro4", "aro_419", "9.4.20240710", t="MarketplaceNoPlan"))),
     infra_obj=AZ, cm=configmap(std_stream_text(okd)), note="OKD-like stream without marketplace data.")

case("azure-error-variant-missing-in-stream",
     p_err(z, "the stream has no Azure marketplace images for variant opp-emea on architecture x86_64"),
     ms=machineset(z, azure_spec(az_image("redhat-limited", "rh-opp-worker", "rh-opp-worker", "4.16.2024101515", t="MarketplaceWithPlan"))),
     infra_obj=AZ)

za = "c1-x7k2p-worker-arm-eastus1"
ARM_G2 = {"publisher": "azureopenshift", "offer": "aro4", "sku": "420-arm", "version": NOPLAN_VER, "resourceID": "", "type": "MarketplaceNoPlan"}
case("azure-patch-arm64", exp_patch(urn(ARM_G2), {"image": ARM_G2}),
     ms=machineset(za, azure_spec(az_image("azureopenshift", "aro4", "419-arm", "9.4.20240710", t="MarketplaceNoPlan")),
                   arch_annotation="kubernetes.io/arch=arm64"), infra_obj=AZ)

case("azure-skip-arm64-gen1-missing",
     p_skip(za, "the stream has no hyperVGen1 image for Azure marketplace variant no-purchase-plan on architecture aarch64"),
     ms=machineset(za, azure_spec(az_image(rid="/resourceGroups/c1-x7k2p-rg/providers/Microsoft.Compute/images/c1-x7k2p-arm")),
                   arch_annotation="kubernetes.io/arch=arm64"), infra_obj=AZ,
     note="A missing Gen1 image is a skip since upstream PR #6404 (an error before): Gen1 images are leaving the stream.")

# The rhel-10 marketplace names its free SKUs "..._gen2" and has no Gen1 images.
NOPLAN10_VER = "10.2.20260428"
NOPLAN10_G2 = {"publisher": "azureopenshift", "offer": "aro4", "sku": "aro_5-0_x64_gen2", "version": NOPLAN10_VER, "resourceID": "", "type": "MarketplaceNoPlan"}
rhel10 = copy.deepcopy(STREAM)
rhel10["stream"] = "rhel-10.2"
rhel10["architectures"]["x86_64"]["rhel-coreos-extensions"]["marketplace"]["azure"]["no-purchase-plan"] = {
    "hyperVGen2": {k: NOPLAN10_G2[k] for k in ("publisher", "offer", "sku", "version")}}
case("azure-patch-noplan-rhel10-gen2-sku", exp_patch(urn(NOPLAN10_G2), {"image": NOPLAN10_G2}),
     ms=machineset(z, azure_spec(az_image("azureopenshift", "aro4", "aro_5-0_x64_gen2", "10.1.20260115", t="MarketplaceNoPlan"))),
     infra_obj=AZ, cm=configmap(std_stream_text(rhel10)),
     note="A free SKU that says gen2 rather than v2 is Gen2 (upstream PR #6404); read as Gen1 it would never converge.")

case("azure-skip-noplan-gen1-missing-rhel10",
     p_skip(z, "the stream has no hyperVGen1 image for Azure marketplace variant no-purchase-plan on architecture x86_64"),
     ms=machineset(z, azure_spec(az_image("azureopenshift", "aro4", "aro_419", "9.4.20240710", t="MarketplaceNoPlan"))),
     infra_obj=AZ, cm=configmap(std_stream_text(rhel10)))

no_arm = copy.deepcopy(STREAM)
del no_arm["architectures"]["aarch64"]
case("azure-error-arch-not-in-stream",
     p_err(za, "stream:rhcos-4.21 does not have architecture 'aarch64'"),
     ms=machineset(za, azure_spec(az_image("azureopenshift", "aro4", "419-arm", "9.4.20240710", t="MarketplaceNoPlan")),
                   arch_annotation="kubernetes.io/arch=arm64"), infra_obj=AZ, cm=configmap(std_stream_text(no_arm)),
     note="Upstream's GetArchitecture fails; only a stream without marketplace data for the arch (OKD) is a skip.")

case("azure-error-image-wrong-type",
     p_err(z, "providerSpec.value.image.sku must be a string, got a number"),
     ms=machineset(z, azure_spec(az_image("redhat", "rh-ocp-worker", 420, "4.16.2024101515", t="MarketplaceWithPlan"))), infra_obj=AZ)

case("azure-patch-stub-v2-converted",
     exp_patch(urn(NOPLAN_G2), {"image": NOPLAN_G2}, exp_uds("worker-user-data-x7k2p", stub35_expected("c3"))),
     ms=machineset(z, azure_spec(az_image(rid="/resourceGroups/c1-x7k2p-rg/providers/Microsoft.Compute/galleries/gallery_c1_x7k2p/images/c1-x7k2p-gen2/versions/latest"),
                                 uds="worker-user-data-x7k2p")),
     infra_obj=AZ, secret_obj=secret("worker-user-data-x7k2p", stub22("c3")))

with_ca21 = json.loads(stub22("c3"))
with_ca21["ignition"]["version"] = "2.1.0"
case("azure-patch-stub-v21-security-dropped",
     exp_patch(urn(NOPLAN_G2), {"image": NOPLAN_G2}, exp_uds("worker-user-data-x7k2p", stub35_from_21("c3"))),
     ms=machineset(z, azure_spec(az_image(rid="/resourceGroups/c1-x7k2p-rg/providers/Microsoft.Compute/galleries/gallery_c1_x7k2p/images/c1-x7k2p-gen2/versions/latest"),
                                 uds="worker-user-data-x7k2p")),
     infra_obj=AZ, secret_obj=secret("worker-user-data-x7k2p", json.dumps(with_ca21, separators=(",", ":"))),
     note="Spec 2.1 has no security section: upstream's parser drops it, so the 3.5.0 stub has no certificate authorities either.")

case("azurestack-noop-unsupported",
     {"action": "noop", "reason": 'platform "Azure (AzureStackCloud)" does not support boot image updates; nothing to do for machineset %s' % z},
     ms=machineset(z, azure_spec(az_image(rid="/resourceGroups/c1-x7k2p-rg/providers/Microsoft.Compute/images/c1-x7k2p"))),
     infra_obj=infra("Azure", azure_cloud="AzureStackCloud"))

# ---------------------------------------------------------------- vSphere (§7.4, §22, §23)
v = "c1-x7k2p-worker-0"
VS_SERVER = "vcenter.example.com"
VS_FOLDER = "/dc1/vm/c1-x7k2p"
VS_POOL = "/dc1/host/cl1/Resources"
VS_DS = "/dc1/datastore/ds1"
VS_INSTALLED = "c1-x7k2p-rhcos-generated-region-generated-zone"   # the installer's template
VS_MANAGED = "c1-x7k2p-rhcos-generated-failure-domain"             # <infrastructureName>-rhcos-<failure domain>
VS_OLD = "9.6.20250701-0"
OVA = {"url": BASE + "/x86_64/rhcos-9.8.20260428-0-vmware.x86_64.ova",
       "sha256": "29dcca5f196f09104e68bdae7f7706dee6bb84e9a1de4515a04ed9b8f288ce3c"}


def fd(name, pool=VS_POOL, server=VS_SERVER, dc="dc1", ds=VS_DS, vm_group=None):
    d = {"name": name, "region": "generated-region", "zone": "generated-zone", "server": server,
         "topology": {"datacenter": dc, "computeCluster": pool.rsplit("/", 1)[0], "networks": ["VM Network"],
                      "datastore": ds, "resourcePool": pool, "folder": VS_FOLDER,
                      "template": "/%s/vm/%s" % (dc, VS_INSTALLED)}}
    if vm_group:
        d["zoneAffinity"] = {"type": "HostGroup", "hostGroup": {"vmGroup": vm_group, "hostGroup": "hg", "vmHostRule": "r"}}
    return d


def vsphere_infra(failure_domains=None, platform_spec=True, vcenters=None):
    i = infra("VSphere")
    if platform_spec:
        i["spec"]["platformSpec"]["vsphere"] = {
            "vcenters": vcenters or [{"server": VS_SERVER, "port": 443, "datacenters": ["dc1"]}],
            "failureDomains": failure_domains if failure_domains is not None else [fd("generated-failure-domain")]}
    return i


def vsphere_spec(template=VS_INSTALLED, pool=VS_POOL, server=VS_SERVER, uds=UDS):
    value = {"apiVersion": "machine.openshift.io/v1beta1", "kind": "VSphereMachineProviderSpec",
             "template": template, "numCPUs": 4, "memoryMiB": 16384, "diskGiB": 120,
             "network": {"devices": [{"networkName": "VM Network"}]},
             "credentialsSecret": {"name": "vsphere-cloud-credentials"},
             "workspace": {"datacenter": "dc1", "datastore": VS_DS, "folder": VS_FOLDER,
                           "resourcePool": pool, "server": server}}
    if uds is not None:
        value["userDataSecret"] = {"name": uds}
    return value


def vm(name, release, folder=VS_FOLDER, disk="thin", template=True):
    out = {"name": name, "folder": folder, "template": template}
    if release is not None:
        out["release"] = release
    if disk is not None:
        out["diskType"] = disk
    return out


def install_config(disk_type):
    text = "apiVersion: v1\nbaseDomain: example.com\nmetadata:\n  name: c1\nplatform:\n  vsphere:\n"
    if disk_type is not None:
        text += "    diskType: %s\n" % disk_type
    text += "    failureDomains:\n    - name: generated-failure-domain\n"
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cluster-config-v1", "namespace": "kube-system"},
            "data": {"install-config": text}}


def vs_import(template, disk_type):
    return dict({"server": VS_SERVER, "datacenter": "dc1", "folder": VS_FOLDER, "template": template,
                 "release": REL, "diskType": disk_type}, **OVA)


def vs_patch(template, imp=None, rename=False, uds=None):
    out = {"action": "patch", "target": template,
           "patch": provider_patch({"template": template}) if rename else {}, "userDataSecret": uds}
    if imp is not None:
        out["import"] = imp
    return out


case("vsphere-noop-current-template", on_target(v, VS_INSTALLED),
     ms=machineset(v, vsphere_spec()), infra_obj=vsphere_infra(), vcenter={"vms": [vm(VS_INSTALLED, REL)]},
     note="The installer's template in the workspace folder already holds the stream's release: no vCenter change, no patch.")

case("vsphere-patch-swap-outdated-template", vs_patch(VS_INSTALLED, vs_import(VS_INSTALLED, "thin")),
     ms=machineset(v, vsphere_spec()), infra_obj=vsphere_infra(), vcenter={"vms": [vm(VS_INSTALLED, VS_OLD)]},
     note="The MachineSet's template (the installer's, in the workspace folder) holds an older release: the host is asked to import the stream's OVA and swap it in under the same name, with the old template's disk type. The MachineSet already names it, so the patch is empty.")

case("vsphere-patch-stub-v2-converted",
     vs_patch(VS_INSTALLED, vs_import(VS_INSTALLED, "eagerZeroedThick"), uds=exp_uds(UDS, stub35_expected())),
     ms=machineset(v, vsphere_spec()), infra_obj=vsphere_infra(),
     vcenter={"vms": [vm(VS_INSTALLED, VS_OLD, disk="eagerZeroedThick")]}, secret_obj=secret(UDS, stub22()),
     note="The spec 2.2 stub is converted before the template is replaced.")

case("vsphere-patch-new-template", vs_patch(VS_MANAGED, vs_import(VS_MANAGED, "thin"), rename=True),
     ms=machineset(v, vsphere_spec(template="c1-x7k2p-rhcos-deleted")), infra_obj=vsphere_infra(),
     vcenter={"vms": []}, install=install_config("thin"),
     note="Neither the MachineSet's template nor the cluster's exists: the cluster's is made from the OVA with install-config's disk type, and the MachineSet is pointed at it.")

case("vsphere-patch-new-template-default-disk", vs_patch(VS_MANAGED, vs_import(VS_MANAGED, None), rename=True),
     ms=machineset(v, vsphere_spec(template="")), infra_obj=vsphere_infra(), vcenter={"vms": []},
     install=install_config(None),
     note="No diskType in install-config: the datastore's default policy (no diskType in the import).")

case("vsphere-patch-rename-to-current-template", vs_patch(VS_MANAGED, rename=True),
     ms=machineset(v, vsphere_spec(template="c1-x7k2p-rhcos-deleted")), infra_obj=vsphere_infra(),
     vcenter={"vms": [vm(VS_MANAGED, REL)]},
     note="The MachineSet names a template that is gone; the cluster's template already holds the release: only the name is patched, vCenter is left as it is.")

case("vsphere-patch-second-failure-domain", vs_patch("c1-x7k2p-rhcos-fd-b", vs_import("c1-x7k2p-rhcos-fd-b", "thick"), rename=True),
     ms=machineset(v, vsphere_spec(template="", pool="/dc1/host/cl2/Resources")),
     infra_obj=vsphere_infra([fd("fd-a"), fd("fd-b", pool="/dc1/host/cl2/Resources/")]),
     vcenter={"vms": [vm("c1-x7k2p-rhcos-fd-a", VS_OLD), vm("c1-x7k2p-rhcos-fd-b", VS_OLD, disk="thick")]},
     note="The workspace matches the second failure domain (resource pools compared cleaned, as path.Clean does): its template is the one replaced.")

case("vsphere-patch-customer-template-elsewhere", vs_patch(VS_MANAGED, rename=True),
     ms=machineset(v, vsphere_spec(template="rhcos-golden")), infra_obj=vsphere_infra(),
     vcenter={"vms": [vm("rhcos-golden", VS_OLD, folder="/dc1/vm/templates"), vm(VS_MANAGED, REL)]},
     note="The MachineSet's template sits outside the workspace folder: a customer's VM, left untouched. As upstream, the MachineSet falls back to the cluster's template, which already holds the release: only the name is patched.")

case("vsphere-patch-managed-name-elsewhere", vs_patch(VS_MANAGED, vs_import(VS_MANAGED, "thin"), rename=True),
     ms=machineset(v, vsphere_spec(template="")), infra_obj=vsphere_infra(),
     vcenter={"vms": [vm(VS_MANAGED, REL, folder="/dc1/vm/templates")]}, install=install_config("thin"),
     note="A VM of the cluster's template name sits outside the workspace folder, current or not: it is a customer's, left untouched, and the cluster's template is made anew in the workspace folder.")

case("vsphere-skip-no-failure-domain",
     p_skip(v, "providerSpec workspace (server: vcenter.example.com, datacenter: dc1, datastore: /dc1/datastore/ds1, resourcePool: /dc1/host/other/Resources, vmGroup: ) does not match any vCenter/failure domain in the Infrastructure object"),
     ms=machineset(v, vsphere_spec(pool="/dc1/host/other/Resources")), infra_obj=vsphere_infra(),
     note="No failure domain matches the workspace: skipped with no vCenter login (upstream PR #6477, OCPBUGS-115203).")

case("vsphere-skip-other-vcenter",
     p_skip(v, "providerSpec workspace (server: vcenter-2.example.com, datacenter: dc1, datastore: /dc1/datastore/ds1, resourcePool: /dc1/host/cl1/Resources, vmGroup: ) does not match any vCenter/failure domain in the Infrastructure object"),
     ms=machineset(v, vsphere_spec(server="vcenter-2.example.com")), infra_obj=vsphere_infra(),
     note="The workspace names a vCenter the Infrastructure does not list.")

case("vsphere-noop-no-platform-spec",
     p_noop(v, "Infrastructure cluster has no spec.platformSpec.vsphere; nothing to do"),
     ms=machineset(v, vsphere_spec()), infra_obj=vsphere_infra(platform_spec=False),
     note="Upstream returns without a patch when the Infrastructure has no vSphere platform spec.")

case("vsphere-error-no-release-on-template",
     p_err(v, "unable to determine RHCOS version of virtual machine: %s" % VS_INSTALLED),
     ms=machineset(v, vsphere_spec()), infra_obj=vsphere_infra(), vcenter={"vms": [vm(VS_INSTALLED, None)]})

case("vsphere-error-virtual-machine-not-template",
     p_err(v, "%s in %s is a virtual machine, not a template; it is left alone" % (VS_INSTALLED, VS_FOLDER)),
     ms=machineset(v, vsphere_spec()), infra_obj=vsphere_infra(),
     vcenter={"vms": [vm(VS_INSTALLED, VS_OLD, template=False)]},
     note="A VM under the template's name that is not marked as a template is never replaced: someone may run it.")

case("vsphere-error-template-name-too-long",
     p_err(v, "length of VM template name `c1-x7k2p-rhcos-%s` exceeds the permitted limit of 80 characters" % ("z" * 70)),
     ms=machineset(v, vsphere_spec(template="")), infra_obj=vsphere_infra([fd("z" * 70)]), vcenter={"vms": []})

case("vsphere-error-arm64-no-vmware-artifact",
     p_err(v, "rhcos-4.21/aarch64: artifact 'vmware' not found"),
     ms=machineset(v, vsphere_spec(), arch_annotation="kubernetes.io/arch=arm64"), infra_obj=vsphere_infra(),
     vcenter={"vms": [vm(VS_INSTALLED, VS_OLD)]})

case("vsphere-error-install-disk-type",
     p_err(v, 'disk provisioning type "sparse" is not supported'),
     ms=machineset(v, vsphere_spec(template="")), infra_obj=vsphere_infra(), vcenter={"vms": []},
     install=install_config("sparse"))

case("vsphere-skip-owner-references",
     {"action": "skip", "reason": "machineset %s has OwnerReference: MachinePool/c1-workers, skipping boot image update" % v},
     ms=machineset(v, vsphere_spec(), owner_refs=[{"apiVersion": "hive.openshift.io/v1", "kind": "MachinePool",
                                                   "name": "c1-workers", "uid": "7e0f3c1a-0b2d-4c5e-8f9a-1b2c3d4e5f60"}]),
     infra_obj=vsphere_infra(), vcenter={"vms": [vm(VS_INSTALLED, VS_OLD)]},
     note="The common rules come before anything vSphere: no failure domain match, no vCenter read.")


# ---------------------------------------------------------------- other platforms and host gates
case("gate-clusterversion-upgrading-noop",
     {"action": "noop", "reason": 'cluster is not stable (ClusterVersion history[0].state is "Partial"); deferring boot image updates until the install or upgrade completes'},
     ms=machineset(n, gcp_spec([boot_disk(GCP_OLD)])), infra_obj=GCP, cv=clusterversion(state="Partial"),
     note="Host gate: updates wait until ClusterVersion history[0].state is Completed.")

case("gate-not-enrolled-skip",
     {"action": "skip", "reason": "machineset %s is not enrolled for boot image updates (status.managedBootImagesStatus: mode None)" % m},
     ms=machineset(m, aws_spec({"id": AMI_OLD})), infra_obj=AWS, known=KNOWN, mc=machineconfiguration({"mode": "None"}),
     note="Host gate: enrollment from MachineConfiguration/cluster.")

case("gate-enrolled-partial-patch", exp_patch(AMI_E1, aws_patch(AMI_E1)),
     ms=machineset(m, aws_spec({"id": AMI_OLD}), labels={"boot-images": "managed"}), infra_obj=AWS, known=KNOWN,
     mc=machineconfiguration({"mode": "Partial", "partial": {"machineResourceSelector": {"matchLabels": {"boot-images": "managed"}}}}))

case("gate-partial-not-matching-skip",
     {"action": "skip", "reason": "machineset %s is not enrolled for boot image updates (status.managedBootImagesStatus: labels do not match the Partial selector)" % m},
     ms=machineset(m, aws_spec({"id": AMI_OLD})), infra_obj=AWS, known=KNOWN,
     mc=machineconfiguration({"mode": "Partial", "partial": {"machineResourceSelector": {"matchLabels": {"boot-images": "managed"}}}}))

case("gate-enrolled-all-patch", exp_patch(GCP_NEW, {"disks": [boot_disk(GCP_NEW)]}),
     ms=machineset(n, gcp_spec([boot_disk(GCP_OLD)])), infra_obj=GCP, cv=clusterversion(),
     mc=machineconfiguration({"mode": "All"}))


# ---------------------------------------------------------------- upstream's static RHCOS AMI list (§20)
LISTED_AMI = "ami-000065c53330c76d2"  # first entry of guests/bootimage-aws/data/aws-rhcos-amis.txt
case("aws-patch-listed-install-ami", exp_patch(AMI_E1, aws_patch(AMI_E1)),
     ms=machineset(m, aws_spec({"id": LISTED_AMI})), infra_obj=AWS,
     note="The install-time AMI is in upstream's static RHCOS AMI list (compiled into the AWS guest): no known-images file, not in the stream, still updated.")

# ---------------------------------------------------------------- enrollment the operator would publish (§21)
def mc_spec_only(managers):
    """A MachineConfiguration whose status the operator has not published yet."""
    spec = {"logLevel": "Normal", "managementState": "Managed", "operatorLogLevel": "Normal"}
    if managers is not None:
        spec["managedBootImages"] = {"machineManagers": managers}
    return {"apiVersion": "operator.openshift.io/v1", "kind": "MachineConfiguration",
            "metadata": {"name": "cluster", "generation": 1}, "spec": spec}


COMPUTED = "computed from spec.managedBootImages, as the operator would publish it"
case("gate-status-absent-default-on-patch", exp_patch(GCP_NEW, {"disks": [boot_disk(GCP_NEW)]}),
     ms=machineset(n, gcp_spec([boot_disk(GCP_OLD)])), infra_obj=GCP, mc=mc_spec_only(None),
     note="No status yet and no admin opinion: the operator would enroll GCP MachineSets by default (mode All).")

case("gate-status-absent-optout-skip",
     {"action": "skip", "reason": "machineset %s is not enrolled for boot image updates (%s: machineManagers is [], which opts out of everything)" % (n, COMPUTED)},
     ms=machineset(n, gcp_spec([boot_disk(GCP_OLD)])), infra_obj=GCP, mc=mc_spec_only([]),
     note="machineManagers: [] is the legacy opt-out of everything (OSD/ROSA).")


# ---------------------------------------------------------------- ControlPlaneMachineSets (§18)
CP = "cluster"
MASTER_UDS = "master-user-data"
MASTER_LABELS = {"machine.openshift.io/cluster-api-machine-role": "master",
                 "machine.openshift.io/cluster-api-machine-type": "master"}


def cpms(platform, provider_value, owner_refs=None, node_labels=None, annotations=None, provider_present=True):
    meta = {"name": CP, "namespace": "openshift-machine-api", "uid": "4f1e2d3c-5b6a-4978-8a9b-0c1d2e3f4a5b",
            "resourceVersion": "51877", "generation": 1,
            "finalizers": ["controlplanemachineset.machine.openshift.io"],
            "labels": {"machine.openshift.io/cluster-api-cluster": "c1-x7k2p"}}
    if owner_refs:
        meta["ownerReferences"] = owner_refs
    if annotations:
        meta["annotations"] = annotations
    domains = {"platform": platform}
    if platform == "AWS":
        domains["aws"] = [{"placement": {"availabilityZone": "us-east-1" + z}} for z in "abc"]
    elif platform == "GCP":
        domains["gcp"] = [{"zone": "us-central1-" + z} for z in "abc"]
    elif platform == "Azure":
        domains["azure"] = [{"zone": z} for z in "123"]
    mspec = {"metadata": {"labels": node_labels} if node_labels else {}}
    if provider_present:
        mspec["providerSpec"] = {"value": provider_value}
    return {"apiVersion": "machine.openshift.io/v1", "kind": "ControlPlaneMachineSet", "metadata": meta,
            "spec": {"replicas": 3, "state": "Active", "strategy": {"type": "RollingUpdate"},
                     "selector": {"matchLabels": dict(MASTER_LABELS)},
                     "template": {"machineType": "machines_v1beta1_machine_openshift_io",
                                  "machines_v1beta1_machine_openshift_io": {
                                      "failureDomains": domains,
                                      "metadata": {"labels": dict(MASTER_LABELS, **{"machine.openshift.io/cluster-api-cluster": "c1-x7k2p"})},
                                      "spec": mspec}}},
            "status": {"replicas": 3, "readyReplicas": 3, "updatedReplicas": 3, "observedGeneration": 1}}


def mc_both(ms_mode, cpms_mode):
    mm = [{"apiGroup": "machine.openshift.io", "resource": "machinesets", "selection": {"mode": ms_mode}},
          {"apiGroup": "machine.openshift.io", "resource": "controlplanemachinesets", "selection": {"mode": cpms_mode}}]
    return {"apiVersion": "operator.openshift.io/v1", "kind": "MachineConfiguration",
            "metadata": {"name": "cluster", "generation": 4},
            "spec": {"logLevel": "Normal", "managementState": "Managed", "operatorLogLevel": "Normal",
                     "managedBootImages": {"machineManagers": mm}},
            "status": {"observedGeneration": 4, "managedBootImagesStatus": {"machineManagers": mm}}}


def cpms_patch(target, fragment, uds=None):
    return {"action": "patch", "target": target,
            "patch": {"spec": {"template": {"machines_v1beta1_machine_openshift_io": {"spec": {"providerSpec": {"value": fragment}}}}}},
            "userDataSecret": uds}


def cp_on_target(target):
    return {"action": "noop", "reason": "No patching required for ControlPlaneMachineSet %s: boot image is already %s" % (CP, target)}


def cp_left_alone(reason):
    return {"action": "noop", "reason": "%s, skipping boot image update of ControlPlaneMachineSet %s (a ControlPlaneMachineSet left alone counts as reconciled)" % (reason, CP)}


def cp_not_enrolled(detail):
    return {"action": "skip", "reason": "ControlPlaneMachineSet %s is not enrolled for boot image updates (%s)" % (CP, detail)}


def cp_err(detail):
    return {"action": "error", "message": "failed to reconcile ControlPlaneMachineSet %s, err: %s" % (CP, detail)}


def cp_aws_spec(ami):
    v = aws_spec(ami, uds=MASTER_UDS)
    v["placement"]["availabilityZone"] = ""
    v["instanceType"] = "m6i.2xlarge"
    return v


def cp_gcp_spec(disks):
    v = gcp_spec(disks, uds=MASTER_UDS)
    v["zone"] = ""
    return v


def cp_azure_spec(image):
    v = azure_spec(image, uds=MASTER_UDS)
    v["zone"] = ""
    return v


ENROLLED = mc_both("All", "All")
CP_NONE = mc_both("All", "None")
CP_NOTE = "ControlPlaneMachineSet: the providerSpec sits under spec.template.machines_v1beta1_machine_openshift_io.spec, and the patch is there too."

# AWS
case("cpms-aws-patch-stub-v2-converted",
     cpms_patch(AMI_E1, aws_patch(AMI_E1), exp_uds(MASTER_UDS, stub35_expected())),
     ms=cpms("AWS", cp_aws_spec({"id": LISTED_AMI})), infra_obj=AWS, mc=ENROLLED, cv=clusterversion(),
     secret_obj=secret(MASTER_UDS, stub22()),
     note=CP_NOTE + " The install AMI is in the static RHCOS AMI list; the master stub is upgraded to spec 3.")
case("cpms-aws-noop-on-target", cp_on_target(AMI_E1),
     ms=cpms("AWS", cp_aws_spec({"id": AMI_E1})), infra_obj=AWS, mc=ENROLLED)
case("cpms-aws-skip-not-enrolled", cp_not_enrolled("status.managedBootImagesStatus: mode None"),
     ms=cpms("AWS", cp_aws_spec({"id": AMI_OLD})), infra_obj=AWS, mc=CP_NONE, known=KNOWN,
     note="skip is reserved, for a ControlPlaneMachineSet, to \"not enrolled\".")
case("cpms-aws-skip-default-none",
     cp_not_enrolled("%s: no controlplanemachinesets entry, and ControlPlaneMachineSets are opt-in (default None)" % COMPUTED),
     ms=cpms("AWS", cp_aws_spec({"id": AMI_OLD})), infra_obj=AWS, known=KNOWN,
     mc=mc_spec_only([{"apiGroup": "machine.openshift.io", "resource": "machinesets", "selection": {"mode": "All"}}]),
     note="Without a published status, the CPMS entry the operator would write is mode None: there is no default-on for ControlPlaneMachineSets.")
case("cpms-aws-noop-unknown-ami",
     cp_left_alone('current AMI "ami-0badc0ffee0ddf00d" is unknown (not a published RHCOS AMI)'),
     ms=cpms("AWS", cp_aws_spec({"id": "ami-0badc0ffee0ddf00d"})), infra_obj=AWS, mc=ENROLLED, known=KNOWN,
     note="A custom AMI leaves the ControlPlaneMachineSet alone; upstream counts it as reconciled, so noop, not skip.")
case("cpms-aws-noop-owner-references",
     {"action": "noop", "reason": "ControlPlaneMachineSet %s has OwnerReference: ClusterDeployment/c1, skipping boot image update (a ControlPlaneMachineSet left alone counts as reconciled)" % CP},
     ms=cpms("AWS", cp_aws_spec({"id": AMI_OLD}), owner_refs=[{"apiVersion": "hive.openshift.io/v1", "kind": "ClusterDeployment", "name": "c1", "uid": "1f2e3d4c-0000-4000-8000-00000000c1c1"}]),
     infra_obj=AWS, mc=ENROLLED, known=KNOWN)
case("cpms-aws-error-providerspec-missing", cp_err("providerSpec field was empty"),
     ms=cpms("AWS", None, provider_present=False), infra_obj=AWS, mc=ENROLLED)

# GCP
case("cpms-gcp-patch", cpms_patch(GCP_NEW, {"disks": [boot_disk(GCP_NEW)]}),
     ms=cpms("GCP", cp_gcp_spec([boot_disk(GCP_OLD)])), infra_obj=GCP, mc=ENROLLED, note=CP_NOTE)
case("cpms-gcp-noop-on-target", cp_on_target(GCP_NEW),
     ms=cpms("GCP", cp_gcp_spec([boot_disk(GCP_NEW)])), infra_obj=GCP, mc=ENROLLED)
case("cpms-gcp-skip-not-enrolled", cp_not_enrolled("status.managedBootImagesStatus: mode None"),
     ms=cpms("GCP", cp_gcp_spec([boot_disk(GCP_OLD)])), infra_obj=GCP, mc=CP_NONE)
case("cpms-gcp-noop-marketplace-image", cp_left_alone(gcp_unknown(mk)),
     ms=cpms("GCP", cp_gcp_spec([boot_disk(mk)])), infra_obj=GCP, mc=ENROLLED)
case("cpms-gcp-patch-ignores-arch-annotation-and-multi", cpms_patch(GCP_NEW, {"disks": [boot_disk(GCP_NEW)]}),
     ms=cpms("GCP", cp_gcp_spec([boot_disk(GCP_OLD)]),
             annotations={"capacity.cluster-autoscaler.kubernetes.io/labels": "kubernetes.io/arch=arm64"}),
     infra_obj=GCP, mc=ENROLLED, cv=clusterversion(arch="Multi"),
     note="A ControlPlaneMachineSet always uses the control-plane architecture: the arch annotation and a Multi ClusterVersion are ignored.")
case("cpms-gcp-noop-windows",
     {"action": "noop", "reason": "ControlPlaneMachineSet %s is a Windows ControlPlaneMachineSet; boot image updates do not apply" % CP},
     ms=cpms("GCP", cp_gcp_spec([boot_disk(GCP_OLD)]), node_labels={"machine.openshift.io/os-id": "Windows"}),
     infra_obj=GCP, mc=ENROLLED,
     note="The Windows marker of a ControlPlaneMachineSet is read from spec.template.machines_v1beta1_machine_openshift_io.spec.metadata.labels.")

# Azure
case("cpms-azure-patch", cpms_patch(urn(NOPLAN_G2), {"image": NOPLAN_G2}),
     ms=cpms("Azure", cp_azure_spec(az_image(rid="/resourceGroups/c1-x7k2p-rg/providers/Microsoft.Compute/galleries/gallery_c1_x7k2p/images/c1-x7k2p-gen2/versions/latest"))),
     infra_obj=AZ, mc=ENROLLED, note=CP_NOTE)
case("cpms-azure-noop-on-target", cp_on_target(urn(NOPLAN_G2)),
     ms=cpms("Azure", cp_azure_spec(dict(NOPLAN_G2))), infra_obj=AZ, mc=ENROLLED)
case("cpms-azure-skip-not-enrolled", cp_not_enrolled("status.managedBootImagesStatus: mode None"),
     ms=cpms("Azure", cp_azure_spec(dict(NOPLAN_G1))), infra_obj=AZ, mc=CP_NONE)
case("cpms-azure-noop-no-marketplace",
     cp_left_alone("the stream has no Azure marketplace images for architecture x86_64"),
     ms=cpms("Azure", cp_azure_spec(az_image("azureopenshift", "aro4", "aro_419", "9.4.20240710", t="MarketplaceNoPlan"))),
     infra_obj=AZ, mc=ENROLLED, cm=configmap(std_stream_text(okd)))

case("cpms-azure-noop-security-type",
     cp_left_alone('securityProfile.settings.securityType is "ConfidentialVM"; Confidential VM and Trusted Launch MachineSets keep their boot image'),
     ms=cpms("Azure", dict(cp_azure_spec(az_image("redhat", "rh-ocp-worker", "rh-ocp-worker", "4.16.2024101515", t="MarketplaceWithPlan")),
                           securityProfile={"settings": {"securityType": "ConfidentialVM"}})),
     infra_obj=AZ, mc=ENROLLED)

# Unsupported platform
case("cpms-vsphere-noop-unsupported",
     {"action": "noop", "reason": "Skipping controlplanemachineset %s, unsupported platform VSphere" % CP},
     ms=cpms("VSphere", {"apiVersion": "machine.openshift.io/v1beta1", "kind": "VSphereMachineProviderSpec",
                         "template": "c1-x7k2p-rhcos-generated-region-generated-zone", "userDataSecret": {"name": MASTER_UDS}}),
     infra_obj=infra("VSphere"), mc=ENROLLED,
     note="ControlPlaneMachineSets get boot image updates on AWS, GCP and Azure only.")


# ---------------------------------------------------------------- feature gates
# The FeatureGate `cluster` as the cluster publishes it: one entry per
# version (newest first), the gates enabled and disabled for it. Only the
# entry of ClusterVersion status.desired.version counts (the first without
# a ClusterVersion); a gate in neither list keeps its Default value.
def gate_names(*names):
    return [{"name": n} for n in names]


def featuregate(*entries, feature_set="CustomNoUpgrade"):
    spec = {"featureSet": feature_set}
    if feature_set == "CustomNoUpgrade":
        spec["customNoUpgrade"] = {"disabled": ["ManagedBootImagesCPMS"]}
    return {"apiVersion": "config.openshift.io/v1", "kind": "FeatureGate", "metadata": {"name": "cluster"},
            "spec": spec, "status": {"featureGates": [
                {"version": v, "enabled": gate_names(*on), "disabled": gate_names(*off)} for v, on, off in entries]}}


CPMS_GATE_OFF = ('feature gate ManagedBootImagesCPMS is off: ControlPlaneMachineSet %s gets no boot image updates '
                 '(no ControlPlaneMachineSet pass runs)' % CP)
DEFAULT_ON = ["ManagedBootImagesCPMS", "BootImageSkewEnforcement"]

case("cpms-aws-skip-featuregate-cpms-off", {"action": "skip", "reason": CPMS_GATE_OFF},
     ms=cpms("AWS", cp_aws_spec({"id": AMI_OLD})), infra_obj=AWS, mc=ENROLLED, known=KNOWN, cv=clusterversion(),
     fg=featuregate(("4.22.0", DEFAULT_ON, []),
                    ("4.21.3", ["BootImageSkewEnforcement"], ["ManagedBootImagesCPMS", "ImageModeStatusReporting"])),
     note="ManagedBootImagesCPMS is off for the cluster's version (ClusterVersion status.desired.version 4.21.3; the "
          "newer first entry does not count): upstream runs no ControlPlaneMachineSet pass, whatever the enrollment.")
case("cpms-gcp-skip-featuregate-first-entry", {"action": "skip", "reason": CPMS_GATE_OFF},
     ms=cpms("GCP", cp_gcp_spec([boot_disk(GCP_OLD)])), infra_obj=GCP, mc=ENROLLED,
     fg=featuregate(("4.22.0", [], ["ManagedBootImagesCPMS"]), ("4.21.3", DEFAULT_ON, [])),
     note="Without a ClusterVersion the first entry of status.featureGates counts.")
case("cpms-gcp-patch-featuregate-cpms-on", cpms_patch(GCP_NEW, {"disks": [boot_disk(GCP_NEW)]}),
     ms=cpms("GCP", cp_gcp_spec([boot_disk(GCP_OLD)])), infra_obj=GCP, mc=ENROLLED, cv=clusterversion(),
     fg=featuregate(("4.21.3", DEFAULT_ON, ["ImageModeStatusReporting"]), feature_set=""),
     note="ManagedBootImagesCPMS on through an explicit FeatureGate: the same decision as the Default feature set (cpms-gcp-patch).")
case("gcp-patch-featuregate-cpms-off", exp_patch(GCP_NEW, {"disks": [boot_disk(GCP_NEW)]}),
     ms=machineset("c1-x7k2p-worker-a", gcp_spec([boot_disk(GCP_OLD)])), infra_obj=GCP, cv=clusterversion(),
     fg=featuregate(("4.21.3", [], ["ManagedBootImagesCPMS", "BootImageSkewEnforcement"])),
     note="A MachineSet follows neither boot image gate: with both off it is still updated.")


# ---------------------------------------------------------------- AWS with EC2's answers (§20.1, §20.3; issue 45)
RED_HAT_OWNER = "531415883065"
MARKETPLACE_OWNER = "679593333241"
OCP_X86 = "59ead7de-2540-4653-a8b0-fa7926d5c845"
OCP_ARM = "abc249f8-7440-45f7-a4b1-c026baff64c1"
ROSA = "34850061-abaf-402d-92df-94325c9e947f"
EC2_RH = "ami-0e1d2c3b4a5968778"        # Red Hat's, in no list
EC2_MP94 = "ami-0b1c2d3e4f5061728"      # marketplace OCP 9.4, the MachineSet's
EC2_MP96 = "ami-0c1d2e3f405162738"
EC2_MP98_OLD = "ami-0d1e2f30415263748"
EC2_MP98 = "ami-0f10213243546576a"
EC2_MP910 = "ami-0a21324354657687b"
EC2_MP418 = "ami-0b32435465768798c"
EC2_GONE = "ami-0c435465768798a9d"      # in no file
EC2_COPY = "ami-0d5465768798a9bae"      # another account's copy


def ec2_image(ami, owner, name, description="", created="2026-01-01T00:00:00.000Z"):
    return {"imageId": ami, "ownerId": owner, "name": name, "description": description, "creationDate": created}


def offer(ami, release, created, product=OCP_X86, arch="x86_64"):
    """A marketplace AMI as Red Hat names and describes them."""
    return ec2_image(ami, MARKETPLACE_OWNER, "RHEL-9.4-RHCOS-%s_HVM_GA-%s-%s-0-%s" % (release, created[:10].replace("-", ""), arch, product),
                     "RHEL CoreOS %s %s %s" % (release[:3], release, arch), created + "T12:00:00.000Z")


def rosa(ami, release, created):
    return ec2_image(ami, MARKETPLACE_OWNER, "rhcos-%s-x86_64-%s" % (release, ROSA),
                     "rhcos-%s-x86_64" % release, created + "T12:00:00.000Z")


def label(product):
    names = {OCP_X86: "OCP x86_64", OCP_ARM: "OCP arm64", ROSA: "ROSA"}
    return "%s (%s)" % (names[product], product)


def images(*listed):
    """An --ec2 file: what EC2 holds in the MachineSet's region, the stream's AMI (Red Hat's) among it."""
    return {"images": list(listed) + [ec2_image(AMI_E1, RED_HAT_OWNER, "rhcos-9.8.20260428-0-x86_64-hvm",
                                                "OpenShift 4.21 9.8.20260428-0", "2026-04-28T22:00:00.000Z")]}


MP94 = offer(EC2_MP94, "9.4.20250101-0", "2025-01-01")
MARKET = images(
    MP94,
    offer(EC2_MP96, "9.6.20260210-0", "2026-02-10"),
    offer(EC2_MP98_OLD, "9.8.20260401-0", "2026-04-01"),
    offer(EC2_MP98, "9.8.20260428-0", "2026-04-28"),
    offer(EC2_MP910, "9.10.20260901-0", "2026-09-01"),
    ec2_image(EC2_MP418, MARKETPLACE_OWNER, "RHCOS-418.94-x86_64-" + OCP_X86,
              "OpenShift 4.18 418.94.202511191518-0 x86_64", "2025-11-19T15:18:00.000Z"),
    ec2_image(EC2_RH, RED_HAT_OWNER, "rhcos-9.2.20230101-0-x86_64", "RHCOS 9.2"),
    ec2_image(EC2_COPY, "123456789012", "copy-of-rhcos-" + OCP_X86, "RHEL CoreOS 9.8 9.8.20260428-0 x86_64"),
)

case("aws-patch-ec2-red-hat-owner", exp_patch(AMI_E1, aws_patch(AMI_E1)),
     ms=machineset(m, aws_spec({"id": EC2_RH})), infra_obj=AWS, ec2=MARKET,
     note="EC2 says Red Hat owns the AMI, which no list names: upstream main moves it to the stream's AMI for the region.")
case("aws-patch-ec2-marketplace", exp_patch(EC2_MP98, aws_patch(EC2_MP98)),
     ms=machineset(m, aws_spec({"id": EC2_MP94})), infra_obj=AWS, ec2=MARKET,
     note="A marketplace AMI moves to its product's AMI at the stream's release (9.8): the 9.10 and old-scheme 418.94 "
          "AMIs are above it, another account's copy is no marketplace AMI, and of the two 9.8 AMIs the newer "
          "CreationDate wins.")
below = images(MP94, offer(EC2_MP96, "9.6.20260210-0", "2026-02-10"),
               offer(EC2_MP910, "9.10.20260901-0", "2026-09-01"))
case("aws-patch-ec2-marketplace-below-stream", exp_patch(EC2_MP96, aws_patch(EC2_MP96)),
     ms=machineset(m, aws_spec({"id": EC2_MP94})), infra_obj=AWS, ec2=below,
     note="The stream's release (9.8) has not reached the region's marketplace yet: the highest release below it (9.6) is taken.")
tie = images(MP94, offer(EC2_MP98, "9.8.20260428-0", "2026-04-28"),
             offer(EC2_MP98_OLD, "9.8.20260428-0", "2026-04-27"))
case("aws-patch-ec2-marketplace-newest-of-a-release", exp_patch(EC2_MP98, aws_patch(EC2_MP98)),
     ms=machineset(m, aws_spec({"id": EC2_MP94})), infra_obj=AWS, ec2=tie,
     note="Two AMIs of the same release: the newer CreationDate wins.")
case("aws-noop-ec2-marketplace-on-target", on_target(m, EC2_MP98),
     ms=machineset(m, aws_spec({"id": EC2_MP98})), infra_obj=AWS, ec2=MARKET)
rosa_ec2 = images(rosa("ami-0e65768798a9bacbf", "9.6.20250701-0", "2025-07-01"),
                  rosa("ami-0f768798a9bacbdc0", "9.8.20260428-0", "2026-04-28"),
                  offer(EC2_MP98, "9.8.20260428-0", "2026-04-29"))
case("aws-patch-ec2-rosa", exp_patch("ami-0f768798a9bacbdc0", aws_patch("ami-0f768798a9bacbdc0")),
     ms=machineset(m, aws_spec({"id": "ami-0e65768798a9bacbf"})), infra_obj=AWS, ec2=rosa_ec2,
     note="ROSA Classic: a marketplace product like any other, with its own description format; the OCP product's AMI is not a candidate.")
old_only = images(ec2_image(EC2_MP418, MARKETPLACE_OWNER, "RHCOS-418.94-x86_64-" + OCP_X86,
                            "OpenShift 4.18 418.94.202511191518-0 x86_64", "2025-11-19T15:18:00.000Z"))
case("aws-skip-ec2-marketplace-only-old-scheme",
     p_skip(m, "marketplace product %s has only pre-4.19 RHCOS AMIs in region us-east-1; boot image is out of date "
               "and cannot be updated until newer AMIs are available" % label(OCP_X86)),
     ms=machineset(m, aws_spec({"id": EC2_MP418})), infra_obj=AWS, ec2=old_only)
above = images(offer(EC2_MP910, "9.10.20260901-0", "2026-09-01"),
               offer(EC2_MP94, "9.4.20250101-0", "2025-01-01", product=OCP_ARM, arch="aarch64"))
case("aws-skip-ec2-marketplace-no-candidate",
     p_skip(m, "no marketplace AMI of product %s at or below RHCOS 9.8 in region us-east-1, will retry on next reconcile" % label(OCP_X86)),
     ms=machineset(m, aws_spec({"id": EC2_MP910})), infra_obj=AWS, ec2=above,
     note="The MachineSet runs a 9.10 marketplace AMI, above the stream's 9.8, and its product has nothing at or below it (the 9.4 AMI is another product's).")
arm = images(offer(EC2_MP94, "9.4.20250101-0", "2025-01-01", product=OCP_ARM, arch="aarch64"))
case("aws-error-ec2-marketplace-no-aws-artifact", p_err("c1-x7k2p-worker-arm-a", "no aws artifact in stream for arch aarch64"),
     ms=machineset("c1-x7k2p-worker-arm-a", aws_spec({"id": EC2_MP94}), arch_annotation="kubernetes.io/arch=arm64"),
     infra_obj=AWS, ec2=arm,
     note="The marketplace rule needs the stream's artifacts.aws.release for the arch; this stream has none for aarch64.")
case("aws-skip-ec2-marketplace-no-product",
     p_skip(m, "AMI %s has unrecognised owner: the marketplace owns it, but its name names no product" % EC2_MP94),
     ms=machineset(m, aws_spec({"id": EC2_MP94})), infra_obj=AWS,
     ec2=images(ec2_image(EC2_MP94, MARKETPLACE_OWNER, "rhcos-9.4-x86_64", "RHEL CoreOS 9.4 9.4.20250101-0 x86_64")))
case("aws-error-ec2-ami-not-found", p_err(m, "AMI %s not found" % EC2_GONE),
     ms=machineset(m, aws_spec({"id": EC2_GONE})), infra_obj=AWS, ec2=MARKET,
     note="EC2 has no such AMI in the MachineSet's region: upstream's DescribeImages finds nothing, an error.")
case("aws-error-ec2-listed-ami-not-found", p_err(m, "AMI %s not found" % LISTED_AMI),
     ms=machineset(m, aws_spec({"id": LISTED_AMI})), infra_obj=AWS, ec2=MARKET,
     note="In upstream's static RHCOS AMI list, but EC2 does not have it in the region: with EC2's answers the "
          "owner rule decides alone, as on upstream main (without them the list would move it: aws-patch-listed-install-ami).")
case("aws-skip-ec2-other-owner", p_skip(m, 'AMI %s has unrecognised owner "123456789012"' % EC2_COPY),
     ms=machineset(m, aws_spec({"id": EC2_COPY})), infra_obj=AWS, ec2=MARKET,
     note="Another account's AMI (a copy, or a custom image) is left alone, whatever its name and description say.")
case("aws-skip-ec2-other-owner-known", p_skip(m, 'AMI %s has unrecognised owner "123456789012"' % AMI_OLD),
     ms=machineset(m, aws_spec({"id": AMI_OLD})), infra_obj=AWS, known=KNOWN,
     ec2=images(ec2_image(AMI_OLD, "123456789012", "rhcos-418-copy")),
     note="Another account owns this copy; known-images.txt names it, but with EC2's answers the owner decides, as on "
          "upstream main (without them the list would move it: aws-patch-known-ami).")
case("aws-skip-ec2-not-consulted-marketplace",
     p_skip(m, 'current AMI "%s" is unknown (not a published RHCOS AMI)' % EC2_MP94),
     ms=machineset(m, aws_spec({"id": EC2_MP94})), infra_obj=AWS,
     note="No ec2.yaml: EC2 is not consulted (as when it cannot be reached), so the static lists decide, and they do not know marketplace AMIs.")
case("cpms-aws-patch-ec2-marketplace", cpms_patch(EC2_MP98, aws_patch(EC2_MP98)),
     ms=cpms("AWS", cp_aws_spec({"id": EC2_MP94})), infra_obj=AWS, mc=ENROLLED, ec2=MARKET,
     note="A ControlPlaneMachineSet reads EC2 as a MachineSet does.")


# ---------------------------------------------------------------- write
def str_representer(dumper, data):
    if "\n" in data:
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", data)


yaml.add_representer(str, str_representer)


def dump_yaml(path, obj):
    with open(path, "w") as f:
        yaml.dump(obj, f, sort_keys=False, default_flow_style=False, width=4096, allow_unicode=True)


# Only the case directories are replaced: this script lives in ROOT too.
os.makedirs(ROOT, exist_ok=True)
for old in os.listdir(ROOT):
    if os.path.isdir(os.path.join(ROOT, old)):
        shutil.rmtree(os.path.join(ROOT, old))
names = set()
for c in CASES:
    assert c["name"] not in names, c["name"]
    names.add(c["name"])
    d = os.path.join(ROOT, c["name"])
    os.makedirs(d)
    obj_file = "controlplanemachineset.yaml" if c["ms"]["kind"] == "ControlPlaneMachineSet" else "machineset.yaml"
    dump_yaml(os.path.join(d, obj_file), c["ms"])
    if "stub-ignition-upgraded-at" in json.dumps(c["expected"]):
        with open(os.path.join(d, "now.txt"), "w") as f:
            f.write(NOW + "\n")
    dump_yaml(os.path.join(d, "configmap.yaml"), c["cm"])
    dump_yaml(os.path.join(d, "infrastructure.yaml"), c["infra"])
    if c["cv"] is not None:
        dump_yaml(os.path.join(d, "clusterversion.yaml"), c["cv"])
    if c["mc"] is not None:
        dump_yaml(os.path.join(d, "machineconfiguration.yaml"), c["mc"])
    if c["secret"] is not None:
        dump_yaml(os.path.join(d, "user-data-secret.yaml"), c["secret"])
    if c["known"] is not None:
        with open(os.path.join(d, "known-images.txt"), "w") as f:
            f.write(c["known"])
    if c["fg"] is not None:
        dump_yaml(os.path.join(d, "featuregate.yaml"), c["fg"])
    if c["vcenter"] is not None:
        dump_yaml(os.path.join(d, "vcenter.yaml"), c["vcenter"])
    if c["install"] is not None:
        dump_yaml(os.path.join(d, "install-config.yaml"), c["install"])
    if c["ec2"] is not None:
        dump_yaml(os.path.join(d, "ec2.yaml"), c["ec2"])
    with open(os.path.join(d, "expected.json"), "w") as f:
        json.dump(c["expected"], f, indent=2, ensure_ascii=False)
        f.write("\n")
    if c["note"]:
        with open(os.path.join(d, "README.md"), "w") as f:
            f.write(c["note"] + "\n")
print(len(CASES), "cases")
