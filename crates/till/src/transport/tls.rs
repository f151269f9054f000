//! HTTPS from a certificate chain and key in PEM files, read again when they change: every few
//! seconds and on SIGHUP. New connections get the new certificate; a file that does not hold a
//! usable one leaves the current certificate in place, with a warning.

use super::TlsFiles;
use anyhow::{Context, anyhow, bail};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use sha2::{Digest, Sha256};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use tokio::time::MissedTickBehavior;
use tokio_rustls::TlsAcceptor;

/// The certificate served, and where it comes from.
pub struct Certificate {
    files: TlsFiles,
    current: RwLock<Arc<CertifiedKey>>,
    /// A digest of the files as last read, usable or not: a change is what differs from it.
    last_read: Mutex<[u8; 32]>,
}

/// What a check of the files found.
#[derive(Debug, PartialEq, Eq)]
pub enum Checked {
    Unchanged,
    Replaced,
    /// Changed but unusable (or unreadable): the current certificate stays.
    Kept,
}

impl Certificate {
    /// Reads the files; at start, anything wrong with them is an error.
    pub async fn load(files: TlsFiles) -> anyhow::Result<Arc<Certificate>> {
        let (cert, key) = read(&files).await?;
        let certified = certified(&files, &cert, &key)?;
        warn_if_others_can_read(&files);
        Ok(Arc::new(Certificate {
            current: RwLock::new(Arc::new(certified)),
            last_read: Mutex::new(digest(&cert, &key)),
            files,
        }))
    }

    /// Reads the files again and serves what they hold if it changed and is usable.
    pub async fn check(&self) -> Checked {
        let (cert, key) = match read(&self.files).await {
            Ok(contents) => contents,
            Err(error) => {
                tracing::warn!(error = format!("{error:#}"), "keeping the current TLS certificate");
                return Checked::Kept;
            }
        };
        let seen = digest(&cert, &key);
        {
            let mut last_read = self.last_read.lock().unwrap_or_else(PoisonError::into_inner);
            if *last_read == seen {
                return Checked::Unchanged;
            }
            *last_read = seen;
        }
        match certified(&self.files, &cert, &key) {
            Ok(certified) => {
                *self.current.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(certified);
                tracing::info!(cert = %self.files.cert.display(), "serving the new TLS certificate");
                Checked::Replaced
            }
            Err(error) => {
                tracing::warn!(error = format!("{error:#}"), "keeping the current TLS certificate");
                Checked::Kept
            }
        }
    }

    /// Checks the files every `check_every` and on SIGHUP, for as long as the server runs.
    pub async fn keep_fresh(self: Arc<Self>) {
        let mut every = tokio::time::interval(self.files.check_every);
        every.set_missed_tick_behavior(MissedTickBehavior::Delay);
        every.tick().await;
        let mut hangups = Hangups::new();
        loop {
            tokio::select! {
                _ = every.tick() => {}
                () = hangups.next() => tracing::info!("SIGHUP: checking the TLS certificate files"),
            }
            self.check().await;
        }
    }

    fn current(&self) -> Arc<CertifiedKey> {
        self.current.read().unwrap_or_else(PoisonError::into_inner).clone()
    }
}

impl std::fmt::Debug for Certificate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Certificate")
            .field("files", &self.files)
            .finish_non_exhaustive()
    }
}

impl ResolvesServerCert for Certificate {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.current())
    }
}

/// TLS 1.2 and 1.3 with rustls' safe defaults, HTTP/1.1 announced over ALPN.
pub fn acceptor(certificate: Arc<Certificate>) -> anyhow::Result<TlsAcceptor> {
    let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(provider()))
        .with_safe_default_protocol_versions()
        .context("TLS protocol versions")?
        .with_no_client_auth()
        .with_cert_resolver(certificate);
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}

fn provider() -> CryptoProvider {
    rustls::crypto::ring::default_provider()
}

async fn read(files: &TlsFiles) -> anyhow::Result<(Vec<u8>, Vec<u8>)> {
    let cert = tokio::fs::read(&files.cert)
        .await
        .with_context(|| format!("cannot read the TLS certificate {}", files.cert.display()))?;
    let key = tokio::fs::read(&files.key)
        .await
        .with_context(|| format!("cannot read the TLS key {}", files.key.display()))?;
    Ok((cert, key))
}

/// The certificate chain and key the files hold, the key matching the certificate.
fn certified(files: &TlsFiles, cert: &[u8], key: &[u8]) -> anyhow::Result<CertifiedKey> {
    let chain = CertificateDer::pem_slice_iter(cert)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| anyhow!("{} is not a PEM certificate chain: {error}", files.cert.display()))?;
    if chain.is_empty() {
        bail!("{} holds no PEM certificate", files.cert.display());
    }
    let key = PrivateKeyDer::from_pem_slice(key)
        .map_err(|error| anyhow!("{} holds no PEM private key: {error}", files.key.display()))?;
    CertifiedKey::from_der(chain, key, &provider()).map_err(|error| {
        anyhow!(
            "{} and {} do not make a usable certificate: {error}",
            files.cert.display(),
            files.key.display()
        )
    })
}

fn digest(cert: &[u8], key: &[u8]) -> [u8; 32] {
    let mut hasher = Sha256::new();
    hasher.update((cert.len() as u64).to_be_bytes());
    hasher.update(cert);
    hasher.update(key);
    hasher.finalize().into()
}

/// The private key should be readable by the service's user (or its group) alone.
fn warn_if_others_can_read(files: &TlsFiles) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(metadata) = std::fs::metadata(&files.key)
            && metadata.permissions().mode() & 0o007 != 0
        {
            tracing::warn!(
                key = %files.key.display(),
                "every user of this machine can read the TLS key; make it readable by till's user only (chmod 600)"
            );
        }
    }
    #[cfg(not(unix))]
    let _ = files;
}

/// SIGHUP, where there is such a thing.
struct Hangups {
    #[cfg(unix)]
    signal: Option<tokio::signal::unix::Signal>,
}

impl Hangups {
    fn new() -> Hangups {
        Hangups {
            #[cfg(unix)]
            signal: tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()).ok(),
        }
    }

    async fn next(&mut self) {
        #[cfg(unix)]
        if let Some(signal) = &mut self.signal
            && signal.recv().await.is_some()
        {
            return;
        }
        std::future::pending().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn issue(name: &str) -> (String, String) {
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = rcgen::CertificateParams::new(vec![name.to_owned()])
            .unwrap()
            .self_signed(&key)
            .unwrap();
        (cert.pem(), key.serialize_pem())
    }

    fn served_name(certificate: &Certificate) -> Vec<u8> {
        certificate.current().cert[0].to_vec()
    }

    #[tokio::test]
    async fn a_changed_certificate_is_served_and_a_bad_one_keeps_the_current() {
        let dir = tempfile::tempdir().unwrap();
        let files = TlsFiles {
            cert: dir.path().join("cert.pem"),
            key: dir.path().join("key.pem"),
            check_every: Duration::from_secs(1),
        };
        let (first_cert, first_key) = issue("first.example");
        std::fs::write(&files.cert, &first_cert).unwrap();
        std::fs::write(&files.key, &first_key).unwrap();
        let certificate = Certificate::load(files.clone()).await.expect("loads");
        let first = served_name(&certificate);
        assert_eq!(certificate.check().await, Checked::Unchanged);

        std::fs::write(&files.cert, "not a certificate").unwrap();
        assert_eq!(certificate.check().await, Checked::Kept);
        assert_eq!(served_name(&certificate), first);

        // A certificate whose key is still the old one's: refused too.
        let (second_cert, second_key) = issue("second.example");
        std::fs::write(&files.cert, &second_cert).unwrap();
        assert_eq!(certificate.check().await, Checked::Kept);
        assert_eq!(served_name(&certificate), first);

        std::fs::write(&files.key, &second_key).unwrap();
        assert_eq!(certificate.check().await, Checked::Replaced);
        assert_ne!(served_name(&certificate), first);
        assert_eq!(certificate.check().await, Checked::Unchanged);
    }

    #[tokio::test]
    async fn a_bad_certificate_at_start_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let files = TlsFiles {
            cert: dir.path().join("cert.pem"),
            key: dir.path().join("key.pem"),
            check_every: Duration::from_secs(1),
        };
        let missing = Certificate::load(files.clone()).await.unwrap_err();
        assert!(
            format!("{missing:#}").contains("cannot read the TLS certificate"),
            "{missing:#}"
        );
        let (cert, _) = issue("first.example");
        let (_, other_key) = issue("other.example");
        std::fs::write(&files.cert, &cert).unwrap();
        std::fs::write(&files.key, &other_key).unwrap();
        let mismatched = Certificate::load(files).await.unwrap_err();
        assert!(
            format!("{mismatched:#}").contains("do not make a usable certificate"),
            "{mismatched:#}"
        );
    }
}
