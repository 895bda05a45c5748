_mco_host() {
    local i cur prev opts cmd
    COMPREPLY=()
    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
        cur="$2"
    else
        cur="${COMP_WORDS[COMP_CWORD]}"
    fi
    prev="$3"
    cmd=""
    opts=""

    for i in "${COMP_WORDS[@]:0:COMP_CWORD}"
    do
        case "${cmd},${i}" in
            ",$1")
                cmd="mco_host"
                ;;
            mco_host,completions)
                cmd="mco_host__subcmd__completions"
                ;;
            mco_host,crds)
                cmd="mco_host__subcmd__crds"
                ;;
            mco_host,docs)
                cmd="mco_host__subcmd__docs"
                ;;
            mco_host,eval)
                cmd="mco_host__subcmd__eval"
                ;;
            mco_host,guests)
                cmd="mco_host__subcmd__guests"
                ;;
            mco_host,help)
                cmd="mco_host__subcmd__help"
                ;;
            mco_host,preflight)
                cmd="mco_host__subcmd__preflight"
                ;;
            mco_host,run)
                cmd="mco_host__subcmd__run"
                ;;
            mco_host,status)
                cmd="mco_host__subcmd__status"
                ;;
            mco_host__subcmd__eval,bootimage)
                cmd="mco_host__subcmd__eval__subcmd__bootimage"
                ;;
            mco_host__subcmd__eval,help)
                cmd="mco_host__subcmd__eval__subcmd__help"
                ;;
            mco_host__subcmd__eval,mcn)
                cmd="mco_host__subcmd__eval__subcmd__mcn"
                ;;
            mco_host__subcmd__eval__subcmd__help,bootimage)
                cmd="mco_host__subcmd__eval__subcmd__help__subcmd__bootimage"
                ;;
            mco_host__subcmd__eval__subcmd__help,help)
                cmd="mco_host__subcmd__eval__subcmd__help__subcmd__help"
                ;;
            mco_host__subcmd__eval__subcmd__help,mcn)
                cmd="mco_host__subcmd__eval__subcmd__help__subcmd__mcn"
                ;;
            mco_host__subcmd__guests,audit)
                cmd="mco_host__subcmd__guests__subcmd__audit"
                ;;
            mco_host__subcmd__guests,bench)
                cmd="mco_host__subcmd__guests__subcmd__bench"
                ;;
            mco_host__subcmd__guests,help)
                cmd="mco_host__subcmd__guests__subcmd__help"
                ;;
            mco_host__subcmd__guests,inspect)
                cmd="mco_host__subcmd__guests__subcmd__inspect"
                ;;
            mco_host__subcmd__guests,new)
                cmd="mco_host__subcmd__guests__subcmd__new"
                ;;
            mco_host__subcmd__guests,pull)
                cmd="mco_host__subcmd__guests__subcmd__pull"
                ;;
            mco_host__subcmd__guests,push)
                cmd="mco_host__subcmd__guests__subcmd__push"
                ;;
            mco_host__subcmd__guests,test)
                cmd="mco_host__subcmd__guests__subcmd__test"
                ;;
            mco_host__subcmd__guests,verify)
                cmd="mco_host__subcmd__guests__subcmd__verify"
                ;;
            mco_host__subcmd__guests,wit)
                cmd="mco_host__subcmd__guests__subcmd__wit"
                ;;
            mco_host__subcmd__guests__subcmd__help,audit)
                cmd="mco_host__subcmd__guests__subcmd__help__subcmd__audit"
                ;;
            mco_host__subcmd__guests__subcmd__help,bench)
                cmd="mco_host__subcmd__guests__subcmd__help__subcmd__bench"
                ;;
            mco_host__subcmd__guests__subcmd__help,help)
                cmd="mco_host__subcmd__guests__subcmd__help__subcmd__help"
                ;;
            mco_host__subcmd__guests__subcmd__help,inspect)
                cmd="mco_host__subcmd__guests__subcmd__help__subcmd__inspect"
                ;;
            mco_host__subcmd__guests__subcmd__help,new)
                cmd="mco_host__subcmd__guests__subcmd__help__subcmd__new"
                ;;
            mco_host__subcmd__guests__subcmd__help,pull)
                cmd="mco_host__subcmd__guests__subcmd__help__subcmd__pull"
                ;;
            mco_host__subcmd__guests__subcmd__help,push)
                cmd="mco_host__subcmd__guests__subcmd__help__subcmd__push"
                ;;
            mco_host__subcmd__guests__subcmd__help,test)
                cmd="mco_host__subcmd__guests__subcmd__help__subcmd__test"
                ;;
            mco_host__subcmd__guests__subcmd__help,verify)
                cmd="mco_host__subcmd__guests__subcmd__help__subcmd__verify"
                ;;
            mco_host__subcmd__guests__subcmd__help,wit)
                cmd="mco_host__subcmd__guests__subcmd__help__subcmd__wit"
                ;;
            mco_host__subcmd__help,completions)
                cmd="mco_host__subcmd__help__subcmd__completions"
                ;;
            mco_host__subcmd__help,crds)
                cmd="mco_host__subcmd__help__subcmd__crds"
                ;;
            mco_host__subcmd__help,docs)
                cmd="mco_host__subcmd__help__subcmd__docs"
                ;;
            mco_host__subcmd__help,eval)
                cmd="mco_host__subcmd__help__subcmd__eval"
                ;;
            mco_host__subcmd__help,guests)
                cmd="mco_host__subcmd__help__subcmd__guests"
                ;;
            mco_host__subcmd__help,help)
                cmd="mco_host__subcmd__help__subcmd__help"
                ;;
            mco_host__subcmd__help,preflight)
                cmd="mco_host__subcmd__help__subcmd__preflight"
                ;;
            mco_host__subcmd__help,run)
                cmd="mco_host__subcmd__help__subcmd__run"
                ;;
            mco_host__subcmd__help,status)
                cmd="mco_host__subcmd__help__subcmd__status"
                ;;
            mco_host__subcmd__help__subcmd__eval,bootimage)
                cmd="mco_host__subcmd__help__subcmd__eval__subcmd__bootimage"
                ;;
            mco_host__subcmd__help__subcmd__eval,mcn)
                cmd="mco_host__subcmd__help__subcmd__eval__subcmd__mcn"
                ;;
            mco_host__subcmd__help__subcmd__guests,audit)
                cmd="mco_host__subcmd__help__subcmd__guests__subcmd__audit"
                ;;
            mco_host__subcmd__help__subcmd__guests,bench)
                cmd="mco_host__subcmd__help__subcmd__guests__subcmd__bench"
                ;;
            mco_host__subcmd__help__subcmd__guests,inspect)
                cmd="mco_host__subcmd__help__subcmd__guests__subcmd__inspect"
                ;;
            mco_host__subcmd__help__subcmd__guests,new)
                cmd="mco_host__subcmd__help__subcmd__guests__subcmd__new"
                ;;
            mco_host__subcmd__help__subcmd__guests,pull)
                cmd="mco_host__subcmd__help__subcmd__guests__subcmd__pull"
                ;;
            mco_host__subcmd__help__subcmd__guests,push)
                cmd="mco_host__subcmd__help__subcmd__guests__subcmd__push"
                ;;
            mco_host__subcmd__help__subcmd__guests,test)
                cmd="mco_host__subcmd__help__subcmd__guests__subcmd__test"
                ;;
            mco_host__subcmd__help__subcmd__guests,verify)
                cmd="mco_host__subcmd__help__subcmd__guests__subcmd__verify"
                ;;
            mco_host__subcmd__help__subcmd__guests,wit)
                cmd="mco_host__subcmd__help__subcmd__guests__subcmd__wit"
                ;;
            *)
                ;;
        esac
    done

    case "${cmd}" in
        mco_host)
            opts="-h -V --guest-deadline --guest-memory-mib --guest-memory-max-mib --no-pooling --perf-map --guest-dir --registry --cache-dir --oci-cache-dir --plain-http-registry --oci-connect-timeout --oci-read-timeout --oci-pull-timeout --oci-max-module-mib --help --version eval run crds guests status preflight completions docs help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 1 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --guest-deadline)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-memory-mib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-memory-max-mib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --registry)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cache-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-cache-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --plain-http-registry)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-connect-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-read-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-pull-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-max-module-mib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mco_host__subcmd__completions)
            opts="-h --guest-deadline --guest-memory-mib --guest-memory-max-mib --no-pooling --perf-map --guest-dir --registry --cache-dir --oci-cache-dir --plain-http-registry --oci-connect-timeout --oci-read-timeout --oci-pull-timeout --oci-max-module-mib --help bash elvish fish powershell zsh"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --guest-deadline)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-memory-mib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-memory-max-mib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --registry)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cache-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-cache-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --plain-http-registry)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-connect-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-read-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-pull-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-max-module-mib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mco_host__subcmd__crds)
            opts="-h --out-dir --feature-set --guest-deadline --guest-memory-mib --guest-memory-max-mib --no-pooling --perf-map --guest-dir --registry --cache-dir --oci-cache-dir --plain-http-registry --oci-connect-timeout --oci-read-timeout --oci-pull-timeout --oci-max-module-mib --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --out-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --feature-set)
                    COMPREPLY=($(compgen -W "Default TechPreviewNoUpgrade" -- "${cur}"))
                    return 0
                    ;;
                --guest-deadline)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-memory-mib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-memory-max-mib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --registry)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cache-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-cache-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --plain-http-registry)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-connect-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-read-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-pull-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-max-module-mib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mco_host__subcmd__docs)
            opts="-h --out-dir --guest-deadline --guest-memory-mib --guest-memory-max-mib --no-pooling --perf-map --guest-dir --registry --cache-dir --oci-cache-dir --plain-http-registry --oci-connect-timeout --oci-read-timeout --oci-pull-timeout --oci-max-module-mib --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --out-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-deadline)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-memory-mib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-memory-max-mib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --registry)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cache-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-cache-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --plain-http-registry)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-connect-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-read-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-pull-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-max-module-mib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mco_host__subcmd__eval)
            opts="-h --guest-deadline --guest-memory-mib --guest-memory-max-mib --no-pooling --perf-map --guest-dir --registry --cache-dir --oci-cache-dir --plain-http-registry --oci-connect-timeout --oci-read-timeout --oci-pull-timeout --oci-max-module-mib --help mcn bootimage help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --guest-deadline)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-memory-mib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-memory-max-mib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --registry)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cache-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-cache-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --plain-http-registry)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-connect-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-read-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-pull-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-max-module-mib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mco_host__subcmd__eval__subcmd__bootimage)
            opts="-h --machineset --controlplanemachineset --configmap --infrastructure --clusterversion --machineconfiguration --user-data-secret --known-images --featuregate --vcenter --install-config --ec2 --guest --now --guest-deadline --guest-memory-mib --guest-memory-max-mib --no-pooling --perf-map --guest-dir --registry --cache-dir --oci-cache-dir --plain-http-registry --oci-connect-timeout --oci-read-timeout --oci-pull-timeout --oci-max-module-mib --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --machineset)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --controlplanemachineset)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --configmap)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --infrastructure)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --clusterversion)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --machineconfiguration)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --user-data-secret)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --known-images)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --featuregate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vcenter)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --install-config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ec2)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --now)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-deadline)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-memory-mib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-memory-max-mib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --registry)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cache-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-cache-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --plain-http-registry)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-connect-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-read-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-pull-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-max-module-mib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mco_host__subcmd__eval__subcmd__help)
            opts="mcn bootimage help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mco_host__subcmd__eval__subcmd__help__subcmd__bootimage)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mco_host__subcmd__eval__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mco_host__subcmd__eval__subcmd__help__subcmd__mcn)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mco_host__subcmd__eval__subcmd__mcn)
            opts="-h --node --pools --machineconfigs --machineconfiguration --previous --featuregate --guest --now --guest-deadline --guest-memory-mib --guest-memory-max-mib --no-pooling --perf-map --guest-dir --registry --cache-dir --oci-cache-dir --plain-http-registry --oci-connect-timeout --oci-read-timeout --oci-pull-timeout --oci-max-module-mib --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --node)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --pools)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --machineconfigs)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --machineconfiguration)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --previous)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --featuregate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --now)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-deadline)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-memory-mib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-memory-max-mib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --registry)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cache-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-cache-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --plain-http-registry)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-connect-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-read-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-pull-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-max-module-mib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mco_host__subcmd__guests)
            opts="-h --guest-deadline --guest-memory-mib --guest-memory-max-mib --no-pooling --perf-map --guest-dir --registry --cache-dir --oci-cache-dir --plain-http-registry --oci-connect-timeout --oci-read-timeout --oci-pull-timeout --oci-max-module-mib --help test bench audit wit new verify push pull inspect help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --guest-deadline)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-memory-mib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-memory-max-mib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --registry)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cache-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-cache-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --plain-http-registry)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-connect-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-read-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-pull-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-max-module-mib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mco_host__subcmd__guests__subcmd__audit)
            opts="-h --job --guest --active --nodes --pools --machineconfigs --previous --machineconfiguration --featuregate --machinesets --controlplanemachineset --configmap --infrastructure --clusterversion --user-data-secrets --known-images --vcenter --install-config --kubeconfig --sample --json --guest-deadline --guest-memory-mib --guest-memory-max-mib --no-pooling --perf-map --guest-dir --registry --cache-dir --oci-cache-dir --plain-http-registry --oci-connect-timeout --oci-read-timeout --oci-pull-timeout --oci-max-module-mib --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --job)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --active)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --nodes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --pools)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --machineconfigs)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --previous)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --machineconfiguration)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --featuregate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --machinesets)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --controlplanemachineset)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --configmap)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --infrastructure)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --clusterversion)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --user-data-secrets)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --known-images)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vcenter)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --install-config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sample)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-deadline)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-memory-mib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-memory-max-mib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --registry)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cache-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-cache-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --plain-http-registry)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-connect-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-read-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-pull-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-max-module-mib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mco_host__subcmd__guests__subcmd__bench)
            opts="-h --cases --runs --guest-deadline --guest-memory-mib --guest-memory-max-mib --no-pooling --perf-map --guest-dir --registry --cache-dir --oci-cache-dir --plain-http-registry --oci-connect-timeout --oci-read-timeout --oci-pull-timeout --oci-max-module-mib --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --cases)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --runs)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-deadline)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-memory-mib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-memory-max-mib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --registry)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cache-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-cache-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --plain-http-registry)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-connect-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-read-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-pull-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-max-module-mib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mco_host__subcmd__guests__subcmd__help)
            opts="test bench audit wit new verify push pull inspect help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mco_host__subcmd__guests__subcmd__help__subcmd__audit)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mco_host__subcmd__guests__subcmd__help__subcmd__bench)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mco_host__subcmd__guests__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mco_host__subcmd__guests__subcmd__help__subcmd__inspect)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mco_host__subcmd__guests__subcmd__help__subcmd__new)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mco_host__subcmd__guests__subcmd__help__subcmd__pull)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mco_host__subcmd__guests__subcmd__help__subcmd__push)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mco_host__subcmd__guests__subcmd__help__subcmd__test)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mco_host__subcmd__guests__subcmd__help__subcmd__verify)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mco_host__subcmd__guests__subcmd__help__subcmd__wit)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mco_host__subcmd__guests__subcmd__inspect)
            opts="-h --key --auth-file --guest-deadline --guest-memory-mib --guest-memory-max-mib --no-pooling --perf-map --guest-dir --registry --cache-dir --oci-cache-dir --plain-http-registry --oci-connect-timeout --oci-read-timeout --oci-pull-timeout --oci-max-module-mib --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --auth-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-deadline)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-memory-mib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-memory-max-mib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --registry)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cache-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-cache-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --plain-http-registry)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-connect-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-read-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-pull-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-max-module-mib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mco_host__subcmd__guests__subcmd__new)
            opts="-h --job --platform --guest-deadline --guest-memory-mib --guest-memory-max-mib --no-pooling --perf-map --guest-dir --registry --cache-dir --oci-cache-dir --plain-http-registry --oci-connect-timeout --oci-read-timeout --oci-pull-timeout --oci-max-module-mib --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --job)
                    COMPREPLY=($(compgen -W "mcn bootImage" -- "${cur}"))
                    return 0
                    ;;
                --platform)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-deadline)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-memory-mib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-memory-max-mib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --registry)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cache-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-cache-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --plain-http-registry)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-connect-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-read-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-pull-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-max-module-mib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mco_host__subcmd__guests__subcmd__pull)
            opts="-o -h --key --output --auth-file --guest-deadline --guest-memory-mib --guest-memory-max-mib --no-pooling --perf-map --guest-dir --registry --cache-dir --oci-cache-dir --plain-http-registry --oci-connect-timeout --oci-read-timeout --oci-pull-timeout --oci-max-module-mib --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --auth-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-deadline)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-memory-mib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-memory-max-mib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --registry)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cache-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-cache-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --plain-http-registry)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-connect-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-read-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-pull-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-max-module-mib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mco_host__subcmd__guests__subcmd__push)
            opts="-h --auth-file --guest-deadline --guest-memory-mib --guest-memory-max-mib --no-pooling --perf-map --guest-dir --registry --cache-dir --oci-cache-dir --plain-http-registry --oci-connect-timeout --oci-read-timeout --oci-pull-timeout --oci-max-module-mib --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --auth-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-deadline)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-memory-mib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-memory-max-mib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --registry)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cache-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-cache-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --plain-http-registry)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-connect-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-read-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-pull-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-max-module-mib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mco_host__subcmd__guests__subcmd__test)
            opts="-h --guest --junit --guest-deadline --guest-memory-mib --guest-memory-max-mib --no-pooling --perf-map --guest-dir --registry --cache-dir --oci-cache-dir --plain-http-registry --oci-connect-timeout --oci-read-timeout --oci-pull-timeout --oci-max-module-mib --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --guest)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --junit)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-deadline)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-memory-mib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-memory-max-mib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --registry)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cache-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-cache-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --plain-http-registry)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-connect-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-read-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-pull-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-max-module-mib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mco_host__subcmd__guests__subcmd__verify)
            opts="-h --entry --guest --key --trusted-root --identity --identity-prefix --issuer --cluster-image-policy --auth-file --guest-deadline --guest-memory-mib --guest-memory-max-mib --no-pooling --perf-map --guest-dir --registry --cache-dir --oci-cache-dir --plain-http-registry --oci-connect-timeout --oci-read-timeout --oci-pull-timeout --oci-max-module-mib --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --entry)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --trusted-root)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --identity)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --identity-prefix)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --issuer)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cluster-image-policy)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --auth-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-deadline)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-memory-mib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-memory-max-mib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --registry)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cache-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-cache-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --plain-http-registry)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-connect-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-read-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-pull-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-max-module-mib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mco_host__subcmd__guests__subcmd__wit)
            opts="-h --push --auth-file --guest-deadline --guest-memory-mib --guest-memory-max-mib --no-pooling --perf-map --guest-dir --registry --cache-dir --oci-cache-dir --plain-http-registry --oci-connect-timeout --oci-read-timeout --oci-pull-timeout --oci-max-module-mib --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --push)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --auth-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-deadline)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-memory-mib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-memory-max-mib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --registry)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cache-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-cache-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --plain-http-registry)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-connect-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-read-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-pull-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-max-module-mib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mco_host__subcmd__help)
            opts="eval run crds guests status preflight completions docs help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mco_host__subcmd__help__subcmd__completions)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mco_host__subcmd__help__subcmd__crds)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mco_host__subcmd__help__subcmd__docs)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mco_host__subcmd__help__subcmd__eval)
            opts="mcn bootimage"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mco_host__subcmd__help__subcmd__eval__subcmd__bootimage)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mco_host__subcmd__help__subcmd__eval__subcmd__mcn)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mco_host__subcmd__help__subcmd__guests)
            opts="test bench audit wit new verify push pull inspect"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mco_host__subcmd__help__subcmd__guests__subcmd__audit)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mco_host__subcmd__help__subcmd__guests__subcmd__bench)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mco_host__subcmd__help__subcmd__guests__subcmd__inspect)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mco_host__subcmd__help__subcmd__guests__subcmd__new)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mco_host__subcmd__help__subcmd__guests__subcmd__pull)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mco_host__subcmd__help__subcmd__guests__subcmd__push)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mco_host__subcmd__help__subcmd__guests__subcmd__test)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mco_host__subcmd__help__subcmd__guests__subcmd__verify)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mco_host__subcmd__help__subcmd__guests__subcmd__wit)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mco_host__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mco_host__subcmd__help__subcmd__preflight)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mco_host__subcmd__help__subcmd__run)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mco_host__subcmd__help__subcmd__status)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mco_host__subcmd__preflight)
            opts="-h --kubeconfig --namespace --service-account --json --guest-deadline --guest-memory-mib --guest-memory-max-mib --no-pooling --perf-map --guest-dir --registry --cache-dir --oci-cache-dir --plain-http-registry --oci-connect-timeout --oci-read-timeout --oci-pull-timeout --oci-max-module-mib --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --namespace)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --service-account)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-deadline)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-memory-mib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-memory-max-mib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --registry)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cache-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-cache-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --plain-http-registry)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-connect-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-read-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-pull-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-max-module-mib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mco_host__subcmd__run)
            opts="-h --kubeconfig --service-account --namespace --lease-name --identity --lease-duration --resync --admin-addr --admin-auth --strict-start --registry-configmap --registry-crd --registry-poll --mcn-mode --boot-images --boot-images-mode --boot-image-state --known-images-configmap --machineconfiguration-wait --ova-cache-dir --ova-cache-max-mib --vcenter-ca-file --vcenter-insecure-skip-verify --vcenter-call-timeout --vcenter-task-timeout --vcenter-transfer-timeout --ec2-endpoint --ec2-connect-timeout --ec2-read-timeout --ec2-call-timeout --guest-deadline --guest-memory-mib --guest-memory-max-mib --no-pooling --perf-map --guest-dir --registry --cache-dir --oci-cache-dir --plain-http-registry --oci-connect-timeout --oci-read-timeout --oci-pull-timeout --oci-max-module-mib --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --service-account)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --namespace)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --lease-name)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --identity)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --lease-duration)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --resync)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --admin-addr)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --admin-auth)
                    COMPREPLY=($(compgen -W "cluster none" -- "${cur}"))
                    return 0
                    ;;
                --registry-configmap)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --registry-poll)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --mcn-mode)
                    COMPREPLY=($(compgen -W "observe own" -- "${cur}"))
                    return 0
                    ;;
                --boot-images-mode)
                    COMPREPLY=($(compgen -W "observe own" -- "${cur}"))
                    return 0
                    ;;
                --boot-image-state)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --known-images-configmap)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --machineconfiguration-wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ova-cache-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ova-cache-max-mib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vcenter-ca-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vcenter-call-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vcenter-task-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vcenter-transfer-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ec2-endpoint)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ec2-connect-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ec2-read-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ec2-call-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-deadline)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-memory-mib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-memory-max-mib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --registry)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cache-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-cache-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --plain-http-registry)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-connect-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-read-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-pull-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-max-module-mib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mco_host__subcmd__status)
            opts="-o -h --kubeconfig --output --watch --admin-url --namespace --now --stuck-after-drain --stuck-after --boot-image-state --guest-deadline --guest-memory-mib --guest-memory-max-mib --no-pooling --perf-map --guest-dir --registry --cache-dir --oci-cache-dir --plain-http-registry --oci-connect-timeout --oci-read-timeout --oci-pull-timeout --oci-max-module-mib --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -W "text json" -- "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -W "text json" -- "${cur}"))
                    return 0
                    ;;
                --admin-url)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --namespace)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --now)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --stuck-after-drain)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --stuck-after)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --boot-image-state)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-deadline)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-memory-mib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-memory-max-mib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guest-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --registry)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cache-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-cache-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --plain-http-registry)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-connect-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-read-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-pull-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --oci-max-module-mib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
    esac
}

if [[ "${BASH_VERSINFO[0]}" -eq 4 && "${BASH_VERSINFO[1]}" -ge 4 || "${BASH_VERSINFO[0]}" -gt 4 ]]; then
    complete -F _mco_host -o nosort -o bashdefault -o default mco-host
else
    complete -F _mco_host -o bashdefault -o default mco-host
fi
