//! TLS for the HTTP clients of the model adapters and MCP (for the Iris
//! crates; not a public API): reqwest is built without a crypto provider of
//! its own, so one is installed before the first client is built.

/// Installs ring as the process's rustls provider unless the host
/// installed one (installing fails only when another thread installed one
/// first, which serves as well).
pub fn install_default_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}
