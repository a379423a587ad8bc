//! What the command line's own process says of itself: Iris's warnings
//! (a gateway started without authentication on an open address, an
//! upstream server that could not be reached, …) on standard error, at the
//! level `RUST_LOG` names (`error`, `warn`, `info`, `debug`, `trace`;
//! warnings unless set), beside the traces `--otlp` exports.

use tracing::level_filters::LevelFilter;
use tracing_subscriber::Layer as _;
use tracing_subscriber::layer::SubscriberExt as _;

/// Installs the process's subscriber: messages on standard error, and
/// `otlp` (the traces exporter's layer) when given. A host that mounts the
/// command line and installed its own keeps it.
pub(crate) fn install<L>(otlp: Option<L>)
where
    L: tracing_subscriber::Layer<tracing_subscriber::Registry> + Send + Sync + 'static,
{
    let stderr = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_target(false)
        .with_filter(level());
    let subscriber = tracing_subscriber::registry().with(otlp).with(stderr);
    // Already set (a host's own, or a second command in one process): kept.
    let _ = tracing::subscriber::set_global_default(subscriber);
}

/// The level `RUST_LOG` names, warnings unless it names one.
fn level() -> LevelFilter {
    std::env::var("RUST_LOG")
        .ok()
        .and_then(|wanted| wanted.trim().parse().ok())
        .unwrap_or(LevelFilter::WARN)
}
