//! Answers read within a bound and a deadline: a server may send a body
//! that never ends, far more than it announced, or nothing at all.

use bytes::Bytes;
use tokio::time::Instant;

/// What a read does with an answer longer than its bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Over {
    /// The whole answer is an error ([`ReadError::TooLarge`]).
    Refuse,
    /// An excerpt, for quoting an error answer: the bytes up to the bound,
    /// whatever length the answer announced, and those that came before
    /// the deadline or a broken connection ended it (a read in this mode
    /// does not fail: the excerpt only adds to an error already known).
    Truncate,
}

/// Why a body was not read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("the answer is larger than {limit} bytes")]
    TooLarge { limit: u64 },
    #[error("the answer did not end before its deadline")]
    Deadline,
    #[error(transparent)]
    Transport(#[from] reqwest::Error),
}

/// The body of a response, read at most `limit` bytes far: an answer that
/// announces more is refused unread (an excerpt reads up to the bound), and
/// one that sends more than it announced is stopped at the first chunk past
/// the bound.
#[derive(Debug)]
pub struct Body {
    response: reqwest::Response,
    limit: u64,
    read: u64,
    deadline: Option<Instant>,
}

impl Body {
    pub fn new(response: reqwest::Response, limit: u64) -> Body {
        Body {
            response,
            limit,
            read: 0,
            deadline: None,
        }
    }

    /// This body, failing with [`ReadError::Deadline`] once `deadline`
    /// passes between two chunks or during one.
    pub fn until(mut self, deadline: Instant) -> Body {
        self.deadline = Some(deadline);
        self
    }

    /// The next chunk, `None` at the end; past the bound
    /// [`ReadError::TooLarge`] (a streaming caller refuses).
    pub async fn chunk(&mut self) -> Result<Option<Bytes>, ReadError> {
        if self.announced_too_large() {
            return Err(self.too_large());
        }
        let chunk = self.wire().await?;
        if self.read > self.limit {
            return Err(self.too_large());
        }
        Ok(chunk)
    }

    /// The whole body; past the bound, as `over` says: an error, or an
    /// excerpt ([`Over::Truncate`]).
    pub async fn read(self, over: Over) -> Result<Vec<u8>, ReadError> {
        match over {
            Over::Refuse => self.whole().await,
            Over::Truncate => Ok(self.excerpt().await),
        }
    }

    async fn whole(mut self) -> Result<Vec<u8>, ReadError> {
        let mut bytes = Vec::new();
        while let Some(chunk) = self.chunk().await? {
            bytes.extend_from_slice(&chunk);
        }
        Ok(bytes)
    }

    async fn excerpt(mut self) -> Vec<u8> {
        let mut bytes = Vec::new();
        while let Ok(Some(chunk)) = self.wire().await {
            let room = (self.limit - bytes.len() as u64).min(chunk.len() as u64) as usize;
            bytes.extend_from_slice(&chunk[..room]);
            if self.read >= self.limit {
                break;
            }
        }
        bytes
    }

    fn announced_too_large(&self) -> bool {
        self.read == 0
            && self
                .response
                .content_length()
                .is_some_and(|length| length > self.limit)
    }

    /// The next chunk from the wire, within the deadline, counted.
    async fn wire(&mut self) -> Result<Option<Bytes>, ReadError> {
        let chunk = match self.deadline {
            None => self.response.chunk().await?,
            Some(deadline) => tokio::time::timeout_at(deadline, self.response.chunk())
                .await
                .map_err(|_| ReadError::Deadline)??,
        };
        if let Some(chunk) = &chunk {
            self.read += chunk.len() as u64;
        }
        Ok(chunk)
    }

    fn too_large(&self) -> ReadError {
        ReadError::TooLarge { limit: self.limit }
    }
}

#[cfg(test)]
mod tests {
    use std::future::Future;
    use std::time::Duration;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::{TcpListener, TcpStream};

    use super::*;

    const CHUNKED: &[u8] = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";

    /// The response of a server on loopback that reads the request, then
    /// answers as `answer` writes (plain HTTP: the body is under test).
    async fn answer<F, Fut>(answer: F) -> reqwest::Response
    where
        F: FnOnce(TcpStream) -> Fut + Send + 'static,
        Fut: Future<Output = std::io::Result<()>> + Send,
    {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await?;
            let mut request = [0u8; 4096];
            let _ = socket.read(&mut request).await?;
            answer(socket).await
        });
        crate::client_builder(crate::Trust::AnyCertificate)
            .unwrap()
            .build()
            .unwrap()
            .get(format!("http://{address}/"))
            .send()
            .await
            .unwrap()
    }

    async fn chunk(socket: &mut TcpStream, bytes: &[u8]) -> std::io::Result<()> {
        socket
            .write_all(format!("{:x}\r\n", bytes.len()).as_bytes())
            .await?;
        socket.write_all(bytes).await?;
        socket.write_all(b"\r\n").await?;
        socket.flush().await
    }

    /// A chunked body of `size`-byte chunks that never ends.
    async fn endless(size: usize) -> reqwest::Response {
        answer(move |mut socket| async move {
            socket.write_all(CHUNKED).await?;
            loop {
                chunk(&mut socket, &vec![b'x'; size]).await?;
            }
        })
        .await
    }

    fn sized(body: &'static [u8]) -> impl Future<Output = reqwest::Response> {
        answer(move |mut socket| async move {
            let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", body.len());
            socket.write_all(head.as_bytes()).await?;
            socket.write_all(body).await
        })
    }

    #[tokio::test]
    async fn a_body_that_never_ends_is_refused_or_cut_at_the_bound() {
        let refused = Body::new(endless(4096).await, 100_000)
            .read(Over::Refuse)
            .await;
        assert!(
            matches!(refused, Err(ReadError::TooLarge { limit: 100_000 })),
            "{refused:?}"
        );
        let cut = Body::new(endless(4096).await, 100_000)
            .read(Over::Truncate)
            .await
            .unwrap();
        assert_eq!(cut.len(), 100_000);

        let mut body = Body::new(endless(4096).await, 10_000);
        let mut streamed = 0;
        let refused = loop {
            match body.chunk().await {
                Ok(Some(chunk)) => streamed += chunk.len(),
                other => break other,
            }
        };
        assert!(
            matches!(refused, Err(ReadError::TooLarge { .. })),
            "{refused:?}"
        );
        assert!(streamed <= 10_000, "{streamed}");
    }

    #[tokio::test]
    async fn a_body_over_the_bound_in_small_chunks_is_refused() {
        let response = answer(|mut socket| async move {
            socket.write_all(CHUNKED).await?;
            for _ in 0..30 {
                chunk(&mut socket, b"0123456789").await?;
            }
            socket.write_all(b"0\r\n\r\n").await
        })
        .await;
        let refused = Body::new(response, 255).read(Over::Refuse).await;
        assert!(
            matches!(refused, Err(ReadError::TooLarge { limit: 255 })),
            "{refused:?}"
        );
    }

    #[tokio::test]
    async fn an_answer_announced_too_large_is_not_read() {
        // Announces a gigabyte and sends nothing: reading would wait.
        let announced = || {
            answer(|mut socket| async move {
                socket
                    .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 1073741824\r\n\r\n")
                    .await?;
                tokio::time::sleep(Duration::from_secs(3600)).await;
                Ok(())
            })
        };
        let refused = Body::new(announced().await, 1024).read(Over::Refuse).await;
        assert!(
            matches!(refused, Err(ReadError::TooLarge { .. })),
            "{refused:?}"
        );
        let mut body = Body::new(announced().await, 1024);
        assert!(matches!(
            body.chunk().await,
            Err(ReadError::TooLarge { .. })
        ));
    }

    #[tokio::test]
    async fn a_body_within_the_bound_is_read_whole() {
        let body = Body::new(sized(b"0123456789").await, 10).read(Over::Refuse);
        assert_eq!(body.await.unwrap(), b"0123456789");
        let body = Body::new(sized(b"").await, 0).read(Over::Refuse);
        assert_eq!(body.await.unwrap(), b"");
        let cut = Body::new(sized(b"0123456789").await, 4).read(Over::Truncate);
        assert_eq!(cut.await.unwrap(), b"0123");
    }

    /// An error answer that announces more than the bound, sends a start
    /// and then stalls still gives its start to quote, within the deadline.
    #[tokio::test]
    async fn an_excerpt_is_what_came_before_the_deadline() {
        let response = answer(|mut socket| async move {
            let head = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 1073741824\r\n\r\n";
            socket.write_all(head.as_bytes()).await?;
            socket
                .write_all(b"{\"errors\":[{\"code\":\"UNAVAILABLE\"}]}")
                .await?;
            socket.flush().await?;
            tokio::time::sleep(Duration::from_secs(3600)).await;
            Ok(())
        })
        .await;
        let deadline = Instant::now() + Duration::from_millis(300);
        let excerpt = Body::new(response, 1024)
            .until(deadline)
            .read(Over::Truncate)
            .await;
        assert_eq!(
            excerpt.unwrap_or_else(|e| panic!("{e}")),
            b"{\"errors\":[{\"code\":\"UNAVAILABLE\"}]}"
        );
        assert!(Instant::now() >= deadline);
    }

    #[tokio::test]
    async fn a_server_that_stalls_past_the_deadline_is_left() {
        let response = answer(|mut socket| async move {
            socket.write_all(CHUNKED).await?;
            chunk(&mut socket, b"a start").await?;
            tokio::time::sleep(Duration::from_secs(3600)).await;
            Ok(())
        })
        .await;
        let deadline = Instant::now() + Duration::from_millis(200);
        let stalled = Body::new(response, 1 << 20)
            .until(deadline)
            .read(Over::Refuse)
            .await;
        assert!(matches!(stalled, Err(ReadError::Deadline)), "{stalled:?}");
        assert!(Instant::now() >= deadline);
    }
}
