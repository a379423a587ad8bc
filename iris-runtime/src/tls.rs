//! TLS for the HTTP clients: reqwest is built without a crypto provider of
//! its own, so one is installed before the first client is built.

/// Installs ring as the process's rustls provider unless the host
/// installed one (installing fails only when another thread installed one
/// first, which serves as well).
pub(crate) fn install_default_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}
