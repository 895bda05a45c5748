//! The EC2 side of AWS boot images: the two `DescribeImages` questions
//! upstream MCO asks (`pkg/controller/bootimage/aws_helpers.go`), who owns an
//! AMI ([`Client::describe_image`]) and which marketplace AMIs hold a product
//! ID ([`Client::marketplace_images`]), over the EC2 Query API with SigV4 by
//! `aws-sigv4`. The client decides nothing: the boot image guest applies
//! upstream's rules to what it returns. Answers are bounded and errors carry
//! no secret. Design and credentials: docs/dev/platform-clients.md.
//!
//! - `client`: requests, signing and bounded reads; `answer`: streaming parse;
//! - `error`: what fails, without the secret key, token or signature.

mod answer;
mod client;
mod error;

use std::fmt;
use std::time::Duration;

pub use client::Client;
pub use error::{Error, ErrorKind};

/// The account that owns Red Hat's published RHCOS AMIs.
pub const RED_HAT_OWNER: &str = "531415883065";

/// The account behind the `aws-marketplace` owner alias.
pub const MARKETPLACE_OWNER: &str = "679593333241";

/// The largest answer read (8 MiB). A full page of 1000 images with their
/// block device mappings and tags is under 3 MiB.
pub const MAX_BODY: u64 = 8 << 20;

/// An access key, and the session token of temporary credentials.
#[derive(Clone)]
pub struct Credentials {
    access_key_id: String,
    secret_access_key: String,
    session_token: Option<String>,
}

impl Credentials {
    pub fn new(
        access_key_id: impl Into<String>,
        secret_access_key: impl Into<String>,
        session_token: Option<String>,
    ) -> Credentials {
        Credentials {
            access_key_id: access_key_id.into(),
            secret_access_key: secret_access_key.into(),
            session_token,
        }
    }

    pub fn access_key_id(&self) -> &str {
        &self.access_key_id
    }

    /// `text` with the secret key and session token masked: for error
    /// texts quoting an answer, which must never echo one back.
    pub(crate) fn redact(&self, text: &str) -> String {
        let mut out = text.to_owned();
        let secrets = [Some(&self.secret_access_key), self.session_token.as_ref()];
        for secret in secrets.into_iter().flatten() {
            if !secret.is_empty() {
                out = out.replace(secret.as_str(), "[redacted]");
            }
        }
        out
    }
}

impl fmt::Debug for Credentials {
    /// The access key ID only (it names the key, as IAM shows it); never
    /// the secret or the token.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credentials")
            .field("access_key_id", &self.access_key_id)
            .field("session_token", &self.session_token.as_ref().map(|_| "…"))
            .finish_non_exhaustive()
    }
}

/// How long each part of a call may take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeouts {
    /// The TCP and TLS connection.
    pub connect: Duration,
    /// Between two reads of the answer: a stalled connection.
    pub read: Duration,
    /// One whole call, from connecting to the answer's last byte.
    pub call: Duration,
}

impl Default for Timeouts {
    /// 10 s to connect (an endpoint that takes longer is unreachable in
    /// practice), 30 s between reads and 60 s per call: EC2 answers a
    /// DescribeImages page in well under a second; a minute is a hung
    /// connection, not a slow one.
    fn default() -> Timeouts {
        Timeouts {
            connect: Duration::from_secs(10),
            read: Duration::from_secs(30),
            call: Duration::from_secs(60),
        }
    }
}

/// Bounds of a listing ([`Client::marketplace_images`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// `MaxResults` of each page (EC2 accepts 5 to 1000).
    pub page_size: u32,
    /// The most pages read; more is [`Error::TooLarge`].
    pub max_pages: usize,
    /// The most images in a listing; more is [`Error::TooLarge`].
    pub max_images: usize,
}

impl Default for Limits {
    /// Pages of 1000, at most 20 of them and 10,000 images: a product has
    /// one marketplace AMI per RHCOS release and region, some hundreds.
    fn default() -> Limits {
        Limits {
            page_size: 1000,
            max_pages: 20,
            max_images: 10_000,
        }
    }
}

/// An AMI as `DescribeImages` describes it, with the fields upstream reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Image {
    pub image_id: String,
    /// The owning account (`imageOwnerId`).
    pub owner_id: String,
    pub name: Option<String>,
    pub description: Option<String>,
    /// As EC2 writes it (`2026-02-10T12:00:00.000Z`): ISO 8601 in UTC,
    /// which sorts as text.
    pub creation_date: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_never_print_or_leak_their_secrets() {
        let c = Credentials::new("AKIDEXAMPLE", "hunter2secret", Some("tok3n".into()));
        let debug = format!("{c:?}");
        assert!(debug.contains("AKIDEXAMPLE"), "{debug}");
        assert!(
            !debug.contains("hunter2secret") && !debug.contains("tok3n"),
            "{debug}"
        );
        assert_eq!(
            c.redact("key hunter2secret and tok3n"),
            "key [redacted] and [redacted]"
        );
        assert_eq!(Credentials::new("a", "", None).redact("x"), "x");
    }

    /// The host awaits these on a multi-threaded runtime.
    #[allow(dead_code)]
    fn futures_are_send(c: &Client) {
        fn send<T: Send>(_: T) {}
        send(c.describe_image("ami-1"));
        send(c.marketplace_images("p"));
        fn sync<T: Send + Sync>() {}
        sync::<Client>();
    }

    #[test]
    fn defaults_are_as_documented() {
        let t = Timeouts::default();
        assert_eq!(
            (t.connect, t.read, t.call),
            (
                Duration::from_secs(10),
                Duration::from_secs(30),
                Duration::from_secs(60)
            )
        );
        assert_eq!(Limits::default().page_size, 1000);
    }
}
