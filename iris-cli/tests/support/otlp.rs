//! An OTLP/HTTP trace receiver of the test's own, on a free loopback port:
//! it takes `POST /v1/traces` (protobuf), decodes each export with
//! `opentelemetry-proto`, keeps every span, and answers 200.

use std::io::{BufReader, Write as _};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message as _;

/// A span as received, with its attributes as text.
#[derive(Debug, Clone)]
pub(crate) struct Received {
    pub(crate) name: String,
    pub(crate) trace_id: Vec<u8>,
    pub(crate) span_id: Vec<u8>,
    pub(crate) parent_span_id: Vec<u8>,
    pub(crate) attributes: Vec<(String, String)>,
    pub(crate) service: String,
}

impl Received {
    pub(crate) fn attribute(&self, key: &str) -> Option<&str> {
        self.attributes
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

pub(crate) struct Receiver {
    pub(crate) url: String,
    pub(crate) spans: Arc<Mutex<Vec<Received>>>,
}

impl Receiver {
    pub(crate) fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let spans: Arc<Mutex<Vec<Received>>> = Arc::default();
        let kept = Arc::clone(&spans);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                let kept = Arc::clone(&kept);
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(stream.try_clone().unwrap());
                    while let Some((path, body)) = super::http::read_request(&mut reader) {
                        assert_eq!(path, "/v1/traces", "the exporter posts to the traces path");
                        let export = ExportTraceServiceRequest::decode(body.as_slice())
                            .expect("an OTLP protobuf export");
                        kept.lock().unwrap().extend(received(export));
                        let _ = write!(
                            stream,
                            "HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\nContent-Length: 0\r\n\r\n"
                        );
                    }
                });
            }
        });
        Self { url, spans }
    }

    pub(crate) fn spans(&self) -> Vec<Received> {
        self.spans.lock().unwrap().clone()
    }
}

fn received(export: ExportTraceServiceRequest) -> Vec<Received> {
    let mut all = Vec::new();
    for resource in export.resource_spans {
        let service = resource
            .resource
            .as_ref()
            .and_then(|r| r.attributes.iter().find(|a| a.key == "service.name"))
            .and_then(|a| a.value.as_ref())
            .map(text)
            .unwrap_or_default();
        for scope in resource.scope_spans {
            for span in scope.spans {
                all.push(one(span, &service));
            }
        }
    }
    all
}

fn one(span: Span, service: &str) -> Received {
    Received {
        name: span.name,
        trace_id: span.trace_id,
        span_id: span.span_id,
        parent_span_id: span.parent_span_id,
        attributes: span
            .attributes
            .iter()
            .map(|a| {
                (
                    a.key.clone(),
                    a.value.as_ref().map(text).unwrap_or_default(),
                )
            })
            .collect(),
        service: service.to_owned(),
    }
}

fn text(value: &opentelemetry_proto::tonic::common::v1::AnyValue) -> String {
    match &value.value {
        Some(Any::StringValue(s)) => s.clone(),
        Some(Any::IntValue(i)) => i.to_string(),
        Some(Any::BoolValue(b)) => b.to_string(),
        Some(Any::DoubleValue(d)) => d.to_string(),
        other => format!("{other:?}"),
    }
}
