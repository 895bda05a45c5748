//! Typed failures: loading a module, and running one evaluation. Each
//! variant has a stable `kind` used as a metric label and in messages.

use std::time::Duration;

use wasmtime::Trap;

/// Why a module was refused.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("could not read guest module {path}: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("guest module {0} is not WebAssembly (no \\0asm header)")]
    NotWasm(String),
    #[error(
        "guest module {0} is a core WebAssembly module, not a component; build it for wasm32-wasip2"
    )]
    CoreModule(String),
    #[error("guest module {module} could not be compiled: {detail}")]
    Compile { module: String, detail: String },
    #[error(
        "guest module {module} imports {import}, which guests may not use (allowed: wasi:io, wasi:cli streams/environment/exit, wasi:random/insecure-seed, mco:machine-config/types, node-inputs and boot-image-inputs)"
    )]
    ForbiddenImport { module: String, import: String },
    #[error(
        "guest module {module} exports {found}, a version this host cannot call: it needs {expected} (the same major version, or below 1.0 the same minor); rebuild the guest against this host's WIT"
    )]
    IncompatibleVersion {
        module: String,
        expected: String,
        found: String,
    },
    #[error("guest module {module} does not export {expected} (it exports: {found})")]
    WrongWorld {
        module: String,
        expected: String,
        found: String,
    },
    #[error(
        "guest module {module} has sha256 {actual}, but the registry pins sha256 {expected}; refusing it"
    )]
    Digest {
        module: String,
        expected: String,
        actual: String,
    },
    #[error("guest module {module} asks for limits the host cannot give: {detail}")]
    Limits { module: String, detail: String },
    #[error("guest module {module} failed its smoke evaluation: {detail}")]
    Smoke { module: String, detail: String },
    #[error("could not create the wasm engine: {0}")]
    Engine(String),
}

impl LoadError {
    /// Stable label for metrics and logs.
    pub fn kind(&self) -> &'static str {
        match self {
            LoadError::Read { .. } => "read",
            LoadError::NotWasm(_) => "not_wasm",
            LoadError::CoreModule(_) => "core_module",
            LoadError::Compile { .. } => "compile",
            LoadError::ForbiddenImport { .. } => "forbidden_import",
            LoadError::IncompatibleVersion { .. } => "incompatible_version",
            LoadError::WrongWorld { .. } => "wrong_world",
            LoadError::Digest { .. } => "digest",
            LoadError::Limits { .. } => "limits",
            LoadError::Smoke { .. } => "smoke",
            LoadError::Engine(_) => "engine",
        }
    }
}

/// Why one evaluation failed. The host keeps serving; nothing is written
/// for the object concerned.
#[derive(Debug, Clone, thiserror::Error)]
pub enum GuestError {
    #[error("guest {guest} exceeded its deadline of {deadline:?}")]
    Deadline { guest: String, deadline: Duration },
    #[error("guest {guest} hit its memory limit of {limit} bytes")]
    MemoryLimit { guest: String, limit: usize },
    #[error("guest {guest} overflowed its stack")]
    StackOverflow { guest: String },
    #[error("guest {guest} trapped: {detail}")]
    Trap { guest: String, detail: String },
    #[error("guest {guest} returned invalid output: {detail}")]
    InvalidOutput { guest: String, detail: String },
}

impl GuestError {
    /// Stable label for metrics and logs.
    pub fn kind(&self) -> &'static str {
        match self {
            GuestError::Deadline { .. } => "deadline",
            GuestError::MemoryLimit { .. } => "memory_limit",
            GuestError::StackOverflow { .. } => "stack_overflow",
            GuestError::Trap { .. } => "trap",
            GuestError::InvalidOutput { .. } => "invalid_output",
        }
    }

    /// Classifies a failed instantiation or call, using what the store saw:
    /// whether it refused memory, and what the guest wrote to stderr.
    pub(super) fn classify(
        guest: &str,
        err: &wasmtime::Error,
        hit_memory_limit: bool,
        stderr: String,
        deadline: Duration,
        limit: usize,
    ) -> GuestError {
        let guest = guest.to_string();
        match err.downcast_ref::<Trap>() {
            Some(Trap::Interrupt) => return GuestError::Deadline { guest, deadline },
            Some(Trap::StackOverflow) => return GuestError::StackOverflow { guest },
            _ => {}
        }
        if hit_memory_limit {
            return GuestError::MemoryLimit { guest, limit };
        }
        let detail = match err.downcast_ref::<Trap>() {
            Some(Trap::UnreachableCodeReached) if !stderr.is_empty() => {
                format!("panicked: {}", summarize(&stderr))
            }
            Some(trap) => trap.to_string(),
            None => handle_rule(&format!("{err:#}")),
        };
        GuestError::Trap { guest, detail }
    }
}

/// wasmtime's refusal of a misused handle, prefixed with the rule it
/// breaks: a handle the host lends is valid only during the call it is
/// lent to, and only as the handle it was lent as.
fn handle_rule(detail: &str) -> String {
    let rule = if detail.contains("borrow handles still remain at the end of the call") {
        "kept a handle past the call it was lent to (handles are valid for that call only)"
    } else if detail.contains("unknown handle index") || detail.contains("used with the wrong type")
    {
        "used a handle it was not lent in this call (a forged index, or one kept from an earlier call)"
    } else {
        return detail.to_string();
    };
    format!("{rule}: {detail}")
}

/// The useful part of a guest's stderr, bounded: a guest controls this text.
fn summarize(stderr: &str) -> String {
    let text = stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("note:"))
        .collect::<Vec<_>>()
        .join(" ");
    mco_k8s_rules::bounded(text, 500)
}
