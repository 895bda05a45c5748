//! The rustls client of every HTTPS call the host makes itself: ring's
//! provider given to each client (nothing depends on a process-wide
//! default), HTTP/1.1, and the certificates checked as the caller trusts.

use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::{DigitallySignedStruct, SignatureScheme};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, ServerName, UnixTime};

use crate::Chain;

/// Which server certificates a client accepts.
#[derive(Clone, Copy, Debug)]
pub enum Trust<'a> {
    /// The platform's roots and checks (rustls-platform-verifier).
    Platform,
    /// Only certificates issued by one of these PEM certificates.
    Pem(&'a [u8]),
    /// Any certificate; the handshake signatures are still checked, so the
    /// connection is at least to whoever holds the key of the certificate
    /// shown.
    AnyCertificate,
}

/// A TLS configuration that cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("TLS setup: {0}")]
    Setup(String),
    /// [`Trust::Pem`] with no certificate in it.
    #[error("no PEM certificate in the bundle")]
    NoCertificate,
}

/// A reqwest client builder whose TLS checks certificates as `trust`
/// says; the caller adds its timeouts and builds it.
pub fn client_builder(trust: Trust<'_>) -> Result<reqwest::ClientBuilder, TlsError> {
    let setup = |e: &dyn std::error::Error| TlsError::Setup(Chain(e).to_string());
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| setup(&e))?;
    let mut config = match trust {
        Trust::Platform => {
            let verifier =
                rustls_platform_verifier::Verifier::new(provider).map_err(|e| setup(&e))?;
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(verifier))
                .with_no_client_auth()
        }
        Trust::Pem(pem) => {
            let mut roots = rustls::RootCertStore::empty();
            for cert in CertificateDer::pem_slice_iter(pem) {
                let cert = cert.map_err(|e| setup(&e))?;
                roots.add(cert).map_err(|e| setup(&e))?;
            }
            if roots.is_empty() {
                return Err(TlsError::NoCertificate);
            }
            builder.with_root_certificates(roots).with_no_client_auth()
        }
        Trust::AnyCertificate => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AnyCertificate(provider)))
            .with_no_client_auth(),
    };
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(reqwest::Client::builder().tls_backend_preconfigured(config))
}

/// [`Trust::AnyCertificate`]'s verifier.
#[derive(Debug)]
struct AnyCertificate(Arc<CryptoProvider>);

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, self.algorithms())
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, self.algorithms())
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms().supported_schemes()
    }
}

impl AnyCertificate {
    /// The provider's signature checks, which still verify the handshake.
    fn algorithms(&self) -> &WebPkiSupportedAlgorithms {
        &self.0.signature_verification_algorithms
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_trust_builds_a_client() {
        for trust in [Trust::Platform, Trust::AnyCertificate] {
            let client = client_builder(trust).and_then(|b| {
                b.build()
                    .map_err(|e| TlsError::Setup(Chain(&e).to_string()))
            });
            assert!(client.is_ok(), "{trust:?}: {client:?}");
        }
    }

    #[test]
    fn a_pem_bundle_without_certificates_is_refused() {
        for pem in [&b"not a pem"[..], b""] {
            assert!(matches!(
                client_builder(Trust::Pem(pem)),
                Err(TlsError::NoCertificate)
            ));
        }
        let broken = b"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
        let err = client_builder(Trust::Pem(broken)).map(drop).unwrap_err();
        assert!(err.to_string().starts_with("TLS setup: "), "{err}");
    }
}
