//! The HTTP pieces every client of the host shares, each written once:
//! [`Body`] reads an answer within a bound counted as bytes arrive (the
//! caller says whether more is refused or cut off) and a deadline,
//! [`Chain`] says an error with its causes on one line with credentials
//! masked, and [`client_builder`] sets up rustls with ring and the
//! platform's verifier. Callers keep their own error types and messages.

mod body;
mod chain;
mod tls;

pub use body::{Body, Over, ReadError};
pub use chain::{Chain, excerpt, mask};
pub use tls::{TlsError, Trust, client_builder};
