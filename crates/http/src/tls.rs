//! HTTPS: the server's certificate and key, the TLS handshake, and the
//! answer to a plain HTTP request sent to a TLS port.
//!
//! TLS is rustls with the `ring` provider: memory-safe, no C toolchain or
//! cmake to build (aws-lc-rs needs both), and the same stack the HTTP
//! client (ureq) already uses, so one crypto library is linked, not two.

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use std::io;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_rustls::rustls;

/// How long a client may take to complete its TLS handshake (or, on a
/// plain HTTP request, to send its header) before the connection is closed.
const HANDSHAKE: Duration = Duration::from_secs(10);

/// The first byte of every TLS connection: a handshake record.
const TLS_HANDSHAKE_RECORD: u8 = 0x16;

/// A server certificate chain and its private key, ready to accept
/// connections.
#[derive(Clone)]
pub struct TlsConfig(Arc<rustls::ServerConfig>);

impl std::fmt::Debug for TlsConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TlsConfig")
    }
}

impl TlsConfig {
    /// Reads a PEM certificate chain (leaf first) and a PEM private key
    /// (PKCS#8, PKCS#1 or SEC1). Every failure names the file and what is
    /// wrong with it.
    pub fn from_pem_files(cert: &Path, key: &Path) -> io::Result<TlsConfig> {
        let read = |p: &Path, what: &str| {
            std::fs::read(p).map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!("reading the TLS {what} {}: {e}", p.display()),
                )
            })
        };
        let cert_pem = read(cert, "certificate")?;
        let key_pem = read(key, "private key")?;
        Self::from_pem(&cert_pem, &key_pem).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("{} and {}: {e}", cert.display(), key.display()),
            )
        })
    }

    /// The same from PEM text in memory.
    pub fn from_pem(cert_pem: &[u8], key_pem: &[u8]) -> io::Result<TlsConfig> {
        let invalid = |m: String| io::Error::new(io::ErrorKind::InvalidData, m);
        let certs = CertificateDer::pem_slice_iter(cert_pem)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| invalid(format!("the certificate file is not valid PEM: {e}")))?;
        if certs.is_empty() {
            return Err(invalid(
                "the certificate file holds no PEM CERTIFICATE block".into(),
            ));
        }
        let key = PrivateKeyDer::from_pem_slice(key_pem).map_err(|e| {
            invalid(format!(
                "the key file holds no usable PEM private key (PKCS#8, PKCS#1 or SEC1): {e}"
            ))
        })?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| invalid(format!("TLS setup: {e}")))?
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .map_err(|e| match e {
                rustls::Error::InconsistentKeys(_) => invalid(
                    "the private key does not match the certificate (the first certificate \
                     of the file must be the server's own)"
                        .into(),
                ),
                e => invalid(format!("the certificate or key is not usable: {e}")),
            })?;
        // What hyper's automatic connection builder serves.
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Ok(TlsConfig(Arc::new(config)))
    }

    /// Completes the handshake on a fresh connection. A client that sends
    /// plain HTTP instead gets a plain HTTP 400 saying to use HTTPS, and
    /// `None`, as does a client that fails or stalls the handshake.
    pub(crate) async fn accept(
        &self,
        socket: TcpStream,
    ) -> Option<tokio_rustls::server::TlsStream<TcpStream>> {
        let mut first = [0u8; 1];
        match tokio::time::timeout(HANDSHAKE, socket.peek(&mut first)).await {
            Ok(Ok(1)) => {}
            _ => return None,
        }
        if first[0] != TLS_HANDSHAKE_RECORD {
            let _ = tokio::time::timeout(HANDSHAKE, refuse_plain_http(socket)).await;
            return None;
        }
        let acceptor = tokio_rustls::TlsAcceptor::from(self.0.clone());
        tokio::time::timeout(HANDSHAKE, acceptor.accept(socket))
            .await
            .ok()?
            .ok()
    }
}

/// The body of the answer to plain HTTP on a TLS port: an S3 error
/// document, so that SDKs show the message, readable as text by curl.
pub(crate) const PLAIN_HTTP_MESSAGE: &str = "This port speaks HTTPS: a plain HTTP request was \
     sent to a TLS port. Use an https:// endpoint.";

/// Reads the request's header (so that closing does not reset the
/// connection before the client reads the answer), answers 400 and closes.
async fn refuse_plain_http(mut socket: TcpStream) -> io::Result<()> {
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    while seen.len() < 16 << 10 && !seen.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = socket.read(&mut buf).await?;
        if n == 0 {
            break;
        }
        seen.extend_from_slice(&buf[..n]);
    }
    let body = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>BadRequest</Code>\
         <Message>{PLAIN_HTTP_MESSAGE}</Message></Error>\n"
    );
    let head = format!(
        "HTTP/1.1 400 Bad Request\r\nContent-Type: application/xml\r\n\
         x-amz-error-code: BadRequest\r\nConnection: close\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    socket.write_all(head.as_bytes()).await?;
    socket.write_all(body.as_bytes()).await?;
    socket.shutdown().await?;
    // Drain a body the client may still be sending, until it closes, so
    // that it reads the answer rather than a reset.
    let drain = async { while socket.read(&mut buf).await.is_ok_and(|n| n > 0) {} };
    let _ = tokio::time::timeout(Duration::from_secs(2), drain).await;
    Ok(())
}
