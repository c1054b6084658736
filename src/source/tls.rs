//! The TLS crypto provider of every https client in preparation (the Git fetcher, the OCI
//! registry client): rustls with ring, chosen once per process.

/// Installs ring as rustls's process-wide provider (once; a provider already installed is just as
/// good).
pub fn install_provider() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}
