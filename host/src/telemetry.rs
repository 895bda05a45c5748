//! Logging: JSON at info for the controller (log pipelines read it), plain
//! text and warnings only for offline commands, whose stdout is their
//! output. `RUST_LOG` overrides the level either way.

pub fn init(controller: bool) {
    let default_level = if controller { "info" } else { "warn" };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| default_level.into());
    let logs = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(filter);
    if controller {
        logs.json().init();
    } else {
        logs.init();
    }
}
