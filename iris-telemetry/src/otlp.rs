//! The OTLP exporter: a tracer provider sending batches over HTTP, the
//! `tracing-opentelemetry` layer over it, and a guard that flushes what is
//! left when it drops (before the process exits).

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{SpanExporter, WithExportConfig as _};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_subscriber::layer::SubscriberExt as _;

/// Why traces cannot be exported.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TelemetryError {
    /// The endpoint is not an `http(s)` URL.
    #[error(
        "the OTLP endpoint `{0}` is not an http:// or https:// URL; give the collector's OTLP/HTTP address, such as http://127.0.0.1:4318"
    )]
    Endpoint(String),
    /// The exporter could not be built.
    #[error("the OTLP exporter could not be built: {0}")]
    Exporter(String),
    /// Another `tracing` subscriber is installed already.
    #[error(
        "a tracing subscriber is installed already; add `Otlp::layer()` to it instead of `install()`"
    )]
    SubscriberTaken,
}

/// Where and as what traces are exported.
#[derive(Debug, Clone)]
#[must_use]
pub struct Otlp {
    endpoint: String,
    service_name: String,
}

impl Otlp {
    /// Exports to the collector at `endpoint`, its OTLP/HTTP base address
    /// (`http://127.0.0.1:4318`; `/v1/traces` is added), or the full traces
    /// URL.
    pub fn new(endpoint: impl Into<String>) -> Self {
        Self {
            endpoint: endpoint.into(),
            service_name: "iris".to_owned(),
        }
    }

    /// The `service.name` the traces carry (`iris` when not given).
    pub fn service_name(mut self, name: impl Into<String>) -> Self {
        self.service_name = name.into();
        self
    }

    /// The layer that exports Iris's spans, for a host that composes its
    /// own `tracing` subscriber, and the guard that flushes it.
    ///
    /// # Errors
    /// [`TelemetryError`] for an endpoint that is not a URL, or an exporter
    /// that cannot be built.
    pub fn layer<S>(
        self,
    ) -> Result<(impl tracing_subscriber::Layer<S>, TelemetryGuard), TelemetryError>
    where
        S: tracing::Subscriber + for<'span> tracing_subscriber::registry::LookupSpan<'span>,
    {
        let endpoint = traces_url(&self.endpoint)?;
        iris_core::tls::install_default_provider();
        let exporter = SpanExporter::builder()
            .with_http()
            .with_endpoint(endpoint)
            .build()
            .map_err(|e| TelemetryError::Exporter(e.to_string()))?;
        let provider = SdkTracerProvider::builder()
            .with_batch_exporter(exporter)
            .with_resource(
                Resource::builder()
                    .with_service_name(self.service_name)
                    .build(),
            )
            .build();
        let tracer = provider.tracer("iris");
        iris_runtime::telemetry::link_runs(crate::ids::link);
        let layer = tracing_opentelemetry::layer().with_tracer(tracer);
        // Only Iris's spans: a host's own are its business.
        let layer = tracing_subscriber::Layer::with_filter(
            layer,
            tracing_subscriber::filter::filter_fn(|metadata| {
                metadata.target().starts_with("iris::telemetry")
            }),
        );
        Ok((layer, TelemetryGuard { provider }))
    }

    /// Installs the layer as the process's `tracing` subscriber.
    ///
    /// # Errors
    /// As [`Otlp::layer`], and [`TelemetryError::SubscriberTaken`] when
    /// another subscriber is installed.
    pub fn install(self) -> Result<TelemetryGuard, TelemetryError> {
        let (layer, guard) = self.layer()?;
        let subscriber = tracing_subscriber::registry().with(layer);
        tracing::subscriber::set_global_default(subscriber)
            .map_err(|_| TelemetryError::SubscriberTaken)?;
        Ok(guard)
    }
}

/// The traces URL of `endpoint`.
fn traces_url(endpoint: &str) -> Result<String, TelemetryError> {
    if !(endpoint.starts_with("http://") || endpoint.starts_with("https://")) {
        return Err(TelemetryError::Endpoint(
            iris_core::text::clip(endpoint, 200).into_owned(),
        ));
    }
    let trimmed = endpoint.trim_end_matches('/');
    Ok(if trimmed.ends_with("/v1/traces") {
        trimmed.to_owned()
    } else {
        format!("{trimmed}/v1/traces")
    })
}

/// Flushes the spans not yet exported when it drops, and stops the
/// exporter: keep it alive as long as runs go on.
#[derive(Debug)]
pub struct TelemetryGuard {
    provider: SdkTracerProvider,
}

impl TelemetryGuard {
    /// Exports every span ended so far, now.
    ///
    /// # Errors
    /// [`TelemetryError::Exporter`] when the collector could not take them.
    pub fn flush(&self) -> Result<(), TelemetryError> {
        self.provider
            .force_flush()
            .map_err(|e| TelemetryError::Exporter(e.to_string()))
    }
}

impl Drop for TelemetryGuard {
    fn drop(&mut self) {
        if let Err(error) = self.provider.shutdown() {
            tracing::warn!(%error, "the OTLP exporter did not shut down cleanly; some spans may be lost");
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_traces_url_is_found_from_the_base() {
        assert_eq!(
            super::traces_url("http://127.0.0.1:4318").unwrap_or_default(),
            "http://127.0.0.1:4318/v1/traces"
        );
        assert_eq!(
            super::traces_url("https://c.example/v1/traces/").unwrap_or_default(),
            "https://c.example/v1/traces"
        );
        assert!(super::traces_url("127.0.0.1:4318").is_err());
    }
}
