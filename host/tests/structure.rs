//! The shape of the host's code, held by a test where the compiler cannot
//! hold it. Crates fence the layers (runtime, cluster, fetch, registry,
//! job, ...: a layer that imports a job does not build) and the jobs
//! (`host/jobs/*`: a job that imports another does not build), as long as
//! their manifests name no job (checked here). Inside each crate this test
//! keeps the modules acyclic, outside test code, at every depth (file by
//! file, and folder by folder), so a module can be read without reading the
//! ones that use it; and it keeps every source file under
//! [`MAX_CODE_LINES`] lines of code before its tests. See
//! `CONTRIBUTING.md` ("Where code goes").

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// A file longer than this holds more than one concern: split it.
const MAX_CODE_LINES: usize = 600;

type Module = Vec<String>;

#[test]
fn no_module_depends_on_a_module_that_depends_on_it() {
    let mut cycles = BTreeSet::new();
    for krate in crates() {
        let graph = module_graph(&krate);
        let deepest = graph.keys().map(Vec::len).max().unwrap_or(0);
        for depth in 1..=deepest {
            for cycle in cycles_of(&collapse(&graph, depth)) {
                cycles.insert(format!("{}: {}", krate.display(), cycle.join(" -> ")));
            }
        }
    }
    assert!(
        cycles.is_empty(),
        "module cycles outside test code:\n{}",
        Vec::from_iter(cycles).join("\n")
    );
}

#[test]
fn no_source_file_is_over_the_limit() {
    let mut long = Vec::new();
    for krate in crates() {
        for (_, path) in modules(&krate) {
            let text = read(&path);
            let lines = code_lines(&text);
            if lines > MAX_CODE_LINES {
                long.push(format!("{}: {lines}", path.display()));
            }
        }
    }
    assert!(
        long.is_empty(),
        "files over {MAX_CODE_LINES} lines of code before their tests:\n{}",
        long.join("\n")
    );
}

/// The crates every job builds on, which name no job.
const LAYERS: [&str; 9] = [
    "mco-runtime",
    "mco-http",
    "mco-cluster",
    "mco-fetch",
    "mco-registry",
    "mco-registry-formats",
    "mco-vsphere",
    "mco-ec2",
    "mco-job",
];

/// Workspace packages by name: manifest path and dependency names.
type Packages = BTreeMap<String, (String, Vec<String>)>;

/// The compiler holds the layers only if their manifests let it: no layer
/// depends on a job crate (`host/jobs/*`) or on `mco-host`, and no job
/// crate on another. Direct dependencies suffice: a layer depends only on
/// layers, each checked here too.
#[test]
fn no_layer_depends_on_a_job_and_no_job_on_another() {
    let packages = workspace_packages();
    assert!(LAYERS.iter().all(|layer| packages.contains_key(*layer)));
    let wrong = naming_a_job(&packages);
    assert!(
        wrong.is_empty(),
        "layers or jobs naming a job:\n{}",
        wrong.join("\n")
    );
}

/// Each dependency of a layer or a job crate on a job crate or on
/// `mco-host`, as `crate -> dependency`.
fn naming_a_job(packages: &Packages) -> Vec<String> {
    let jobs: BTreeSet<&str> = packages
        .iter()
        .filter(|(_, (manifest, _))| manifest.contains("/host/jobs/"))
        .map(|(name, _)| name.as_str())
        .collect();
    let mut wrong = Vec::new();
    for (name, (_, dependencies)) in packages {
        if !jobs.contains(name.as_str()) && !LAYERS.contains(&name.as_str()) {
            continue;
        }
        for dependency in dependencies {
            if jobs.contains(dependency.as_str()) || dependency == "mco-host" {
                wrong.push(format!("{name} -> {dependency}"));
            }
        }
    }
    wrong
}

/// Each workspace package by name: its manifest path and the names of its
/// dependencies of every kind, as `cargo metadata` lists them.
fn workspace_packages() -> Packages {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = std::process::Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(mco_host::crate_dir())
        .output()
        .unwrap_or_else(|e| panic!("cargo metadata: {e}"));
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: serde_json::Value =
        serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("cargo metadata: {e}"));
    let text = |value: &serde_json::Value| value.as_str().unwrap_or_default().to_owned();
    (metadata["packages"].as_array().into_iter().flatten())
        .map(|package| {
            let dependencies = (package["dependencies"].as_array().into_iter().flatten())
                .map(|dependency| text(&dependency["name"]))
                .collect();
            (
                text(&package["name"]),
                (text(&package["manifest_path"]), dependencies),
            )
        })
        .collect()
}

/// The test itself can fail: a planted cycle and a planted long file.
#[test]
fn the_checks_see_what_they_look_for() {
    let graph: BTreeMap<Module, BTreeSet<Module>> = [
        (module("a::x"), [module("b")].into()),
        (module("b"), [module("a::y")].into()),
        (module("a::y"), BTreeSet::new()),
    ]
    .into();
    assert!(cycles_of(&graph).is_empty(), "files: no cycle");
    assert_eq!(cycles_of(&collapse(&graph, 1)).len(), 1, "folders: a <-> b");

    let long = "fn f() {}\n".repeat(MAX_CODE_LINES + 1);
    assert!(code_lines(&long) > MAX_CODE_LINES);
    let tested = format!("// why\n\nfn f() {{}}\n#[cfg(test)]\nmod tests {{\n{long}}}\n");
    assert_eq!(code_lines(&tested), 1);

    let package = |manifest: &str, dependencies: &[&str]| {
        let dependencies = dependencies.iter().map(|d| d.to_string()).collect();
        (manifest.to_owned(), dependencies)
    };
    let packages: Packages = [
        (
            "mco-job".into(),
            package("/r/host/job/Cargo.toml", &["mco-job-a"]),
        ),
        (
            "mco-job-a".into(),
            package("/r/host/jobs/a/Cargo.toml", &["mco-job-b"]),
        ),
        (
            "mco-job-b".into(),
            package("/r/host/jobs/b/Cargo.toml", &["mco-job"]),
        ),
        (
            "mco-host".into(),
            package("/r/host/Cargo.toml", &["mco-job-a"]),
        ),
    ]
    .into();
    assert_eq!(
        naming_a_job(&packages),
        ["mco-job -> mco-job-a", "mco-job-a -> mco-job-b"],
        "a layer naming a job and a job naming another; mco-host may name both"
    );
}

/// The source folders of the host's crates: `host/src`, `host/*/src` and
/// the jobs', `host/jobs/*/src`.
fn crates() -> Vec<PathBuf> {
    let host = mco_host::crate_dir();
    let members = |folder: &Path| -> Vec<PathBuf> {
        std::fs::read_dir(folder)
            .map(|entries| entries.filter_map(Result::ok).map(|e| e.path()).collect())
            .unwrap_or_default()
    };
    let mut crates: Vec<PathBuf> = members(&host)
        .into_iter()
        .chain(members(&host.join("jobs")))
        .map(|member| member.join("src"))
        .filter(|src| src.join("lib.rs").is_file())
        .collect();
    crates.push(host.join("src"));
    crates.sort();
    crates
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Non-blank, non-comment lines before the first `#[cfg(test)]`.
fn code_lines(text: &str) -> usize {
    text.lines()
        .take_while(|line| line.trim() != "#[cfg(test)]")
        .filter(|line| {
            let line = line.trim();
            !line.is_empty() && !line.starts_with("//")
        })
        .count()
}

fn module(path: &str) -> Module {
    path.split("::").map(str::to_owned).collect()
}

/// Every `.rs` file under `src`, by its module path (`registry::set`).
fn modules(src: &Path) -> BTreeMap<Module, PathBuf> {
    let mut found = BTreeMap::new();
    let mut folders = vec![src.to_path_buf()];
    while let Some(folder) = folders.pop() {
        let entries =
            std::fs::read_dir(&folder).unwrap_or_else(|e| panic!("{}: {e}", folder.display()));
        for entry in entries {
            let path = entry
                .unwrap_or_else(|e| panic!("{}: {e}", folder.display()))
                .path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|ext| ext == "rs") {
                let relative = path.strip_prefix(src).unwrap_or(&path).with_extension("");
                let mut name: Module = relative
                    .iter()
                    .map(|part| part.to_string_lossy().into_owned())
                    .collect();
                if matches!(
                    name.last().map(String::as_str),
                    Some("mod" | "lib" | "main")
                ) {
                    name.pop();
                }
                found.insert(name, path);
            }
        }
    }
    found
}

/// Which module each module names, outside its test code. A reference to
/// one of its own ancestors (a parent's re-export) is no edge.
fn module_graph(src: &Path) -> BTreeMap<Module, BTreeSet<Module>> {
    let modules = modules(src);
    let mut graph = BTreeMap::new();
    for (name, path) in &modules {
        let text = read(path);
        let file = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut paths = Paths::default();
        paths.visit_file(&file);
        let targets = paths
            .found
            .into_iter()
            .filter_map(|named| absolute(name, &named))
            .filter_map(|target| resolve(&modules, &target))
            .filter(|target| !name.starts_with(target))
            .collect();
        graph.insert(name.clone(), targets);
    }
    graph
}

/// `crate::`, `super::` and `self::` paths made absolute from `module`.
fn absolute(module: &Module, path: &[String]) -> Option<Module> {
    let (first, rest) = path.split_first()?;
    let mut base = match first.as_str() {
        "crate" => Vec::new(),
        "self" => module.clone(),
        "super" => module[..module.len().saturating_sub(1)].to_vec(),
        _ => return None,
    };
    let mut rest = rest;
    while let Some(("super", tail)) = rest.split_first().map(|(s, t)| (s.as_str(), t)) {
        base.pop();
        rest = tail;
    }
    base.extend(rest.iter().cloned());
    Some(base)
}

/// The longest prefix of `path` that is a module of the crate.
fn resolve(modules: &BTreeMap<Module, PathBuf>, path: &[String]) -> Option<Module> {
    (1..=path.len())
        .rev()
        .map(|n| path[..n].to_vec())
        .find(|prefix| modules.contains_key(prefix))
}

/// The graph with modules cut to their first `depth` segments.
fn collapse(
    graph: &BTreeMap<Module, BTreeSet<Module>>,
    depth: usize,
) -> BTreeMap<Module, BTreeSet<Module>> {
    let cut = |module: &Module| module[..module.len().min(depth)].to_vec();
    let mut collapsed: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for (from, targets) in graph {
        let from = cut(from);
        let edges = collapsed.entry(from.clone()).or_default();
        edges.extend(targets.iter().map(cut).filter(|to| *to != from));
    }
    collapsed
}

/// One cycle per strongly connected component of two or more modules.
fn cycles_of(graph: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<String>> {
    let mut cycles = Vec::new();
    let mut seen = BTreeSet::new();
    for start in graph.keys() {
        if seen.contains(start) {
            continue;
        }
        let reach = reachable(graph, start);
        let component: Vec<&Module> = reach
            .iter()
            .filter(|other| reachable(graph, other).contains(start))
            .collect();
        seen.extend(component.iter().map(|m| (*m).clone()));
        if component.len() > 1 {
            cycles.push(component.iter().map(|m| m.join("::")).collect());
        }
    }
    cycles
}

fn reachable(graph: &BTreeMap<Module, BTreeSet<Module>>, start: &Module) -> BTreeSet<Module> {
    let mut reached = BTreeSet::from([start.clone()]);
    let mut todo = vec![start.clone()];
    while let Some(next) = todo.pop() {
        for to in graph.get(&next).into_iter().flatten() {
            if reached.insert(to.clone()) {
                todo.push(to.clone());
            }
        }
    }
    reached
}

/// The paths a file names, outside items marked `#[cfg(test)]`.
#[derive(Default)]
struct Paths {
    found: Vec<Vec<String>>,
}

impl Paths {
    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(path) => {
                prefix.push(path.ident.to_string());
                self.use_tree(prefix, &path.tree);
                prefix.pop();
            }
            syn::UseTree::Name(name) if name.ident == "self" => self.found.push(prefix.clone()),
            syn::UseTree::Name(name) => self.named(prefix, &name.ident),
            syn::UseTree::Rename(rename) => self.named(prefix, &rename.ident),
            syn::UseTree::Glob(_) => self.found.push(prefix.clone()),
            syn::UseTree::Group(group) => {
                for tree in &group.items {
                    self.use_tree(prefix, tree);
                }
            }
        }
    }

    fn named(&mut self, prefix: &[String], ident: &syn::Ident) {
        let mut path = prefix.to_vec();
        path.push(ident.to_string());
        self.found.push(path);
    }
}

fn is_test_only(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|attr| {
        attr.path().is_ident("cfg")
            && attr
                .parse_args::<syn::Meta>()
                .is_ok_and(|meta| meta.path().is_ident("test"))
    })
}

impl<'ast> Visit<'ast> for Paths {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let attrs = match item {
            syn::Item::Mod(item) => &item.attrs,
            syn::Item::Fn(item) => &item.attrs,
            syn::Item::Use(item) => &item.attrs,
            syn::Item::Impl(item) => &item.attrs,
            syn::Item::Struct(item) => &item.attrs,
            syn::Item::Enum(item) => &item.attrs,
            syn::Item::Const(item) => &item.attrs,
            syn::Item::Static(item) => &item.attrs,
            syn::Item::Trait(item) => &item.attrs,
            syn::Item::Type(item) => &item.attrs,
            _ => return syn::visit::visit_item(self, item),
        };
        if !is_test_only(attrs) {
            syn::visit::visit_item(self, item);
        }
    }

    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        self.use_tree(&mut Vec::new(), &item.tree);
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        self.found
            .push(path.segments.iter().map(|s| s.ident.to_string()).collect());
        syn::visit::visit_path(self, path);
    }
}
