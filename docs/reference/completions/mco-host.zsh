#compdef mco-host

autoload -U is-at-least

_mco-host() {
    typeset -A opt_args
    typeset -a _arguments_options
    local ret=1

    if is-at-least 5.2; then
        _arguments_options=(-s -S -C)
    else
        _arguments_options=(-s -C)
    fi

    local context curcontext="$curcontext" state line
    _arguments "${_arguments_options[@]}" : \
'--guest-deadline=[Wall-clock budget of one guest evaluation]:GUEST_DEADLINE:_default' \
'--guest-memory-mib=[Linear-memory cap of one guest, in MiB]:GUEST_MEMORY_MIB:_default' \
'--guest-memory-max-mib=[The most a registry entry'\''s \`memoryMiB\` may ask for, in MiB (default\: --guest-memory-mib). Raising it raises no guest'\''s cap\: it admits entries that set a larger one of their own]:MIB:_default' \
'--guest-dir=[Where installed guests live (default\: \`guests/\` beside the binary)]:DIR:_files' \
'--registry=[Registry file mapping jobs and platforms to guest modules (default\: the installed guests)]:FILE:_files' \
'--cache-dir=[Cache directory for compiled guests (default\: no cache)]:DIR:_files' \
'--oci-cache-dir=[Where modules pulled from OCI registries are kept, by digest\: a module pinned by digest and cached here loads without its registry (default\: no cache)]:DIR:_files' \
'*--plain-http-registry=[An OCI registry (\`host\:port\`) reached over plain HTTP, such as one on loopback; repeat for more, or separate them with commas]:HOST:_default' \
'--oci-connect-timeout=[How long connecting to an OCI registry may take, TLS included (default\: 10s)]:DURATION:_default' \
'--oci-read-timeout=[The longest an OCI registry may stay silent within an answer, its headers included, before the pull fails (default\: 30s)]:DURATION:_default' \
'--oci-pull-timeout=[How long one OCI pull may take in all\: manifest, signatures, config and module layer (default\: 60s)]:DURATION:_default' \
'--oci-max-module-mib=[The largest module layer pulled from an OCI registry, in MiB; a larger one is refused, and one that sends more than it declares is cut off (default\: 32)]:MIB:_default' \
'--no-pooling[Instantiate on demand instead of from the pooling allocator]' \
'--perf-map[Write \`/tmp/perf-<pid>.map\`, so that \`perf record\` / \`perf report\` name the guest'\''s functions (docs/dev/benchmarks.md). The variable takes 1 or 0 as the benches do, as well as true or false]' \
'-h[Print help]' \
'--help[Print help]' \
'-V[Print version]' \
'--version[Print version]' \
":: :_mco-host_commands" \
"*::: :->mco-host" \
&& ret=0
    case $state in
    (mco-host)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:mco-host-command-$line[1]:"
        case $line[1] in
            (eval)
_arguments "${_arguments_options[@]}" : \
'--guest-deadline=[Wall-clock budget of one guest evaluation]:GUEST_DEADLINE:_default' \
'--guest-memory-mib=[Linear-memory cap of one guest, in MiB]:GUEST_MEMORY_MIB:_default' \
'--guest-memory-max-mib=[The most a registry entry'\''s \`memoryMiB\` may ask for, in MiB (default\: --guest-memory-mib). Raising it raises no guest'\''s cap\: it admits entries that set a larger one of their own]:MIB:_default' \
'--guest-dir=[Where installed guests live (default\: \`guests/\` beside the binary)]:DIR:_files' \
'--registry=[Registry file mapping jobs and platforms to guest modules (default\: the installed guests)]:FILE:_files' \
'--cache-dir=[Cache directory for compiled guests (default\: no cache)]:DIR:_files' \
'--oci-cache-dir=[Where modules pulled from OCI registries are kept, by digest\: a module pinned by digest and cached here loads without its registry (default\: no cache)]:DIR:_files' \
'*--plain-http-registry=[An OCI registry (\`host\:port\`) reached over plain HTTP, such as one on loopback; repeat for more, or separate them with commas]:HOST:_default' \
'--oci-connect-timeout=[How long connecting to an OCI registry may take, TLS included (default\: 10s)]:DURATION:_default' \
'--oci-read-timeout=[The longest an OCI registry may stay silent within an answer, its headers included, before the pull fails (default\: 30s)]:DURATION:_default' \
'--oci-pull-timeout=[How long one OCI pull may take in all\: manifest, signatures, config and module layer (default\: 60s)]:DURATION:_default' \
'--oci-max-module-mib=[The largest module layer pulled from an OCI registry, in MiB; a larger one is refused, and one that sends more than it declares is cut off (default\: 32)]:MIB:_default' \
'--no-pooling[Instantiate on demand instead of from the pooling allocator]' \
'--perf-map[Write \`/tmp/perf-<pid>.map\`, so that \`perf record\` / \`perf report\` name the guest'\''s functions (docs/dev/benchmarks.md). The variable takes 1 or 0 as the benches do, as well as true or false]' \
'-h[Print help]' \
'--help[Print help]' \
":: :_mco-host__subcmd__eval_commands" \
"*::: :->eval" \
&& ret=0

    case $state in
    (eval)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:mco-host-eval-command-$line[1]:"
        case $line[1] in
            (mcn)
_arguments "${_arguments_options[@]}" : \
'--node=[The Node]:FILE:_default' \
'--pools=[All MachineConfigPools]:FILE:_default' \
'--machineconfigs=[Rendered MachineConfigs (to work out drain and post-config action)]:FILE:_default' \
'--machineconfiguration=[MachineConfiguration \`cluster\` (node disruption policies; default\: the built-in cluster policies)]:FILE:_default' \
'--previous=[The node'\''s MachineConfigNode as stored in the cluster]:FILE:_default' \
'--featuregate=[FeatureGate \`cluster\` (its first entry'\''s gates; default\: the Default feature set)]:FILE:_default' \
'--guest=[Guest component to run instead of the registered one]:FILE:_files' \
'--now=[Time stamped on conditions that changed (RFC 3339; default\: now)]:TIME:_default' \
'--guest-deadline=[Wall-clock budget of one guest evaluation]:GUEST_DEADLINE:_default' \
'--guest-memory-mib=[Linear-memory cap of one guest, in MiB]:GUEST_MEMORY_MIB:_default' \
'--guest-memory-max-mib=[The most a registry entry'\''s \`memoryMiB\` may ask for, in MiB (default\: --guest-memory-mib). Raising it raises no guest'\''s cap\: it admits entries that set a larger one of their own]:MIB:_default' \
'--guest-dir=[Where installed guests live (default\: \`guests/\` beside the binary)]:DIR:_files' \
'--registry=[Registry file mapping jobs and platforms to guest modules (default\: the installed guests)]:FILE:_files' \
'--cache-dir=[Cache directory for compiled guests (default\: no cache)]:DIR:_files' \
'--oci-cache-dir=[Where modules pulled from OCI registries are kept, by digest\: a module pinned by digest and cached here loads without its registry (default\: no cache)]:DIR:_files' \
'*--plain-http-registry=[An OCI registry (\`host\:port\`) reached over plain HTTP, such as one on loopback; repeat for more, or separate them with commas]:HOST:_default' \
'--oci-connect-timeout=[How long connecting to an OCI registry may take, TLS included (default\: 10s)]:DURATION:_default' \
'--oci-read-timeout=[The longest an OCI registry may stay silent within an answer, its headers included, before the pull fails (default\: 30s)]:DURATION:_default' \
'--oci-pull-timeout=[How long one OCI pull may take in all\: manifest, signatures, config and module layer (default\: 60s)]:DURATION:_default' \
'--oci-max-module-mib=[The largest module layer pulled from an OCI registry, in MiB; a larger one is refused, and one that sends more than it declares is cut off (default\: 32)]:MIB:_default' \
'--no-pooling[Instantiate on demand instead of from the pooling allocator]' \
'--perf-map[Write \`/tmp/perf-<pid>.map\`, so that \`perf record\` / \`perf report\` name the guest'\''s functions (docs/dev/benchmarks.md). The variable takes 1 or 0 as the benches do, as well as true or false]' \
'-h[Print help]' \
'--help[Print help]' \
&& ret=0
;;
(bootimage)
_arguments "${_arguments_options[@]}" : \
'--machineset=[The MachineSet (machine.openshift.io/v1beta1)]:FILE:_default' \
'--controlplanemachineset=[The ControlPlaneMachineSet (machine.openshift.io/v1), instead of a MachineSet]:FILE:_default' \
'--configmap=[The coreos-bootimages ConfigMap]:FILE:_default' \
'--infrastructure=[Infrastructure \`cluster\` (picks the platform and its guest)]:FILE:_default' \
'--clusterversion=[ClusterVersion \`version\` (stability gate, multi-arch)]:FILE:_default' \
'--machineconfiguration=[MachineConfiguration \`cluster\` (enrollment)]:FILE:_default' \
'--user-data-secret=[The MachineSet'\''s user-data Secret (stub Ignition upgrade)]:FILE:_default' \
'--known-images=[Extra boot images that count as RHCOS (lines, or a ConfigMap)]:FILE:_default' \
'--featuregate=[FeatureGate \`cluster\`\: the gates of the --clusterversion version (else its first entry); default\: the Default feature set]:FILE:_default' \
'--vcenter=[vSphere\: what the workspace'\''s vCenter holds, \`{vms\: \[{name, folder, template, release, diskType}\]}\` (what the controller would read)]:FILE:_default' \
'--install-config=[vSphere\: ConfigMap kube-system/cluster-config-v1 (the disk type of a template made anew; default\: the datastore'\''s)]:FILE:_default' \
'--ec2=[AWS\: what EC2 holds, region to images, \`{us-east-1\: \[{imageId, ownerId, name, description, creationDate}\]}\` (what the controller would read with DescribeImages); without it EC2 is not consulted and the static AMI lists decide]:FILE:_default' \
'--guest=[Guest component to run instead of the one registered for the platform]:FILE:_files' \
'--now=[Time stamped on a stub upgrade (RFC 3339; default\: now)]:TIME:_default' \
'--guest-deadline=[Wall-clock budget of one guest evaluation]:GUEST_DEADLINE:_default' \
'--guest-memory-mib=[Linear-memory cap of one guest, in MiB]:GUEST_MEMORY_MIB:_default' \
'--guest-memory-max-mib=[The most a registry entry'\''s \`memoryMiB\` may ask for, in MiB (default\: --guest-memory-mib). Raising it raises no guest'\''s cap\: it admits entries that set a larger one of their own]:MIB:_default' \
'--guest-dir=[Where installed guests live (default\: \`guests/\` beside the binary)]:DIR:_files' \
'--registry=[Registry file mapping jobs and platforms to guest modules (default\: the installed guests)]:FILE:_files' \
'--cache-dir=[Cache directory for compiled guests (default\: no cache)]:DIR:_files' \
'--oci-cache-dir=[Where modules pulled from OCI registries are kept, by digest\: a module pinned by digest and cached here loads without its registry (default\: no cache)]:DIR:_files' \
'*--plain-http-registry=[An OCI registry (\`host\:port\`) reached over plain HTTP, such as one on loopback; repeat for more, or separate them with commas]:HOST:_default' \
'--oci-connect-timeout=[How long connecting to an OCI registry may take, TLS included (default\: 10s)]:DURATION:_default' \
'--oci-read-timeout=[The longest an OCI registry may stay silent within an answer, its headers included, before the pull fails (default\: 30s)]:DURATION:_default' \
'--oci-pull-timeout=[How long one OCI pull may take in all\: manifest, signatures, config and module layer (default\: 60s)]:DURATION:_default' \
'--oci-max-module-mib=[The largest module layer pulled from an OCI registry, in MiB; a larger one is refused, and one that sends more than it declares is cut off (default\: 32)]:MIB:_default' \
'--no-pooling[Instantiate on demand instead of from the pooling allocator]' \
'--perf-map[Write \`/tmp/perf-<pid>.map\`, so that \`perf record\` / \`perf report\` name the guest'\''s functions (docs/dev/benchmarks.md). The variable takes 1 or 0 as the benches do, as well as true or false]' \
'-h[Print help]' \
'--help[Print help]' \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
":: :_mco-host__subcmd__eval__subcmd__help_commands" \
"*::: :->help" \
&& ret=0

    case $state in
    (help)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:mco-host-eval-help-command-$line[1]:"
        case $line[1] in
            (mcn)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(bootimage)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
        esac
    ;;
esac
;;
(run)
_arguments "${_arguments_options[@]}" : \
'--kubeconfig=[Kubeconfig to use (default\: in-cluster config, or \$KUBECONFIG)]:FILE:_files' \
'--service-account=[The host'\''s ServiceAccount in its namespace\: its \`imagePullSecrets\` serve \`oci\:\` registry entries that name no \`pullSecret\` (the Deployment sets it from the Pod'\''s \`spec.serviceAccountName\`)]:NAME:_default' \
'--namespace=[Namespace of the leader-election Lease]:NAMESPACE:_default' \
'--lease-name=[Name of the leader-election Lease]:LEASE_NAME:_default' \
'--identity=[This replica'\''s identity in the Lease (default\: \$POD_NAME or \$HOSTNAME)]:IDENTITY:_default' \
'--lease-duration=[How long a lease holder may be silent before a standby takes over]:LEASE_DURATION:_default' \
'--resync=[Period of the full re-check of every node]:RESYNC:_default' \
'--admin-addr=[Address of /healthz, /readyz, /metrics, /guests and /ownership]:ADMIN_ADDR:_default' \
'--admin-auth=[Who may read /metrics, /guests and /ownership\: \`cluster\`, a bearer token the cluster accepts (TokenReview) of a user RBAC lets \`get\` the path (SubjectAccessReview, \`nonResourceURLs\`); \`none\`, anyone who reaches the address. /healthz and /readyz answer anyone]:ADMIN_AUTH:((cluster\:"A bearer token the cluster accepts, of a user RBAC lets \`get\` the path (\`nonResourceURLs\`)"
none\:"Not at all\: for a host whose admin address only trusted callers reach (loopback on a workstation)"))' \
'(--registry)--registry-configmap=[Read the registry from key \`registry.yaml\` of this ConfigMap in the host'\''s namespace instead; relative module paths follow the guest directory]:NAME:_default' \
'--registry-poll=[How often the registry and its modules are re-read to swap changed guests in]:REGISTRY_POLL:_default' \
'--mcn-mode=[The MCN job'\''s ownership mode\: \`own\` writes MCNs, but refuses while the Machine Config Operator'\''s daemon writes their conditions; \`observe\` writes none, and compares what it derives with the stored MCNs (metrics, Events, \`/ownership\`)]:MCN_MODE:((observe\:"Derive and compare with the cluster; write nothing"
own\:"Write, unless the operator'\''s equivalent writer is active"))' \
'--boot-images-mode=[The boot image job'\''s ownership mode\: \`own\` patches MachineSets, but refuses while the operator'\''s boot image controller writes its conditions on MachineConfiguration \`cluster\`; \`observe\` patches nothing and compares its plan with the MachineSets]:BOOT_IMAGES_MODE:((observe\:"Derive and compare with the cluster; write nothing"
own\:"Write, unless the operator'\''s equivalent writer is active"))' \
'--boot-image-state=[ConfigMap (in --namespace) where the boot image controller keeps its hot-loop record and the boot images it has seen]:NAME:_default' \
'--known-images-configmap=[ConfigMap (in --namespace) listing more boot images that count as RHCOS, one per line in any key]:NAME:_default' \
'--machineconfiguration-wait=[How long MachineConfiguration \`cluster\` may be missing or behind its spec before boot image updates report Degraded]:MACHINECONFIGURATION_WAIT:_default' \
'--ova-cache-dir=[vSphere\: where RHCOS OVAs are kept, by digest, between imports (the Deployment mounts an emptyDir here)]:OVA_CACHE_DIR:_files' \
'--ova-cache-max-mib=[vSphere\: the OVA cache directory'\''s size bound in MiB, the download under way included (an RHCOS OVA is about 1.2 GiB; a larger one is refused). At most the size of the volume it is on]:OVA_CACHE_MAX_MIB:_default' \
'--vcenter-ca-file=[vSphere\: a PEM bundle of the CAs vCenter certificates are checked against (default\: the system'\''s roots)]:FILE:_files' \
'--vcenter-call-timeout=[vSphere\: how long one vCenter call may take]:VCENTER_CALL_TIMEOUT:_default' \
'--vcenter-task-timeout=[vSphere\: how long one vCenter task (rename, destroy, an import lease getting ready) may take]:VCENTER_TASK_TIMEOUT:_default' \
'--vcenter-transfer-timeout=[vSphere\: how long one OVA download or disk upload may take]:VCENTER_TRANSFER_TIMEOUT:_default' \
'--ec2-endpoint=[AWS\: the EC2 endpoint of every region (a VPC or private endpoint, moto in the tests), instead of \`https\://ec2.<region>.amazonaws.com/\`]:URL:_default' \
'--ec2-connect-timeout=[AWS\: how long connecting to EC2 may take]:EC2_CONNECT_TIMEOUT:_default' \
'--ec2-read-timeout=[AWS\: how long an EC2 answer may stall between two reads]:EC2_READ_TIMEOUT:_default' \
'--ec2-call-timeout=[AWS\: how long one EC2 call (one page of a listing) may take]:EC2_CALL_TIMEOUT:_default' \
'--guest-deadline=[Wall-clock budget of one guest evaluation]:GUEST_DEADLINE:_default' \
'--guest-memory-mib=[Linear-memory cap of one guest, in MiB]:GUEST_MEMORY_MIB:_default' \
'--guest-memory-max-mib=[The most a registry entry'\''s \`memoryMiB\` may ask for, in MiB (default\: --guest-memory-mib). Raising it raises no guest'\''s cap\: it admits entries that set a larger one of their own]:MIB:_default' \
'--guest-dir=[Where installed guests live (default\: \`guests/\` beside the binary)]:DIR:_files' \
'--registry=[Registry file mapping jobs and platforms to guest modules (default\: the installed guests)]:FILE:_files' \
'--cache-dir=[Cache directory for compiled guests (default\: no cache)]:DIR:_files' \
'--oci-cache-dir=[Where modules pulled from OCI registries are kept, by digest\: a module pinned by digest and cached here loads without its registry (default\: no cache)]:DIR:_files' \
'*--plain-http-registry=[An OCI registry (\`host\:port\`) reached over plain HTTP, such as one on loopback; repeat for more, or separate them with commas]:HOST:_default' \
'--oci-connect-timeout=[How long connecting to an OCI registry may take, TLS included (default\: 10s)]:DURATION:_default' \
'--oci-read-timeout=[The longest an OCI registry may stay silent within an answer, its headers included, before the pull fails (default\: 30s)]:DURATION:_default' \
'--oci-pull-timeout=[How long one OCI pull may take in all\: manifest, signatures, config and module layer (default\: 60s)]:DURATION:_default' \
'--oci-max-module-mib=[The largest module layer pulled from an OCI registry, in MiB; a larger one is refused, and one that sends more than it declares is cut off (default\: 32)]:MIB:_default' \
'--strict-start[Refuse to start when a registry entry cannot load, instead of serving the module that last served it (or the installed one) and reporting the entry degraded]' \
'--registry-crd[Read the registry from the MachineConfigGuest objects instead\: one per job, jobs without one run the installed guests, and the lease holder writes what serves into their status. \`--registry\` and \`--registry-configmap\` take precedence]' \
'--boot-images[Also run the managed boot image controller (needs the RBAC in deploy/boot-images). MachineSets are touched only when enrolled in MachineConfiguration \`cluster\`]' \
'(--vcenter-ca-file)--vcenter-insecure-skip-verify[vSphere\: do not check vCenter certificates at all, as upstream'\''s controller does not (anyone on the path can then read the password)]' \
'--no-pooling[Instantiate on demand instead of from the pooling allocator]' \
'--perf-map[Write \`/tmp/perf-<pid>.map\`, so that \`perf record\` / \`perf report\` name the guest'\''s functions (docs/dev/benchmarks.md). The variable takes 1 or 0 as the benches do, as well as true or false]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
&& ret=0
;;
(crds)
_arguments "${_arguments_options[@]}" : \
'--out-dir=[Write each CRD to the file \`deploy/\` keeps it in, under this directory instead (\`make crds\` gives \`deploy\`), every feature set'\''s]:DIR:_files' \
'(--out-dir)--feature-set=[The feature set whose MachineConfigNode CRD is printed (one per set, all of one name, so a stream holds one of them)]:FEATURE_SET:((Default\:"Without \`configImage\` (\`ImageModeStatusReporting\` off)"
TechPreviewNoUpgrade\:"With \`configImage\` in spec and status (\`ImageModeStatusReporting\` on)"))' \
'--guest-deadline=[Wall-clock budget of one guest evaluation]:GUEST_DEADLINE:_default' \
'--guest-memory-mib=[Linear-memory cap of one guest, in MiB]:GUEST_MEMORY_MIB:_default' \
'--guest-memory-max-mib=[The most a registry entry'\''s \`memoryMiB\` may ask for, in MiB (default\: --guest-memory-mib). Raising it raises no guest'\''s cap\: it admits entries that set a larger one of their own]:MIB:_default' \
'--guest-dir=[Where installed guests live (default\: \`guests/\` beside the binary)]:DIR:_files' \
'--registry=[Registry file mapping jobs and platforms to guest modules (default\: the installed guests)]:FILE:_files' \
'--cache-dir=[Cache directory for compiled guests (default\: no cache)]:DIR:_files' \
'--oci-cache-dir=[Where modules pulled from OCI registries are kept, by digest\: a module pinned by digest and cached here loads without its registry (default\: no cache)]:DIR:_files' \
'*--plain-http-registry=[An OCI registry (\`host\:port\`) reached over plain HTTP, such as one on loopback; repeat for more, or separate them with commas]:HOST:_default' \
'--oci-connect-timeout=[How long connecting to an OCI registry may take, TLS included (default\: 10s)]:DURATION:_default' \
'--oci-read-timeout=[The longest an OCI registry may stay silent within an answer, its headers included, before the pull fails (default\: 30s)]:DURATION:_default' \
'--oci-pull-timeout=[How long one OCI pull may take in all\: manifest, signatures, config and module layer (default\: 60s)]:DURATION:_default' \
'--oci-max-module-mib=[The largest module layer pulled from an OCI registry, in MiB; a larger one is refused, and one that sends more than it declares is cut off (default\: 32)]:MIB:_default' \
'--no-pooling[Instantiate on demand instead of from the pooling allocator]' \
'--perf-map[Write \`/tmp/perf-<pid>.map\`, so that \`perf record\` / \`perf report\` name the guest'\''s functions (docs/dev/benchmarks.md). The variable takes 1 or 0 as the benches do, as well as true or false]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
&& ret=0
;;
(guests)
_arguments "${_arguments_options[@]}" : \
'--guest-deadline=[Wall-clock budget of one guest evaluation]:GUEST_DEADLINE:_default' \
'--guest-memory-mib=[Linear-memory cap of one guest, in MiB]:GUEST_MEMORY_MIB:_default' \
'--guest-memory-max-mib=[The most a registry entry'\''s \`memoryMiB\` may ask for, in MiB (default\: --guest-memory-mib). Raising it raises no guest'\''s cap\: it admits entries that set a larger one of their own]:MIB:_default' \
'--guest-dir=[Where installed guests live (default\: \`guests/\` beside the binary)]:DIR:_files' \
'--registry=[Registry file mapping jobs and platforms to guest modules (default\: the installed guests)]:FILE:_files' \
'--cache-dir=[Cache directory for compiled guests (default\: no cache)]:DIR:_files' \
'--oci-cache-dir=[Where modules pulled from OCI registries are kept, by digest\: a module pinned by digest and cached here loads without its registry (default\: no cache)]:DIR:_files' \
'*--plain-http-registry=[An OCI registry (\`host\:port\`) reached over plain HTTP, such as one on loopback; repeat for more, or separate them with commas]:HOST:_default' \
'--oci-connect-timeout=[How long connecting to an OCI registry may take, TLS included (default\: 10s)]:DURATION:_default' \
'--oci-read-timeout=[The longest an OCI registry may stay silent within an answer, its headers included, before the pull fails (default\: 30s)]:DURATION:_default' \
'--oci-pull-timeout=[How long one OCI pull may take in all\: manifest, signatures, config and module layer (default\: 60s)]:DURATION:_default' \
'--oci-max-module-mib=[The largest module layer pulled from an OCI registry, in MiB; a larger one is refused, and one that sends more than it declares is cut off (default\: 32)]:MIB:_default' \
'--no-pooling[Instantiate on demand instead of from the pooling allocator]' \
'--perf-map[Write \`/tmp/perf-<pid>.map\`, so that \`perf record\` / \`perf report\` name the guest'\''s functions (docs/dev/benchmarks.md). The variable takes 1 or 0 as the benches do, as well as true or false]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
":: :_mco-host__subcmd__guests_commands" \
"*::: :->guests" \
&& ret=0

    case $state in
    (guests)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:mco-host-guests-command-$line[1]:"
        case $line[1] in
            (test)
_arguments "${_arguments_options[@]}" : \
'(--registry)--guest=[Run every case against this module instead of the registry'\''s (and no candidate)]:FILE:_files' \
'--junit=[Also write a JUnit XML report here]:FILE:_files' \
'--guest-deadline=[Wall-clock budget of one guest evaluation]:GUEST_DEADLINE:_default' \
'--guest-memory-mib=[Linear-memory cap of one guest, in MiB]:GUEST_MEMORY_MIB:_default' \
'--guest-memory-max-mib=[The most a registry entry'\''s \`memoryMiB\` may ask for, in MiB (default\: --guest-memory-mib). Raising it raises no guest'\''s cap\: it admits entries that set a larger one of their own]:MIB:_default' \
'--guest-dir=[Where installed guests live (default\: \`guests/\` beside the binary)]:DIR:_files' \
'--registry=[Registry file mapping jobs and platforms to guest modules (default\: the installed guests)]:FILE:_files' \
'--cache-dir=[Cache directory for compiled guests (default\: no cache)]:DIR:_files' \
'--oci-cache-dir=[Where modules pulled from OCI registries are kept, by digest\: a module pinned by digest and cached here loads without its registry (default\: no cache)]:DIR:_files' \
'*--plain-http-registry=[An OCI registry (\`host\:port\`) reached over plain HTTP, such as one on loopback; repeat for more, or separate them with commas]:HOST:_default' \
'--oci-connect-timeout=[How long connecting to an OCI registry may take, TLS included (default\: 10s)]:DURATION:_default' \
'--oci-read-timeout=[The longest an OCI registry may stay silent within an answer, its headers included, before the pull fails (default\: 30s)]:DURATION:_default' \
'--oci-pull-timeout=[How long one OCI pull may take in all\: manifest, signatures, config and module layer (default\: 60s)]:DURATION:_default' \
'--oci-max-module-mib=[The largest module layer pulled from an OCI registry, in MiB; a larger one is refused, and one that sends more than it declares is cut off (default\: 32)]:MIB:_default' \
'--no-pooling[Instantiate on demand instead of from the pooling allocator]' \
'--perf-map[Write \`/tmp/perf-<pid>.map\`, so that \`perf record\` / \`perf report\` name the guest'\''s functions (docs/dev/benchmarks.md). The variable takes 1 or 0 as the benches do, as well as true or false]' \
'-h[Print help]' \
'--help[Print help]' \
'*::cases -- Case folders (`expected.json` beside the files `eval` reads, named after its flags, and an optional `now.txt`), or folders of them:_files' \
&& ret=0
;;
(bench)
_arguments "${_arguments_options[@]}" : \
'*--cases=[Case folders (as \`guests test\` takes them), or folders of them]:DIR:_files' \
'--runs=[Decisions timed per case]:RUNS:_default' \
'--guest-deadline=[Wall-clock budget of one guest evaluation]:GUEST_DEADLINE:_default' \
'--guest-memory-mib=[Linear-memory cap of one guest, in MiB]:GUEST_MEMORY_MIB:_default' \
'--guest-memory-max-mib=[The most a registry entry'\''s \`memoryMiB\` may ask for, in MiB (default\: --guest-memory-mib). Raising it raises no guest'\''s cap\: it admits entries that set a larger one of their own]:MIB:_default' \
'--guest-dir=[Where installed guests live (default\: \`guests/\` beside the binary)]:DIR:_files' \
'--registry=[Registry file mapping jobs and platforms to guest modules (default\: the installed guests)]:FILE:_files' \
'--cache-dir=[Cache directory for compiled guests (default\: no cache)]:DIR:_files' \
'--oci-cache-dir=[Where modules pulled from OCI registries are kept, by digest\: a module pinned by digest and cached here loads without its registry (default\: no cache)]:DIR:_files' \
'*--plain-http-registry=[An OCI registry (\`host\:port\`) reached over plain HTTP, such as one on loopback; repeat for more, or separate them with commas]:HOST:_default' \
'--oci-connect-timeout=[How long connecting to an OCI registry may take, TLS included (default\: 10s)]:DURATION:_default' \
'--oci-read-timeout=[The longest an OCI registry may stay silent within an answer, its headers included, before the pull fails (default\: 30s)]:DURATION:_default' \
'--oci-pull-timeout=[How long one OCI pull may take in all\: manifest, signatures, config and module layer (default\: 60s)]:DURATION:_default' \
'--oci-max-module-mib=[The largest module layer pulled from an OCI registry, in MiB; a larger one is refused, and one that sends more than it declares is cut off (default\: 32)]:MIB:_default' \
'--no-pooling[Instantiate on demand instead of from the pooling allocator]' \
'--perf-map[Write \`/tmp/perf-<pid>.map\`, so that \`perf record\` / \`perf report\` name the guest'\''s functions (docs/dev/benchmarks.md). The variable takes 1 or 0 as the benches do, as well as true or false]' \
'-h[Print help]' \
'--help[Print help]' \
':module -- The module to measure (a file):_files' \
&& ret=0
;;
(audit)
_arguments "${_arguments_options[@]}" : \
'--job=[The registry entry audited\: \`mcn\` or \`bootImage.<Platform>\` (the Infrastructure'\''s platform type\: \`AWS\`, \`GCP\`, \`Azure\`, …)]:JOB:_default' \
'--guest=[The candidate module (default\: the registry entry'\''s \`candidate\`)]:FILE:_files' \
'--active=[The active module, instead of the registry entry'\''s]:FILE:_files' \
'--nodes=[The Nodes to audit the mcn job on, any number (instead of the cluster'\''s)]:FILE:_default' \
'--pools=[All MachineConfigPools]:FILE:_default' \
'--machineconfigs=[Rendered MachineConfigs]:FILE:_default' \
'--previous=[The stored MachineConfigNodes, any number, matched to the Nodes by name]:FILE:_default' \
'--machineconfiguration=[MachineConfiguration \`cluster\`\: node disruption policies (mcn), enrollment (bootImage)]:FILE:_default' \
'--featuregate=[FeatureGate \`cluster\` (default\: the Default feature set), as for \`eval\`]:FILE:_default' \
'--machinesets=[The MachineSets to audit a bootImage job on, any number (instead of the cluster'\''s)]:FILE:_default' \
'--controlplanemachineset=[The ControlPlaneMachineSet, audited beside the MachineSets]:FILE:_default' \
'--configmap=[The coreos-bootimages ConfigMap]:FILE:_default' \
'--infrastructure=[Infrastructure \`cluster\` (its platform must be the job'\''s)]:FILE:_default' \
'--clusterversion=[ClusterVersion \`version\` (stability gate, multi-arch)]:FILE:_default' \
'--user-data-secrets=[The MachineSets'\'' user-data Secrets, any number, found by the name each MachineSet gives]:FILE:_default' \
'--known-images=[Extra boot images that count as RHCOS (lines, or a ConfigMap)]:FILE:_default' \
'--vcenter=[vSphere\: what the MachineSets'\'' vCenter holds (as \`eval bootimage --vcenter\`)]:FILE:_default' \
'--install-config=[vSphere\: ConfigMap kube-system/cluster-config-v1 (as \`eval bootimage --install-config\`)]:FILE:_default' \
'(--nodes --machinesets)--kubeconfig=[Read the objects from this cluster (default without input files\: the in-cluster config, or \$KUBECONFIG). Read-only\: lists and gets]:FILE:_files' \
'--sample=[Differences (and failures) shown, the first by object name]:N:_default' \
'--guest-deadline=[Wall-clock budget of one guest evaluation]:GUEST_DEADLINE:_default' \
'--guest-memory-mib=[Linear-memory cap of one guest, in MiB]:GUEST_MEMORY_MIB:_default' \
'--guest-memory-max-mib=[The most a registry entry'\''s \`memoryMiB\` may ask for, in MiB (default\: --guest-memory-mib). Raising it raises no guest'\''s cap\: it admits entries that set a larger one of their own]:MIB:_default' \
'--guest-dir=[Where installed guests live (default\: \`guests/\` beside the binary)]:DIR:_files' \
'--registry=[Registry file mapping jobs and platforms to guest modules (default\: the installed guests)]:FILE:_files' \
'--cache-dir=[Cache directory for compiled guests (default\: no cache)]:DIR:_files' \
'--oci-cache-dir=[Where modules pulled from OCI registries are kept, by digest\: a module pinned by digest and cached here loads without its registry (default\: no cache)]:DIR:_files' \
'*--plain-http-registry=[An OCI registry (\`host\:port\`) reached over plain HTTP, such as one on loopback; repeat for more, or separate them with commas]:HOST:_default' \
'--oci-connect-timeout=[How long connecting to an OCI registry may take, TLS included (default\: 10s)]:DURATION:_default' \
'--oci-read-timeout=[The longest an OCI registry may stay silent within an answer, its headers included, before the pull fails (default\: 30s)]:DURATION:_default' \
'--oci-pull-timeout=[How long one OCI pull may take in all\: manifest, signatures, config and module layer (default\: 60s)]:DURATION:_default' \
'--oci-max-module-mib=[The largest module layer pulled from an OCI registry, in MiB; a larger one is refused, and one that sends more than it declares is cut off (default\: 32)]:MIB:_default' \
'--json[Print the report as JSON instead of a table]' \
'--no-pooling[Instantiate on demand instead of from the pooling allocator]' \
'--perf-map[Write \`/tmp/perf-<pid>.map\`, so that \`perf record\` / \`perf report\` name the guest'\''s functions (docs/dev/benchmarks.md). The variable takes 1 or 0 as the benches do, as well as true or false]' \
'-h[Print help]' \
'--help[Print help]' \
&& ret=0
;;
(wit)
_arguments "${_arguments_options[@]}" : \
'--push=[Publish the package to this OCI reference (\`registry/repository\`, tag default\: the package version) in the layout wkg reads, instead of writing files; prints the manifest digest]:REF:_default' \
'--auth-file=[A Docker config.json (or a Secret'\''s \`.dockerconfigjson\`) with credentials for the registry (default\: anonymous)]:FILE:_files' \
'--guest-deadline=[Wall-clock budget of one guest evaluation]:GUEST_DEADLINE:_default' \
'--guest-memory-mib=[Linear-memory cap of one guest, in MiB]:GUEST_MEMORY_MIB:_default' \
'--guest-memory-max-mib=[The most a registry entry'\''s \`memoryMiB\` may ask for, in MiB (default\: --guest-memory-mib). Raising it raises no guest'\''s cap\: it admits entries that set a larger one of their own]:MIB:_default' \
'--guest-dir=[Where installed guests live (default\: \`guests/\` beside the binary)]:DIR:_files' \
'--registry=[Registry file mapping jobs and platforms to guest modules (default\: the installed guests)]:FILE:_files' \
'--cache-dir=[Cache directory for compiled guests (default\: no cache)]:DIR:_files' \
'--oci-cache-dir=[Where modules pulled from OCI registries are kept, by digest\: a module pinned by digest and cached here loads without its registry (default\: no cache)]:DIR:_files' \
'*--plain-http-registry=[An OCI registry (\`host\:port\`) reached over plain HTTP, such as one on loopback; repeat for more, or separate them with commas]:HOST:_default' \
'--oci-connect-timeout=[How long connecting to an OCI registry may take, TLS included (default\: 10s)]:DURATION:_default' \
'--oci-read-timeout=[The longest an OCI registry may stay silent within an answer, its headers included, before the pull fails (default\: 30s)]:DURATION:_default' \
'--oci-pull-timeout=[How long one OCI pull may take in all\: manifest, signatures, config and module layer (default\: 60s)]:DURATION:_default' \
'--oci-max-module-mib=[The largest module layer pulled from an OCI registry, in MiB; a larger one is refused, and one that sends more than it declares is cut off (default\: 32)]:MIB:_default' \
'--no-pooling[Instantiate on demand instead of from the pooling allocator]' \
'--perf-map[Write \`/tmp/perf-<pid>.map\`, so that \`perf record\` / \`perf report\` name the guest'\''s functions (docs/dev/benchmarks.md). The variable takes 1 or 0 as the benches do, as well as true or false]' \
'-h[Print help]' \
'--help[Print help]' \
'::dir -- Where to write the files:_files' \
&& ret=0
;;
(new)
_arguments "${_arguments_options[@]}" : \
'--job=[The job the guest serves]:JOB:((mcn\:"The MachineConfigNode job (world \`node-state-reporter\`)"
bootImage\:"The boot image job of one platform (world \`boot-image-selector\`)"))' \
'--platform=[For \`--job bootImage\`\: the Infrastructure \`status.platformStatus.type\` the guest serves (\`GCP\`, \`AWS\`, \`Azure\`, \`Nutanix\`, …)]:NAME:_default' \
'--guest-deadline=[Wall-clock budget of one guest evaluation]:GUEST_DEADLINE:_default' \
'--guest-memory-mib=[Linear-memory cap of one guest, in MiB]:GUEST_MEMORY_MIB:_default' \
'--guest-memory-max-mib=[The most a registry entry'\''s \`memoryMiB\` may ask for, in MiB (default\: --guest-memory-mib). Raising it raises no guest'\''s cap\: it admits entries that set a larger one of their own]:MIB:_default' \
'--guest-dir=[Where installed guests live (default\: \`guests/\` beside the binary)]:DIR:_files' \
'--registry=[Registry file mapping jobs and platforms to guest modules (default\: the installed guests)]:FILE:_files' \
'--cache-dir=[Cache directory for compiled guests (default\: no cache)]:DIR:_files' \
'--oci-cache-dir=[Where modules pulled from OCI registries are kept, by digest\: a module pinned by digest and cached here loads without its registry (default\: no cache)]:DIR:_files' \
'*--plain-http-registry=[An OCI registry (\`host\:port\`) reached over plain HTTP, such as one on loopback; repeat for more, or separate them with commas]:HOST:_default' \
'--oci-connect-timeout=[How long connecting to an OCI registry may take, TLS included (default\: 10s)]:DURATION:_default' \
'--oci-read-timeout=[The longest an OCI registry may stay silent within an answer, its headers included, before the pull fails (default\: 30s)]:DURATION:_default' \
'--oci-pull-timeout=[How long one OCI pull may take in all\: manifest, signatures, config and module layer (default\: 60s)]:DURATION:_default' \
'--oci-max-module-mib=[The largest module layer pulled from an OCI registry, in MiB; a larger one is refused, and one that sends more than it declares is cut off (default\: 32)]:MIB:_default' \
'--no-pooling[Instantiate on demand instead of from the pooling allocator]' \
'--perf-map[Write \`/tmp/perf-<pid>.map\`, so that \`perf record\` / \`perf report\` name the guest'\''s functions (docs/dev/benchmarks.md). The variable takes 1 or 0 as the benches do, as well as true or false]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
':dir -- The crate'\''s folder, new or empty; its name is the crate'\''s:_files' \
&& ret=0
;;
(verify)
_arguments "${_arguments_options[@]}" : \
'(--guest)--entry=[A registry entry in its full form, or a MachineConfigGuest, whose \`verify\` (and, without REF, \`oci\`) is used; relative paths follow the file]:FILE:_files' \
'--guest=[The job whose entry in \`--registry\` gives the \`verify\` (and, without REF, the module)\: \`mcn\`, \`bootImage.AWS\`]:JOB:_default' \
'*--key=[A cosign public key; repeat for several, any one of which may have signed the module]:FILE:_files' \
'--trusted-root=[A Sigstore trusted_root.json the certificates of \`--identity\` chain to]:FILE:_files' \
'*--identity=[A certificate subject (SAN email, URI or DNS name) that may have signed, exactly; repeat for several]:SUBJECT:_default' \
'*--identity-prefix=[A URI prefix (at a path boundary) a signer'\''s subject may start with]:URL:_default' \
'--issuer=[The OIDC issuer every \`--identity\` must have been issued by]:URL:_default' \
'*--cluster-image-policy=[A ClusterImagePolicy (YAML or JSON, as \`kubectl get -o yaml\` prints it) whose signer may have signed, if its scopes cover the module]:FILE:_files' \
'--auth-file=[A Docker config.json (or a Secret'\''s \`.dockerconfigjson\`) with credentials for the registry (default\: anonymous)]:FILE:_files' \
'--guest-deadline=[Wall-clock budget of one guest evaluation]:GUEST_DEADLINE:_default' \
'--guest-memory-mib=[Linear-memory cap of one guest, in MiB]:GUEST_MEMORY_MIB:_default' \
'--guest-memory-max-mib=[The most a registry entry'\''s \`memoryMiB\` may ask for, in MiB (default\: --guest-memory-mib). Raising it raises no guest'\''s cap\: it admits entries that set a larger one of their own]:MIB:_default' \
'--guest-dir=[Where installed guests live (default\: \`guests/\` beside the binary)]:DIR:_files' \
'--registry=[Registry file mapping jobs and platforms to guest modules (default\: the installed guests)]:FILE:_files' \
'--cache-dir=[Cache directory for compiled guests (default\: no cache)]:DIR:_files' \
'--oci-cache-dir=[Where modules pulled from OCI registries are kept, by digest\: a module pinned by digest and cached here loads without its registry (default\: no cache)]:DIR:_files' \
'*--plain-http-registry=[An OCI registry (\`host\:port\`) reached over plain HTTP, such as one on loopback; repeat for more, or separate them with commas]:HOST:_default' \
'--oci-connect-timeout=[How long connecting to an OCI registry may take, TLS included (default\: 10s)]:DURATION:_default' \
'--oci-read-timeout=[The longest an OCI registry may stay silent within an answer, its headers included, before the pull fails (default\: 30s)]:DURATION:_default' \
'--oci-pull-timeout=[How long one OCI pull may take in all\: manifest, signatures, config and module layer (default\: 60s)]:DURATION:_default' \
'--oci-max-module-mib=[The largest module layer pulled from an OCI registry, in MiB; a larger one is refused, and one that sends more than it declares is cut off (default\: 32)]:MIB:_default' \
'--no-pooling[Instantiate on demand instead of from the pooling allocator]' \
'--perf-map[Write \`/tmp/perf-<pid>.map\`, so that \`perf record\` / \`perf report\` name the guest'\''s functions (docs/dev/benchmarks.md). The variable takes 1 or 0 as the benches do, as well as true or false]' \
'-h[Print help]' \
'--help[Print help]' \
'::target -- An OCI reference (`registry/repository\[\:tag\]\[@sha256\:…\]`), or a file holding an entry (as `--entry`):_default' \
&& ret=0
;;
(push)
_arguments "${_arguments_options[@]}" : \
'--auth-file=[A Docker config.json (or a Secret'\''s \`.dockerconfigjson\`) with credentials for the registry (default\: anonymous)]:FILE:_files' \
'--guest-deadline=[Wall-clock budget of one guest evaluation]:GUEST_DEADLINE:_default' \
'--guest-memory-mib=[Linear-memory cap of one guest, in MiB]:GUEST_MEMORY_MIB:_default' \
'--guest-memory-max-mib=[The most a registry entry'\''s \`memoryMiB\` may ask for, in MiB (default\: --guest-memory-mib). Raising it raises no guest'\''s cap\: it admits entries that set a larger one of their own]:MIB:_default' \
'--guest-dir=[Where installed guests live (default\: \`guests/\` beside the binary)]:DIR:_files' \
'--registry=[Registry file mapping jobs and platforms to guest modules (default\: the installed guests)]:FILE:_files' \
'--cache-dir=[Cache directory for compiled guests (default\: no cache)]:DIR:_files' \
'--oci-cache-dir=[Where modules pulled from OCI registries are kept, by digest\: a module pinned by digest and cached here loads without its registry (default\: no cache)]:DIR:_files' \
'*--plain-http-registry=[An OCI registry (\`host\:port\`) reached over plain HTTP, such as one on loopback; repeat for more, or separate them with commas]:HOST:_default' \
'--oci-connect-timeout=[How long connecting to an OCI registry may take, TLS included (default\: 10s)]:DURATION:_default' \
'--oci-read-timeout=[The longest an OCI registry may stay silent within an answer, its headers included, before the pull fails (default\: 30s)]:DURATION:_default' \
'--oci-pull-timeout=[How long one OCI pull may take in all\: manifest, signatures, config and module layer (default\: 60s)]:DURATION:_default' \
'--oci-max-module-mib=[The largest module layer pulled from an OCI registry, in MiB; a larger one is refused, and one that sends more than it declares is cut off (default\: 32)]:MIB:_default' \
'--no-pooling[Instantiate on demand instead of from the pooling allocator]' \
'--perf-map[Write \`/tmp/perf-<pid>.map\`, so that \`perf record\` / \`perf report\` name the guest'\''s functions (docs/dev/benchmarks.md). The variable takes 1 or 0 as the benches do, as well as true or false]' \
'-h[Print help]' \
'--help[Print help]' \
':file:_files' \
':reference -- `registry/repository\:tag`:_default' \
&& ret=0
;;
(pull)
_arguments "${_arguments_options[@]}" : \
'*--key=[A cosign public key (\`cosign.pub\`); repeat for several, any one of which may have signed the module]:FILE:_files' \
'-o+[Where to write the module (default\: the repository'\''s last part with \`.wasm\`, in the current directory)]:FILE:_files' \
'--output=[Where to write the module (default\: the repository'\''s last part with \`.wasm\`, in the current directory)]:FILE:_files' \
'--auth-file=[A Docker config.json (or a Secret'\''s \`.dockerconfigjson\`) with credentials for the registry (default\: anonymous)]:FILE:_files' \
'--guest-deadline=[Wall-clock budget of one guest evaluation]:GUEST_DEADLINE:_default' \
'--guest-memory-mib=[Linear-memory cap of one guest, in MiB]:GUEST_MEMORY_MIB:_default' \
'--guest-memory-max-mib=[The most a registry entry'\''s \`memoryMiB\` may ask for, in MiB (default\: --guest-memory-mib). Raising it raises no guest'\''s cap\: it admits entries that set a larger one of their own]:MIB:_default' \
'--guest-dir=[Where installed guests live (default\: \`guests/\` beside the binary)]:DIR:_files' \
'--registry=[Registry file mapping jobs and platforms to guest modules (default\: the installed guests)]:FILE:_files' \
'--cache-dir=[Cache directory for compiled guests (default\: no cache)]:DIR:_files' \
'--oci-cache-dir=[Where modules pulled from OCI registries are kept, by digest\: a module pinned by digest and cached here loads without its registry (default\: no cache)]:DIR:_files' \
'*--plain-http-registry=[An OCI registry (\`host\:port\`) reached over plain HTTP, such as one on loopback; repeat for more, or separate them with commas]:HOST:_default' \
'--oci-connect-timeout=[How long connecting to an OCI registry may take, TLS included (default\: 10s)]:DURATION:_default' \
'--oci-read-timeout=[The longest an OCI registry may stay silent within an answer, its headers included, before the pull fails (default\: 30s)]:DURATION:_default' \
'--oci-pull-timeout=[How long one OCI pull may take in all\: manifest, signatures, config and module layer (default\: 60s)]:DURATION:_default' \
'--oci-max-module-mib=[The largest module layer pulled from an OCI registry, in MiB; a larger one is refused, and one that sends more than it declares is cut off (default\: 32)]:MIB:_default' \
'--no-pooling[Instantiate on demand instead of from the pooling allocator]' \
'--perf-map[Write \`/tmp/perf-<pid>.map\`, so that \`perf record\` / \`perf report\` name the guest'\''s functions (docs/dev/benchmarks.md). The variable takes 1 or 0 as the benches do, as well as true or false]' \
'-h[Print help]' \
'--help[Print help]' \
':reference:_default' \
&& ret=0
;;
(inspect)
_arguments "${_arguments_options[@]}" : \
'*--key=[A cosign public key (\`cosign.pub\`); repeat for several, any one of which may have signed the module]:FILE:_files' \
'--auth-file=[A Docker config.json (or a Secret'\''s \`.dockerconfigjson\`) with credentials for the registry (default\: anonymous)]:FILE:_files' \
'--guest-deadline=[Wall-clock budget of one guest evaluation]:GUEST_DEADLINE:_default' \
'--guest-memory-mib=[Linear-memory cap of one guest, in MiB]:GUEST_MEMORY_MIB:_default' \
'--guest-memory-max-mib=[The most a registry entry'\''s \`memoryMiB\` may ask for, in MiB (default\: --guest-memory-mib). Raising it raises no guest'\''s cap\: it admits entries that set a larger one of their own]:MIB:_default' \
'--guest-dir=[Where installed guests live (default\: \`guests/\` beside the binary)]:DIR:_files' \
'--registry=[Registry file mapping jobs and platforms to guest modules (default\: the installed guests)]:FILE:_files' \
'--cache-dir=[Cache directory for compiled guests (default\: no cache)]:DIR:_files' \
'--oci-cache-dir=[Where modules pulled from OCI registries are kept, by digest\: a module pinned by digest and cached here loads without its registry (default\: no cache)]:DIR:_files' \
'*--plain-http-registry=[An OCI registry (\`host\:port\`) reached over plain HTTP, such as one on loopback; repeat for more, or separate them with commas]:HOST:_default' \
'--oci-connect-timeout=[How long connecting to an OCI registry may take, TLS included (default\: 10s)]:DURATION:_default' \
'--oci-read-timeout=[The longest an OCI registry may stay silent within an answer, its headers included, before the pull fails (default\: 30s)]:DURATION:_default' \
'--oci-pull-timeout=[How long one OCI pull may take in all\: manifest, signatures, config and module layer (default\: 60s)]:DURATION:_default' \
'--oci-max-module-mib=[The largest module layer pulled from an OCI registry, in MiB; a larger one is refused, and one that sends more than it declares is cut off (default\: 32)]:MIB:_default' \
'--no-pooling[Instantiate on demand instead of from the pooling allocator]' \
'--perf-map[Write \`/tmp/perf-<pid>.map\`, so that \`perf record\` / \`perf report\` name the guest'\''s functions (docs/dev/benchmarks.md). The variable takes 1 or 0 as the benches do, as well as true or false]' \
'-h[Print help]' \
'--help[Print help]' \
':target:_default' \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
":: :_mco-host__subcmd__guests__subcmd__help_commands" \
"*::: :->help" \
&& ret=0

    case $state in
    (help)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:mco-host-guests-help-command-$line[1]:"
        case $line[1] in
            (test)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(bench)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(audit)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(wit)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(new)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(verify)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(push)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(pull)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(inspect)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
        esac
    ;;
esac
;;
(status)
_arguments "${_arguments_options[@]}" : \
'--kubeconfig=[Kubeconfig to use (default\: in-cluster config, or \$KUBECONFIG)]:FILE:_files' \
'-o+[Output format]:OUTPUT:(text json)' \
'--output=[Output format]:OUTPUT:(text json)' \
'--admin-url=[The host'\''s admin address (\`http\://HOST\:PORT\`), to show which guest serves each job (\`/guests\`) and shadow agreement (\`/metrics\`). The host guards both with the cluster'\''s authentication\: the bearer token in \$MCO_ADMIN_TOKEN (e.g. \`oc whoami -t\`; an environment variable, to stay out of process listings) is sent, and its user must be allowed to \`get\` \`/guests\`, \`/ownership\` and \`/metrics\`]:URL:_default' \
'--namespace=[Namespace of mco-host (where its boot image record lives)]:NAMESPACE:_default' \
'--now=[The time to compute durations against (RFC 3339; for tests)]:TIME:_default' \
'--stuck-after-drain=[A drain lasting longer than this is marked stuck]:STUCK_AFTER_DRAIN:_default' \
'--stuck-after=[Any other phase lasting longer than this is marked stuck]:STUCK_AFTER:_default' \
'--boot-image-state=[The boot image controller'\''s record ConfigMap]:NAME:_default' \
'--guest-deadline=[Wall-clock budget of one guest evaluation]:GUEST_DEADLINE:_default' \
'--guest-memory-mib=[Linear-memory cap of one guest, in MiB]:GUEST_MEMORY_MIB:_default' \
'--guest-memory-max-mib=[The most a registry entry'\''s \`memoryMiB\` may ask for, in MiB (default\: --guest-memory-mib). Raising it raises no guest'\''s cap\: it admits entries that set a larger one of their own]:MIB:_default' \
'--guest-dir=[Where installed guests live (default\: \`guests/\` beside the binary)]:DIR:_files' \
'--registry=[Registry file mapping jobs and platforms to guest modules (default\: the installed guests)]:FILE:_files' \
'--cache-dir=[Cache directory for compiled guests (default\: no cache)]:DIR:_files' \
'--oci-cache-dir=[Where modules pulled from OCI registries are kept, by digest\: a module pinned by digest and cached here loads without its registry (default\: no cache)]:DIR:_files' \
'*--plain-http-registry=[An OCI registry (\`host\:port\`) reached over plain HTTP, such as one on loopback; repeat for more, or separate them with commas]:HOST:_default' \
'--oci-connect-timeout=[How long connecting to an OCI registry may take, TLS included (default\: 10s)]:DURATION:_default' \
'--oci-read-timeout=[The longest an OCI registry may stay silent within an answer, its headers included, before the pull fails (default\: 30s)]:DURATION:_default' \
'--oci-pull-timeout=[How long one OCI pull may take in all\: manifest, signatures, config and module layer (default\: 60s)]:DURATION:_default' \
'--oci-max-module-mib=[The largest module layer pulled from an OCI registry, in MiB; a larger one is refused, and one that sends more than it declares is cut off (default\: 32)]:MIB:_default' \
'--watch[Keep watching and redraw on every change (JSON\: one document a line)]' \
'--no-pooling[Instantiate on demand instead of from the pooling allocator]' \
'--perf-map[Write \`/tmp/perf-<pid>.map\`, so that \`perf record\` / \`perf report\` name the guest'\''s functions (docs/dev/benchmarks.md). The variable takes 1 or 0 as the benches do, as well as true or false]' \
'-h[Print help]' \
'--help[Print help]' \
&& ret=0
;;
(preflight)
_arguments "${_arguments_options[@]}" : \
'--kubeconfig=[Kubeconfig to use (default\: in-cluster config, or \$KUBECONFIG)]:FILE:_files' \
'--namespace=[Namespace of the host'\''s ServiceAccount]:NAMESPACE:_default' \
'--service-account=[The host'\''s ServiceAccount, whose permissions are checked]:NAME:_default' \
'--guest-deadline=[Wall-clock budget of one guest evaluation]:GUEST_DEADLINE:_default' \
'--guest-memory-mib=[Linear-memory cap of one guest, in MiB]:GUEST_MEMORY_MIB:_default' \
'--guest-memory-max-mib=[The most a registry entry'\''s \`memoryMiB\` may ask for, in MiB (default\: --guest-memory-mib). Raising it raises no guest'\''s cap\: it admits entries that set a larger one of their own]:MIB:_default' \
'--guest-dir=[Where installed guests live (default\: \`guests/\` beside the binary)]:DIR:_files' \
'--registry=[Registry file mapping jobs and platforms to guest modules (default\: the installed guests)]:FILE:_files' \
'--cache-dir=[Cache directory for compiled guests (default\: no cache)]:DIR:_files' \
'--oci-cache-dir=[Where modules pulled from OCI registries are kept, by digest\: a module pinned by digest and cached here loads without its registry (default\: no cache)]:DIR:_files' \
'*--plain-http-registry=[An OCI registry (\`host\:port\`) reached over plain HTTP, such as one on loopback; repeat for more, or separate them with commas]:HOST:_default' \
'--oci-connect-timeout=[How long connecting to an OCI registry may take, TLS included (default\: 10s)]:DURATION:_default' \
'--oci-read-timeout=[The longest an OCI registry may stay silent within an answer, its headers included, before the pull fails (default\: 30s)]:DURATION:_default' \
'--oci-pull-timeout=[How long one OCI pull may take in all\: manifest, signatures, config and module layer (default\: 60s)]:DURATION:_default' \
'--oci-max-module-mib=[The largest module layer pulled from an OCI registry, in MiB; a larger one is refused, and one that sends more than it declares is cut off (default\: 32)]:MIB:_default' \
'--json[Print JSON instead of a table]' \
'--no-pooling[Instantiate on demand instead of from the pooling allocator]' \
'--perf-map[Write \`/tmp/perf-<pid>.map\`, so that \`perf record\` / \`perf report\` name the guest'\''s functions (docs/dev/benchmarks.md). The variable takes 1 or 0 as the benches do, as well as true or false]' \
'-h[Print help]' \
'--help[Print help]' \
&& ret=0
;;
(completions)
_arguments "${_arguments_options[@]}" : \
'--guest-deadline=[Wall-clock budget of one guest evaluation]:GUEST_DEADLINE:_default' \
'--guest-memory-mib=[Linear-memory cap of one guest, in MiB]:GUEST_MEMORY_MIB:_default' \
'--guest-memory-max-mib=[The most a registry entry'\''s \`memoryMiB\` may ask for, in MiB (default\: --guest-memory-mib). Raising it raises no guest'\''s cap\: it admits entries that set a larger one of their own]:MIB:_default' \
'--guest-dir=[Where installed guests live (default\: \`guests/\` beside the binary)]:DIR:_files' \
'--registry=[Registry file mapping jobs and platforms to guest modules (default\: the installed guests)]:FILE:_files' \
'--cache-dir=[Cache directory for compiled guests (default\: no cache)]:DIR:_files' \
'--oci-cache-dir=[Where modules pulled from OCI registries are kept, by digest\: a module pinned by digest and cached here loads without its registry (default\: no cache)]:DIR:_files' \
'*--plain-http-registry=[An OCI registry (\`host\:port\`) reached over plain HTTP, such as one on loopback; repeat for more, or separate them with commas]:HOST:_default' \
'--oci-connect-timeout=[How long connecting to an OCI registry may take, TLS included (default\: 10s)]:DURATION:_default' \
'--oci-read-timeout=[The longest an OCI registry may stay silent within an answer, its headers included, before the pull fails (default\: 30s)]:DURATION:_default' \
'--oci-pull-timeout=[How long one OCI pull may take in all\: manifest, signatures, config and module layer (default\: 60s)]:DURATION:_default' \
'--oci-max-module-mib=[The largest module layer pulled from an OCI registry, in MiB; a larger one is refused, and one that sends more than it declares is cut off (default\: 32)]:MIB:_default' \
'--no-pooling[Instantiate on demand instead of from the pooling allocator]' \
'--perf-map[Write \`/tmp/perf-<pid>.map\`, so that \`perf record\` / \`perf report\` name the guest'\''s functions (docs/dev/benchmarks.md). The variable takes 1 or 0 as the benches do, as well as true or false]' \
'-h[Print help]' \
'--help[Print help]' \
':shell -- The shell to complete for:(bash elvish fish powershell zsh)' \
&& ret=0
;;
(docs)
_arguments "${_arguments_options[@]}" : \
'--out-dir=[Write \`cli.md\`, \`metric-families.md\` and \`completions/mco-host.{bash,zsh,fish}\` under this directory (\`make docs-ref\` gives \`docs/reference\`)]:DIR:_files' \
'--guest-deadline=[Wall-clock budget of one guest evaluation]:GUEST_DEADLINE:_default' \
'--guest-memory-mib=[Linear-memory cap of one guest, in MiB]:GUEST_MEMORY_MIB:_default' \
'--guest-memory-max-mib=[The most a registry entry'\''s \`memoryMiB\` may ask for, in MiB (default\: --guest-memory-mib). Raising it raises no guest'\''s cap\: it admits entries that set a larger one of their own]:MIB:_default' \
'--guest-dir=[Where installed guests live (default\: \`guests/\` beside the binary)]:DIR:_files' \
'--registry=[Registry file mapping jobs and platforms to guest modules (default\: the installed guests)]:FILE:_files' \
'--cache-dir=[Cache directory for compiled guests (default\: no cache)]:DIR:_files' \
'--oci-cache-dir=[Where modules pulled from OCI registries are kept, by digest\: a module pinned by digest and cached here loads without its registry (default\: no cache)]:DIR:_files' \
'*--plain-http-registry=[An OCI registry (\`host\:port\`) reached over plain HTTP, such as one on loopback; repeat for more, or separate them with commas]:HOST:_default' \
'--oci-connect-timeout=[How long connecting to an OCI registry may take, TLS included (default\: 10s)]:DURATION:_default' \
'--oci-read-timeout=[The longest an OCI registry may stay silent within an answer, its headers included, before the pull fails (default\: 30s)]:DURATION:_default' \
'--oci-pull-timeout=[How long one OCI pull may take in all\: manifest, signatures, config and module layer (default\: 60s)]:DURATION:_default' \
'--oci-max-module-mib=[The largest module layer pulled from an OCI registry, in MiB; a larger one is refused, and one that sends more than it declares is cut off (default\: 32)]:MIB:_default' \
'--no-pooling[Instantiate on demand instead of from the pooling allocator]' \
'--perf-map[Write \`/tmp/perf-<pid>.map\`, so that \`perf record\` / \`perf report\` name the guest'\''s functions (docs/dev/benchmarks.md). The variable takes 1 or 0 as the benches do, as well as true or false]' \
'-h[Print help]' \
'--help[Print help]' \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
":: :_mco-host__subcmd__help_commands" \
"*::: :->help" \
&& ret=0

    case $state in
    (help)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:mco-host-help-command-$line[1]:"
        case $line[1] in
            (eval)
_arguments "${_arguments_options[@]}" : \
":: :_mco-host__subcmd__help__subcmd__eval_commands" \
"*::: :->eval" \
&& ret=0

    case $state in
    (eval)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:mco-host-help-eval-command-$line[1]:"
        case $line[1] in
            (mcn)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(bootimage)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
(run)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(crds)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(guests)
_arguments "${_arguments_options[@]}" : \
":: :_mco-host__subcmd__help__subcmd__guests_commands" \
"*::: :->guests" \
&& ret=0

    case $state in
    (guests)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:mco-host-help-guests-command-$line[1]:"
        case $line[1] in
            (test)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(bench)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(audit)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(wit)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(new)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(verify)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(push)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(pull)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(inspect)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
(status)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(preflight)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(completions)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(docs)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
        esac
    ;;
esac
}

(( $+functions[_mco-host_commands] )) ||
_mco-host_commands() {
    local commands; commands=(
'eval:Run one guest on objects read from files, without a cluster' \
'run:Run the controllers in the cluster' \
'crds:Print the CustomResourceDefinitions this host owns, as YAML' \
'guests:Write, test, time, compare, verify and publish guests, or check the registry'\''s' \
'status:Show the update of every pool, the nodes in flight, boot images and guests at a glance (\`kubectl mco status\` as a kubectl plugin)' \
'preflight:Before installing\: which ownership mode (observe, own) each job can run in on this cluster, and why (the MachineConfigNode CRD, the Machine Config Operator'\''s writers seen, the host'\''s RBAC)' \
'completions:Print the shell completion script for SHELL (e.g. \`source <(mco-host completions bash)\`)' \
'docs:Write the generated references (CLI, completions) under a directory\: \`make docs-ref\`' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'mco-host commands' commands "$@"
}
(( $+functions[_mco-host__subcmd__completions_commands] )) ||
_mco-host__subcmd__completions_commands() {
    local commands; commands=()
    _describe -t commands 'mco-host completions commands' commands "$@"
}
(( $+functions[_mco-host__subcmd__crds_commands] )) ||
_mco-host__subcmd__crds_commands() {
    local commands; commands=()
    _describe -t commands 'mco-host crds commands' commands "$@"
}
(( $+functions[_mco-host__subcmd__docs_commands] )) ||
_mco-host__subcmd__docs_commands() {
    local commands; commands=()
    _describe -t commands 'mco-host docs commands' commands "$@"
}
(( $+functions[_mco-host__subcmd__eval_commands] )) ||
_mco-host__subcmd__eval_commands() {
    local commands; commands=(
'mcn:Derive a node'\''s MachineConfigNode' \
'bootimage:Decide a MachineSet'\''s boot image update' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'mco-host eval commands' commands "$@"
}
(( $+functions[_mco-host__subcmd__eval__subcmd__bootimage_commands] )) ||
_mco-host__subcmd__eval__subcmd__bootimage_commands() {
    local commands; commands=()
    _describe -t commands 'mco-host eval bootimage commands' commands "$@"
}
(( $+functions[_mco-host__subcmd__eval__subcmd__help_commands] )) ||
_mco-host__subcmd__eval__subcmd__help_commands() {
    local commands; commands=(
'mcn:Derive a node'\''s MachineConfigNode' \
'bootimage:Decide a MachineSet'\''s boot image update' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'mco-host eval help commands' commands "$@"
}
(( $+functions[_mco-host__subcmd__eval__subcmd__help__subcmd__bootimage_commands] )) ||
_mco-host__subcmd__eval__subcmd__help__subcmd__bootimage_commands() {
    local commands; commands=()
    _describe -t commands 'mco-host eval help bootimage commands' commands "$@"
}
(( $+functions[_mco-host__subcmd__eval__subcmd__help__subcmd__help_commands] )) ||
_mco-host__subcmd__eval__subcmd__help__subcmd__help_commands() {
    local commands; commands=()
    _describe -t commands 'mco-host eval help help commands' commands "$@"
}
(( $+functions[_mco-host__subcmd__eval__subcmd__help__subcmd__mcn_commands] )) ||
_mco-host__subcmd__eval__subcmd__help__subcmd__mcn_commands() {
    local commands; commands=()
    _describe -t commands 'mco-host eval help mcn commands' commands "$@"
}
(( $+functions[_mco-host__subcmd__eval__subcmd__mcn_commands] )) ||
_mco-host__subcmd__eval__subcmd__mcn_commands() {
    local commands; commands=()
    _describe -t commands 'mco-host eval mcn commands' commands "$@"
}
(( $+functions[_mco-host__subcmd__guests_commands] )) ||
_mco-host__subcmd__guests_commands() {
    local commands; commands=(
'test:Run case folders (the layout of tests/golden/<job>/) against a module, or against each registry entry'\''s module and candidate; every case is reported, a patch must converge to noop, exit status 1 if any case fails' \
'bench:Time a module on case folders (p50/p99 per decision, each in a fresh instance, as \`run\` gives each node) and measure its compile time, peak linear memory and size, beside the deadline and memoryMiB its \`--registry\` entry (or the host'\''s defaults) gives it; exit status 1 when it does not fit them' \
'audit:Decide every object of one job with two modules, a candidate and the active one, from files or the cluster'\''s current objects, and count where they agree, differ or fail, with a sample of the differences; exit status 0 once compared (whatever the differences), 2 on bad input, 3 when a module cannot load' \
'wit:Write the WIT package guests are built against (\`mco\:machine-config@<version>\`, the very files this binary was built with) into DIR, for wit-bindgen, componentize-py or any other component tooling; or, with \`--push\`, publish it as wkg does' \
'new:Make a Rust guest crate for a job\: the WIT package, a decision to start from, two sample cases and the one command that builds the component and runs \`guests test\` on them' \
'verify:Check a module'\''s cosign signatures against a signature policy (an entry'\''s \`verify\`, or keys, identities and ClusterImagePolicies given as flags) and print what each signature proved\: signer, issuer, signing time, log entry and the requirement it met; exit status 2 with the refusal \`run\` would give otherwise' \
'push:Push a guest component as an OCI artifact (config application/vnd.wasm.config.v0+json with its exports and imports, one application/wasm layer); prints the manifest digest' \
'pull:Pull a guest module (CNCF or Kubewarden layout) into a file; with \`--key\`, only if a cosign signature verifies under one of the keys' \
'inspect:Show a module'\''s world, WIT version, imports, size and digest, and whether \`run\` would load it (exit status 3 when it would refuse it), from a file, or from a registry for \`oci\:REF\` or a reference that starts with a registry host (\`quay.io/…\`, \`host\:port/…\`), with the cosign signatures the registry holds for it (verified when \`--key\` is given)' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'mco-host guests commands' commands "$@"
}
(( $+functions[_mco-host__subcmd__guests__subcmd__audit_commands] )) ||
_mco-host__subcmd__guests__subcmd__audit_commands() {
    local commands; commands=()
    _describe -t commands 'mco-host guests audit commands' commands "$@"
}
(( $+functions[_mco-host__subcmd__guests__subcmd__bench_commands] )) ||
_mco-host__subcmd__guests__subcmd__bench_commands() {
    local commands; commands=()
    _describe -t commands 'mco-host guests bench commands' commands "$@"
}
(( $+functions[_mco-host__subcmd__guests__subcmd__help_commands] )) ||
_mco-host__subcmd__guests__subcmd__help_commands() {
    local commands; commands=(
'test:Run case folders (the layout of tests/golden/<job>/) against a module, or against each registry entry'\''s module and candidate; every case is reported, a patch must converge to noop, exit status 1 if any case fails' \
'bench:Time a module on case folders (p50/p99 per decision, each in a fresh instance, as \`run\` gives each node) and measure its compile time, peak linear memory and size, beside the deadline and memoryMiB its \`--registry\` entry (or the host'\''s defaults) gives it; exit status 1 when it does not fit them' \
'audit:Decide every object of one job with two modules, a candidate and the active one, from files or the cluster'\''s current objects, and count where they agree, differ or fail, with a sample of the differences; exit status 0 once compared (whatever the differences), 2 on bad input, 3 when a module cannot load' \
'wit:Write the WIT package guests are built against (\`mco\:machine-config@<version>\`, the very files this binary was built with) into DIR, for wit-bindgen, componentize-py or any other component tooling; or, with \`--push\`, publish it as wkg does' \
'new:Make a Rust guest crate for a job\: the WIT package, a decision to start from, two sample cases and the one command that builds the component and runs \`guests test\` on them' \
'verify:Check a module'\''s cosign signatures against a signature policy (an entry'\''s \`verify\`, or keys, identities and ClusterImagePolicies given as flags) and print what each signature proved\: signer, issuer, signing time, log entry and the requirement it met; exit status 2 with the refusal \`run\` would give otherwise' \
'push:Push a guest component as an OCI artifact (config application/vnd.wasm.config.v0+json with its exports and imports, one application/wasm layer); prints the manifest digest' \
'pull:Pull a guest module (CNCF or Kubewarden layout) into a file; with \`--key\`, only if a cosign signature verifies under one of the keys' \
'inspect:Show a module'\''s world, WIT version, imports, size and digest, and whether \`run\` would load it (exit status 3 when it would refuse it), from a file, or from a registry for \`oci\:REF\` or a reference that starts with a registry host (\`quay.io/…\`, \`host\:port/…\`), with the cosign signatures the registry holds for it (verified when \`--key\` is given)' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'mco-host guests help commands' commands "$@"
}
(( $+functions[_mco-host__subcmd__guests__subcmd__help__subcmd__audit_commands] )) ||
_mco-host__subcmd__guests__subcmd__help__subcmd__audit_commands() {
    local commands; commands=()
    _describe -t commands 'mco-host guests help audit commands' commands "$@"
}
(( $+functions[_mco-host__subcmd__guests__subcmd__help__subcmd__bench_commands] )) ||
_mco-host__subcmd__guests__subcmd__help__subcmd__bench_commands() {
    local commands; commands=()
    _describe -t commands 'mco-host guests help bench commands' commands "$@"
}
(( $+functions[_mco-host__subcmd__guests__subcmd__help__subcmd__help_commands] )) ||
_mco-host__subcmd__guests__subcmd__help__subcmd__help_commands() {
    local commands; commands=()
    _describe -t commands 'mco-host guests help help commands' commands "$@"
}
(( $+functions[_mco-host__subcmd__guests__subcmd__help__subcmd__inspect_commands] )) ||
_mco-host__subcmd__guests__subcmd__help__subcmd__inspect_commands() {
    local commands; commands=()
    _describe -t commands 'mco-host guests help inspect commands' commands "$@"
}
(( $+functions[_mco-host__subcmd__guests__subcmd__help__subcmd__new_commands] )) ||
_mco-host__subcmd__guests__subcmd__help__subcmd__new_commands() {
    local commands; commands=()
    _describe -t commands 'mco-host guests help new commands' commands "$@"
}
(( $+functions[_mco-host__subcmd__guests__subcmd__help__subcmd__pull_commands] )) ||
_mco-host__subcmd__guests__subcmd__help__subcmd__pull_commands() {
    local commands; commands=()
    _describe -t commands 'mco-host guests help pull commands' commands "$@"
}
(( $+functions[_mco-host__subcmd__guests__subcmd__help__subcmd__push_commands] )) ||
_mco-host__subcmd__guests__subcmd__help__subcmd__push_commands() {
    local commands; commands=()
    _describe -t commands 'mco-host guests help push commands' commands "$@"
}
(( $+functions[_mco-host__subcmd__guests__subcmd__help__subcmd__test_commands] )) ||
_mco-host__subcmd__guests__subcmd__help__subcmd__test_commands() {
    local commands; commands=()
    _describe -t commands 'mco-host guests help test commands' commands "$@"
}
(( $+functions[_mco-host__subcmd__guests__subcmd__help__subcmd__verify_commands] )) ||
_mco-host__subcmd__guests__subcmd__help__subcmd__verify_commands() {
    local commands; commands=()
    _describe -t commands 'mco-host guests help verify commands' commands "$@"
}
(( $+functions[_mco-host__subcmd__guests__subcmd__help__subcmd__wit_commands] )) ||
_mco-host__subcmd__guests__subcmd__help__subcmd__wit_commands() {
    local commands; commands=()
    _describe -t commands 'mco-host guests help wit commands' commands "$@"
}
(( $+functions[_mco-host__subcmd__guests__subcmd__inspect_commands] )) ||
_mco-host__subcmd__guests__subcmd__inspect_commands() {
    local commands; commands=()
    _describe -t commands 'mco-host guests inspect commands' commands "$@"
}
(( $+functions[_mco-host__subcmd__guests__subcmd__new_commands] )) ||
_mco-host__subcmd__guests__subcmd__new_commands() {
    local commands; commands=()
    _describe -t commands 'mco-host guests new commands' commands "$@"
}
(( $+functions[_mco-host__subcmd__guests__subcmd__pull_commands] )) ||
_mco-host__subcmd__guests__subcmd__pull_commands() {
    local commands; commands=()
    _describe -t commands 'mco-host guests pull commands' commands "$@"
}
(( $+functions[_mco-host__subcmd__guests__subcmd__push_commands] )) ||
_mco-host__subcmd__guests__subcmd__push_commands() {
    local commands; commands=()
    _describe -t commands 'mco-host guests push commands' commands "$@"
}
(( $+functions[_mco-host__subcmd__guests__subcmd__test_commands] )) ||
_mco-host__subcmd__guests__subcmd__test_commands() {
    local commands; commands=()
    _describe -t commands 'mco-host guests test commands' commands "$@"
}
(( $+functions[_mco-host__subcmd__guests__subcmd__verify_commands] )) ||
_mco-host__subcmd__guests__subcmd__verify_commands() {
    local commands; commands=()
    _describe -t commands 'mco-host guests verify commands' commands "$@"
}
(( $+functions[_mco-host__subcmd__guests__subcmd__wit_commands] )) ||
_mco-host__subcmd__guests__subcmd__wit_commands() {
    local commands; commands=()
    _describe -t commands 'mco-host guests wit commands' commands "$@"
}
(( $+functions[_mco-host__subcmd__help_commands] )) ||
_mco-host__subcmd__help_commands() {
    local commands; commands=(
'eval:Run one guest on objects read from files, without a cluster' \
'run:Run the controllers in the cluster' \
'crds:Print the CustomResourceDefinitions this host owns, as YAML' \
'guests:Write, test, time, compare, verify and publish guests, or check the registry'\''s' \
'status:Show the update of every pool, the nodes in flight, boot images and guests at a glance (\`kubectl mco status\` as a kubectl plugin)' \
'preflight:Before installing\: which ownership mode (observe, own) each job can run in on this cluster, and why (the MachineConfigNode CRD, the Machine Config Operator'\''s writers seen, the host'\''s RBAC)' \
'completions:Print the shell completion script for SHELL (e.g. \`source <(mco-host completions bash)\`)' \
'docs:Write the generated references (CLI, completions) under a directory\: \`make docs-ref\`' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'mco-host help commands' commands "$@"
}
(( $+functions[_mco-host__subcmd__help__subcmd__completions_commands] )) ||
_mco-host__subcmd__help__subcmd__completions_commands() {
    local commands; commands=()
    _describe -t commands 'mco-host help completions commands' commands "$@"
}
(( $+functions[_mco-host__subcmd__help__subcmd__crds_commands] )) ||
_mco-host__subcmd__help__subcmd__crds_commands() {
    local commands; commands=()
    _describe -t commands 'mco-host help crds commands' commands "$@"
}
(( $+functions[_mco-host__subcmd__help__subcmd__docs_commands] )) ||
_mco-host__subcmd__help__subcmd__docs_commands() {
    local commands; commands=()
    _describe -t commands 'mco-host help docs commands' commands "$@"
}
(( $+functions[_mco-host__subcmd__help__subcmd__eval_commands] )) ||
_mco-host__subcmd__help__subcmd__eval_commands() {
    local commands; commands=(
'mcn:Derive a node'\''s MachineConfigNode' \
'bootimage:Decide a MachineSet'\''s boot image update' \
    )
    _describe -t commands 'mco-host help eval commands' commands "$@"
}
(( $+functions[_mco-host__subcmd__help__subcmd__eval__subcmd__bootimage_commands] )) ||
_mco-host__subcmd__help__subcmd__eval__subcmd__bootimage_commands() {
    local commands; commands=()
    _describe -t commands 'mco-host help eval bootimage commands' commands "$@"
}
(( $+functions[_mco-host__subcmd__help__subcmd__eval__subcmd__mcn_commands] )) ||
_mco-host__subcmd__help__subcmd__eval__subcmd__mcn_commands() {
    local commands; commands=()
    _describe -t commands 'mco-host help eval mcn commands' commands "$@"
}
(( $+functions[_mco-host__subcmd__help__subcmd__guests_commands] )) ||
_mco-host__subcmd__help__subcmd__guests_commands() {
    local commands; commands=(
'test:Run case folders (the layout of tests/golden/<job>/) against a module, or against each registry entry'\''s module and candidate; every case is reported, a patch must converge to noop, exit status 1 if any case fails' \
'bench:Time a module on case folders (p50/p99 per decision, each in a fresh instance, as \`run\` gives each node) and measure its compile time, peak linear memory and size, beside the deadline and memoryMiB its \`--registry\` entry (or the host'\''s defaults) gives it; exit status 1 when it does not fit them' \
'audit:Decide every object of one job with two modules, a candidate and the active one, from files or the cluster'\''s current objects, and count where they agree, differ or fail, with a sample of the differences; exit status 0 once compared (whatever the differences), 2 on bad input, 3 when a module cannot load' \
'wit:Write the WIT package guests are built against (\`mco\:machine-config@<version>\`, the very files this binary was built with) into DIR, for wit-bindgen, componentize-py or any other component tooling; or, with \`--push\`, publish it as wkg does' \
'new:Make a Rust guest crate for a job\: the WIT package, a decision to start from, two sample cases and the one command that builds the component and runs \`guests test\` on them' \
'verify:Check a module'\''s cosign signatures against a signature policy (an entry'\''s \`verify\`, or keys, identities and ClusterImagePolicies given as flags) and print what each signature proved\: signer, issuer, signing time, log entry and the requirement it met; exit status 2 with the refusal \`run\` would give otherwise' \
'push:Push a guest component as an OCI artifact (config application/vnd.wasm.config.v0+json with its exports and imports, one application/wasm layer); prints the manifest digest' \
'pull:Pull a guest module (CNCF or Kubewarden layout) into a file; with \`--key\`, only if a cosign signature verifies under one of the keys' \
'inspect:Show a module'\''s world, WIT version, imports, size and digest, and whether \`run\` would load it (exit status 3 when it would refuse it), from a file, or from a registry for \`oci\:REF\` or a reference that starts with a registry host (\`quay.io/…\`, \`host\:port/…\`), with the cosign signatures the registry holds for it (verified when \`--key\` is given)' \
    )
    _describe -t commands 'mco-host help guests commands' commands "$@"
}
(( $+functions[_mco-host__subcmd__help__subcmd__guests__subcmd__audit_commands] )) ||
_mco-host__subcmd__help__subcmd__guests__subcmd__audit_commands() {
    local commands; commands=()
    _describe -t commands 'mco-host help guests audit commands' commands "$@"
}
(( $+functions[_mco-host__subcmd__help__subcmd__guests__subcmd__bench_commands] )) ||
_mco-host__subcmd__help__subcmd__guests__subcmd__bench_commands() {
    local commands; commands=()
    _describe -t commands 'mco-host help guests bench commands' commands "$@"
}
(( $+functions[_mco-host__subcmd__help__subcmd__guests__subcmd__inspect_commands] )) ||
_mco-host__subcmd__help__subcmd__guests__subcmd__inspect_commands() {
    local commands; commands=()
    _describe -t commands 'mco-host help guests inspect commands' commands "$@"
}
(( $+functions[_mco-host__subcmd__help__subcmd__guests__subcmd__new_commands] )) ||
_mco-host__subcmd__help__subcmd__guests__subcmd__new_commands() {
    local commands; commands=()
    _describe -t commands 'mco-host help guests new commands' commands "$@"
}
(( $+functions[_mco-host__subcmd__help__subcmd__guests__subcmd__pull_commands] )) ||
_mco-host__subcmd__help__subcmd__guests__subcmd__pull_commands() {
    local commands; commands=()
    _describe -t commands 'mco-host help guests pull commands' commands "$@"
}
(( $+functions[_mco-host__subcmd__help__subcmd__guests__subcmd__push_commands] )) ||
_mco-host__subcmd__help__subcmd__guests__subcmd__push_commands() {
    local commands; commands=()
    _describe -t commands 'mco-host help guests push commands' commands "$@"
}
(( $+functions[_mco-host__subcmd__help__subcmd__guests__subcmd__test_commands] )) ||
_mco-host__subcmd__help__subcmd__guests__subcmd__test_commands() {
    local commands; commands=()
    _describe -t commands 'mco-host help guests test commands' commands "$@"
}
(( $+functions[_mco-host__subcmd__help__subcmd__guests__subcmd__verify_commands] )) ||
_mco-host__subcmd__help__subcmd__guests__subcmd__verify_commands() {
    local commands; commands=()
    _describe -t commands 'mco-host help guests verify commands' commands "$@"
}
(( $+functions[_mco-host__subcmd__help__subcmd__guests__subcmd__wit_commands] )) ||
_mco-host__subcmd__help__subcmd__guests__subcmd__wit_commands() {
    local commands; commands=()
    _describe -t commands 'mco-host help guests wit commands' commands "$@"
}
(( $+functions[_mco-host__subcmd__help__subcmd__help_commands] )) ||
_mco-host__subcmd__help__subcmd__help_commands() {
    local commands; commands=()
    _describe -t commands 'mco-host help help commands' commands "$@"
}
(( $+functions[_mco-host__subcmd__help__subcmd__preflight_commands] )) ||
_mco-host__subcmd__help__subcmd__preflight_commands() {
    local commands; commands=()
    _describe -t commands 'mco-host help preflight commands' commands "$@"
}
(( $+functions[_mco-host__subcmd__help__subcmd__run_commands] )) ||
_mco-host__subcmd__help__subcmd__run_commands() {
    local commands; commands=()
    _describe -t commands 'mco-host help run commands' commands "$@"
}
(( $+functions[_mco-host__subcmd__help__subcmd__status_commands] )) ||
_mco-host__subcmd__help__subcmd__status_commands() {
    local commands; commands=()
    _describe -t commands 'mco-host help status commands' commands "$@"
}
(( $+functions[_mco-host__subcmd__preflight_commands] )) ||
_mco-host__subcmd__preflight_commands() {
    local commands; commands=()
    _describe -t commands 'mco-host preflight commands' commands "$@"
}
(( $+functions[_mco-host__subcmd__run_commands] )) ||
_mco-host__subcmd__run_commands() {
    local commands; commands=()
    _describe -t commands 'mco-host run commands' commands "$@"
}
(( $+functions[_mco-host__subcmd__status_commands] )) ||
_mco-host__subcmd__status_commands() {
    local commands; commands=()
    _describe -t commands 'mco-host status commands' commands "$@"
}

if [ "$funcstack[1]" = "_mco-host" ]; then
    _mco-host "$@"
else
    compdef _mco-host mco-host
fi
