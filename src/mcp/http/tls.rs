//! HTTPS for `serve --listen --tls-cert PEM --tls-key PEM`: rustls (the ring provider the
//! fetcher uses too), TLS 1.2 and 1.3, HTTP/1.1 by ALPN, the certificate chain and key read once
//! at start. A handshake must finish within the header timeout, so a client that connects and
//! stalls holds nothing for long. Terminating TLS in front of the server (an ingress, a sidecar)
//! is the other way, described in `docs/mcp.md`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// Why the certificate or key cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("`{}`: {message}", crate::support::escape::path(.path))]
pub struct TlsError {
    /// The file at fault.
    pub path: PathBuf,
    /// What is wrong.
    pub message: String,
}

/// The most bytes of a certificate chain or key file.
pub const MAX_PEM_BYTES: u64 = 1024 * 1024;

/// The TLS side of the server, ready to accept.
pub fn acceptor(cert: &Path, key: &Path) -> Result<tokio_rustls::TlsAcceptor, TlsError> {
    let error = |path: &Path, message: String| TlsError {
        path: path.to_owned(),
        message,
    };
    // A FIFO or device is refused before it is opened, a file over the bound before it is read.
    let read = |path: &Path| {
        crate::format::untrusted_fs::read_input(path, MAX_PEM_BYTES)
            .map_err(|e| error(path, e.reason))?
            .map_err(|size| {
                error(
                    path,
                    format!("{size} bytes, over the bound of {MAX_PEM_BYTES}"),
                )
            })
    };
    let chain = CertificateDer::pem_slice_iter(&read(cert)?)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| error(cert, format!("not a PEM certificate chain: {e}")))?;
    if chain.is_empty() {
        return Err(error(cert, "holds no certificate".into()));
    }
    let private = PrivateKeyDer::from_pem_slice(&read(key)?)
        .map_err(|e| error(key, format!("not a PEM private key: {e}")))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| error(cert, e.to_string()))?
        .with_no_client_auth()
        .with_single_cert(chain, private)
        .map_err(|e| error(key, format!("does not go with the certificate: {e}")))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(tokio_rustls::TlsAcceptor::from(Arc::new(config)))
}
