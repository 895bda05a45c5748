//! What can go wrong, said so that an operator reading a MachineSet's
//! condition knows which EC2 action failed and what EC2 itself said, and
//! never anything a credential could be read from.

use std::time::Duration;

/// A failed EC2 call, or a client that cannot be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No usable HTTP answer: refused connection, DNS, TLS (an untrusted
    /// certificate shows here), a connection cut mid-body.
    #[error("EC2 {action}: {detail}")]
    Unreachable {
        action: &'static str,
        detail: String,
    },
    /// No complete answer within [`crate::Timeouts::call`] (or the connect
    /// or read timeout inside it).
    #[error("EC2 {action}: no answer within {after:?}")]
    Timeout {
        action: &'static str,
        after: Duration,
    },
    /// EC2 answered with an error document: `code` is EC2's own
    /// (`AuthFailure`, `UnauthorizedOperation`, `InvalidAMIID.Malformed`,
    /// `RequestLimitExceeded`, …).
    #[error("EC2 {action}: HTTP {status}: {code}: {message}")]
    Refused {
        action: &'static str,
        status: u16,
        code: String,
        message: String,
    },
    /// An answer that is not what the API defines: bad XML, a missing
    /// field, an HTML page from a proxy.
    #[error("EC2 {action}: malformed answer: {detail}")]
    Malformed {
        action: &'static str,
        detail: String,
    },
    /// An answer above a bound of this client: bytes of one page, pages of
    /// one listing, or images of one listing. Nothing of it is returned.
    #[error("EC2 {action}: the answer exceeds {limit}")]
    TooLarge { action: &'static str, limit: String },
    /// A client that cannot be made (a region or endpoint that is no URL,
    /// TLS setup), or a request that cannot be signed.
    #[error("EC2 client: {0}")]
    Invalid(String),
}

/// The error codes by which EC2 refuses the caller rather than the
/// request: keys it does not know or whose signature does not check
/// (`AuthFailure`), and a caller whose IAM policy does not allow the action
/// (`UnauthorizedOperation`). Asking again does not help; other keys or
/// another policy do.
const DENIED: [&str; 2] = ["AuthFailure", "UnauthorizedOperation"];

/// What kind of failure an [`Error`] is, for callers that act on it (a
/// caller falls back to what it knows without EC2 on `Unreachable` and
/// `Timeout`, and reports the rest).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    Unreachable,
    Timeout,
    /// [`Error::Refused`] with a code that refuses the credentials
    /// (`AuthFailure`, `UnauthorizedOperation`).
    Denied,
    /// [`Error::Refused`] with any other code.
    Refused,
    Malformed,
    TooLarge,
    Invalid,
}

impl Error {
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Unreachable { .. } => ErrorKind::Unreachable,
            Error::Timeout { .. } => ErrorKind::Timeout,
            Error::Refused { code, .. } if DENIED.contains(&code.as_str()) => ErrorKind::Denied,
            Error::Refused { .. } => ErrorKind::Refused,
            Error::Malformed { .. } => ErrorKind::Malformed,
            Error::TooLarge { .. } => ErrorKind::TooLarge,
            Error::Invalid(_) => ErrorKind::Invalid,
        }
    }

    /// EC2's error code, for [`Error::Refused`].
    pub fn code(&self) -> Option<&str> {
        match self {
            Error::Refused { code, .. } => Some(code),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_action_and_what_ec2_said() {
        let e = Error::Refused {
            action: "DescribeImages",
            status: 401,
            code: "AuthFailure".into(),
            message: "AWS was not able to validate the provided access credentials".into(),
        };
        assert_eq!(
            e.to_string(),
            "EC2 DescribeImages: HTTP 401: AuthFailure: AWS was not able to validate the provided access credentials"
        );
        assert_eq!(e.kind(), ErrorKind::Denied);
        assert_eq!(e.code(), Some("AuthFailure"));
        let refusal = |code: &str| Error::Refused {
            action: "DescribeImages",
            status: 400,
            code: code.into(),
            message: String::new(),
        };
        assert_eq!(refusal("UnauthorizedOperation").kind(), ErrorKind::Denied);
        for code in [
            "InvalidAMIID.Malformed",
            "RequestLimitExceeded",
            "authfailure",
        ] {
            assert_eq!(refusal(code).kind(), ErrorKind::Refused, "{code}");
        }
        let t = Error::Timeout {
            action: "DescribeImages",
            after: Duration::from_secs(2),
        };
        assert_eq!(t.to_string(), "EC2 DescribeImages: no answer within 2s");
        assert_eq!(t.code(), None);
    }
}
