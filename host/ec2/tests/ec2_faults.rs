//! The client against a scripted server on loopback (plain HTTP: what is
//! under test is the request, the bounds and the handling of answers, not
//! TLS): hostile and broken answers, paging bounds, a server that never
//! answers, and that no error ever carries a secret or a signature.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mco_ec2::{Client, Credentials, Error, ErrorKind, Image, Limits, MAX_BODY, Timeouts};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const SECRET: &str = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
const TOKEN: &str = "FQoGZXIvYXdzEXAMPLESESSIONTOKEN";

/// What the server answers to the `n`th request (from 0), given its text.
type Script = dyn Fn(usize, &str) -> Vec<u8> + Send + Sync;

/// A server answering each request as `script` says, then closing the
/// connection; the requests it saw, as text.
async fn serve(script: Arc<Script>) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let Some(request) = read_request(&mut sock).await else {
                continue;
            };
            let n = {
                let mut log = log.lock().unwrap();
                log.push(request.clone());
                log.len() - 1
            };
            let response = script(n, &request);
            let _ = sock.write_all(&response).await;
            let _ = sock.shutdown().await;
        }
    });
    (format!("http://{addr}/"), seen)
}

async fn read_request(sock: &mut TcpStream) -> Option<String> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let n = sock.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
        let text = String::from_utf8_lossy(&buf).into_owned();
        if let Some(end) = text.find("\r\n\r\n") {
            let length = text[..end]
                .lines()
                .find_map(|l| {
                    let (k, v) = l.split_once(':')?;
                    k.eq_ignore_ascii_case("content-length")
                        .then(|| v.trim().parse::<usize>().ok())?
                })
                .unwrap_or(0);
            if buf.len() >= end + 4 + length {
                return Some(text);
            }
        }
    }
}

fn http(status: &str, body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/xml\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

fn page(ids: &[&str], next: Option<&str>) -> String {
    let items: String = ids
        .iter()
        .map(|id| {
            format!(
                "<item><imageId>{id}</imageId><imageOwnerId>679593333241</imageOwnerId><name>rhcos-{id}-59ead7de-2540-4653-a8b0-fa7926d5c845</name><description>RHEL CoreOS 9.6 9.6.20260210-0 x86_64</description><creationDate>2026-02-10T12:00:00.000Z</creationDate></item>"
            )
        })
        .collect();
    let next = next.map_or(String::new(), |t| format!("<nextToken>{t}</nextToken>"));
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?><DescribeImagesResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/"><requestId>r</requestId><imagesSet>{items}</imagesSet>{next}</DescribeImagesResponse>"#
    )
}

fn refusal(code: &str, message: &str) -> String {
    format!(
        "<Response><Errors><Error><Code>{code}</Code><Message>{message}</Message></Error></Errors><RequestID>r</RequestID></Response>"
    )
}

fn credentials() -> Credentials {
    Credentials::new("AKIDEXAMPLE", SECRET, Some(TOKEN.to_owned()))
}

fn client(endpoint: &str) -> Client {
    let timeouts = Timeouts {
        connect: Duration::from_secs(5),
        read: Duration::from_secs(5),
        call: Duration::from_secs(10),
    };
    Client::new("us-east-1", Some(endpoint), credentials(), timeouts).unwrap()
}

/// Asserts that `err` is of `kind`, and says nothing secret.
fn check(err: &Error, kind: ErrorKind, contains: &str) {
    let text = err.to_string();
    let debug = format!("{err:?}");
    assert_eq!(err.kind(), kind, "{text}");
    assert!(text.contains(contains), "{text}");
    for secret in [SECRET, TOKEN] {
        assert!(!text.contains(secret) && !debug.contains(secret), "{text}");
    }
    // A quoted Authorization header keeps its shape, never its signature.
    for (at, _) in text.match_indices("Signature=") {
        assert!(text[at..].starts_with("Signature=[redacted]"), "{text}");
    }
}

#[tokio::test]
async fn describes_an_image_with_a_signed_query_request() {
    let (url, seen) = serve(Arc::new(|_, _| {
        http(
            "200 OK",
            &page(&["ami-0123456789abcdef0"], None).replace("679593333241", "531415883065"),
        )
    }))
    .await;
    let image = client(&url)
        .describe_image("ami-0123456789abcdef0")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(image.owner_id, "531415883065");
    assert_eq!(
        image.description.as_deref(),
        Some("RHEL CoreOS 9.6 9.6.20260210-0 x86_64")
    );
    let request = seen.lock().unwrap()[0].to_lowercase();
    assert!(request.starts_with("post / http/1.1"), "{request}");
    assert!(
        request
            .contains("action=describeimages&version=2016-11-15&imageid.1=ami-0123456789abcdef0"),
        "{request}"
    );
    assert!(
        request.contains("authorization: aws4-hmac-sha256 credential=akidexample/"),
        "{request}"
    );
    assert!(request.contains("/us-east-1/ec2/aws4_request"), "{request}");
    assert!(request.contains("x-amz-date: "), "{request}");
    assert!(
        request.contains(&format!("x-amz-security-token: {}", TOKEN.to_lowercase())),
        "{request}"
    );
    assert!(!request.contains(&SECRET.to_lowercase()), "{request}");
}

#[tokio::test]
async fn an_unknown_image_is_none_and_a_malformed_id_is_refused() {
    let (url, _) = serve(Arc::new(|n, _| match n {
        0 => http(
            "400 Bad Request",
            &refusal(
                "InvalidAMIID.NotFound",
                "The image id '[ami-1]' does not exist",
            ),
        ),
        1 => http("200 OK", &page(&[], None)),
        _ => http(
            "400 Bad Request",
            &refusal("InvalidAMIID.Malformed", "Invalid id: \"x\""),
        ),
    }))
    .await;
    let c = client(&url);
    assert_eq!(c.describe_image("ami-1").await.unwrap(), None);
    assert_eq!(c.describe_image("ami-1").await.unwrap(), None);
    let err = c.describe_image("x").await.unwrap_err();
    check(
        &err,
        ErrorKind::Refused,
        "HTTP 400: InvalidAMIID.Malformed: Invalid id",
    );
    assert_eq!(err.code(), Some("InvalidAMIID.Malformed"));
}

#[tokio::test]
async fn an_answer_about_another_image_or_several_is_malformed() {
    let (url, _) = serve(Arc::new(|n, _| match n {
        0 => http("200 OK", &page(&["ami-other"], None)),
        _ => http("200 OK", &page(&["ami-1", "ami-1"], None)),
    }))
    .await;
    let c = client(&url);
    let err = c.describe_image("ami-1").await.unwrap_err();
    check(
        &err,
        ErrorKind::Malformed,
        "asked for ami-1, answered ami-other",
    );
    let err = c.describe_image("ami-1").await.unwrap_err();
    check(&err, ErrorKind::Malformed, "more than one image");
}

#[tokio::test]
async fn broken_answers_are_malformed_never_a_panic() {
    let full = page(&["ami-1"], None);
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (
            http("200 OK", &full[..full.len() - 40]),
            "HTTP 200 OK: at byte",
        ),
        (
            http("200 OK", &full.replace("</DescribeImagesResponse>", "")),
            "ends inside <DescribeImagesResponse>",
        ),
        (
            http("200 OK", "<html><body>proxy login</body></html>"),
            "<html> where",
        ),
        (http("200 OK", ""), "no root element"),
        (
            http(
                "200 OK",
                &format!(
                    "<DescribeImagesResponse>{}</DescribeImagesResponse>",
                    "<a>".repeat(100_000)
                ),
            ),
            "deeper",
        ),
        (
            http(
                "200 OK",
                "<DescribeImagesResponse><imagesSet><item><imageId>ami-1</imageId></item></imagesSet></DescribeImagesResponse>",
            ),
            "no imageOwnerId",
        ),
        (
            http("502 Bad Gateway", "<html>502</html>"),
            "HTTP 502 Bad Gateway: <html>502</html>",
        ),
        (
            b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\nConnection: close\r\n\r\n\xff\xfe\xfd\xfc"
                .to_vec(),
            "not UTF-8",
        ),
    ];
    for (response, want) in cases {
        let (url, _) = serve(Arc::new(move |_, _| response.clone())).await;
        let err = client(&url).describe_image("ami-1").await.unwrap_err();
        check(&err, ErrorKind::Malformed, want);
    }
}

#[tokio::test]
async fn an_answer_cut_short_is_an_error_not_a_shorter_list() {
    // Content-Length promises more than is sent before the close.
    let body = page(&["ami-1", "ami-2"], None);
    let cut = format!(
        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}",
        body.len(),
        &body[..body.len() / 2]
    )
    .into_bytes();
    let (url, _) = serve(Arc::new(move |_, _| cut.clone())).await;
    let err = client(&url)
        .marketplace_images("59ead7de-2540-4653-a8b0-fa7926d5c845")
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unreachable, "{err}");
}

#[tokio::test]
async fn lists_marketplace_images_over_pages() {
    let (url, seen) = serve(Arc::new(|n, _| match n {
        0 => http("200 OK", &page(&["ami-1", "ami-2"], Some("t1"))),
        1 => http("200 OK", &page(&["ami-3"], Some("t2"))),
        _ => http("200 OK", &page(&["ami-4"], None)),
    }))
    .await;
    let images = client(&url)
        .marketplace_images("59ead7de-2540-4653-a8b0-fa7926d5c845")
        .await
        .unwrap();
    let ids: Vec<&str> = images.iter().map(|i: &Image| i.image_id.as_str()).collect();
    assert_eq!(ids, ["ami-1", "ami-2", "ami-3", "ami-4"]);
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 3);
    let want = "Owner.1=679593333241&Filter.1.Name=name&Filter.1.Value.1=*59ead7de-2540-4653-a8b0-fa7926d5c845*&MaxResults=1000";
    assert!(
        seen[0].contains(want) && !seen[0].contains("NextToken"),
        "{}",
        seen[0]
    );
    assert!(seen[1].ends_with("&NextToken=t1"), "{}", seen[1]);
    assert!(seen[2].ends_with("&NextToken=t2"), "{}", seen[2]);
}

#[tokio::test]
async fn a_listing_over_its_bounds_is_refused_whole() {
    let endless: Arc<Script> =
        Arc::new(|n, _| http("200 OK", &page(&["ami-1"], Some(&format!("t{n}")))));
    let (url, seen) = serve(endless).await;
    let limits = Limits {
        page_size: 5,
        max_pages: 3,
        max_images: 100,
    };
    let err = client(&url)
        .with_limits(limits)
        .marketplace_images("p-1")
        .await
        .unwrap_err();
    check(&err, ErrorKind::TooLarge, "the answer exceeds 3 pages");
    assert_eq!(seen.lock().unwrap().len(), 3);
    assert!(seen.lock().unwrap()[0].contains("MaxResults=5"));

    let (url, _) = serve(Arc::new(|_, _| {
        http("200 OK", &page(&["ami-1", "ami-2", "ami-3"], Some("t")))
    }))
    .await;
    let err = client(&url).marketplace_images("p-1").await.unwrap_err();
    // The second page repeats the token: a loop, caught at once.
    check(&err, ErrorKind::Malformed, "the same NextToken twice");

    let (url, _) = serve(Arc::new(|n, _| {
        http(
            "200 OK",
            &page(&["ami-1", "ami-2", "ami-3"], Some(&format!("t{n}"))),
        )
    }))
    .await;
    let limits = Limits {
        max_images: 5,
        ..Limits::default()
    };
    let err = client(&url)
        .with_limits(limits)
        .marketplace_images("p-1")
        .await
        .unwrap_err();
    check(&err, ErrorKind::TooLarge, "the answer exceeds 5 images");
}

#[tokio::test]
async fn a_product_id_is_not_a_pattern() {
    let c = client("http://127.0.0.1:9/");
    for bad in ["", "*", "a*b", "a b", "x?", &"a".repeat(65)] {
        let err = c.marketplace_images(bad).await.unwrap_err();
        check(&err, ErrorKind::Invalid, "is not a marketplace product ID");
    }
}

#[tokio::test]
async fn answers_over_the_byte_bound_are_refused() {
    // Announced too large.
    let announced = format!(
        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        MAX_BODY + 1
    )
    .into_bytes();
    let (url, _) = serve(Arc::new(move |_, _| announced.clone())).await;
    let err = client(&url).describe_image("ami-1").await.unwrap_err();
    check(
        &err,
        ErrorKind::TooLarge,
        &format!("exceeds {MAX_BODY} bytes"),
    );

    // Not announced: counted as it arrives (the body runs until the close).
    let mut streamed =
        b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n<DescribeImagesResponse>".to_vec();
    streamed.resize(streamed.len() + MAX_BODY as usize + 1, b' ');
    let (url, _) = serve(Arc::new(move |_, _| streamed.clone())).await;
    let err = client(&url).describe_image("ami-1").await.unwrap_err();
    check(
        &err,
        ErrorKind::TooLarge,
        &format!("exceeds {MAX_BODY} bytes"),
    );
}

#[tokio::test]
async fn a_server_that_never_answers_times_out() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((sock, _)) = listener.accept().await {
            held.push(sock);
        }
    });
    let timeouts = Timeouts {
        connect: Duration::from_secs(1),
        read: Duration::from_millis(300),
        call: Duration::from_millis(600),
    };
    let c = Client::new(
        "us-east-1",
        Some(&format!("http://{addr}/")),
        credentials(),
        timeouts,
    )
    .unwrap();
    let err = c.describe_image("ami-1").await.unwrap_err();
    check(
        &err,
        ErrorKind::Timeout,
        "EC2 DescribeImages: no answer within",
    );
}

#[tokio::test]
async fn a_closed_port_is_unreachable() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let err = client(&format!("http://{addr}/"))
        .describe_image("ami-1")
        .await
        .unwrap_err();
    check(&err, ErrorKind::Unreachable, "EC2 DescribeImages: ");
}

/// EC2's `UnauthorizedOperation` (keys it knows, an IAM policy without
/// `ec2:DescribeImages`), which moto does not give: denied, as
/// `AuthFailure` is, and the message says what EC2 said.
#[tokio::test]
async fn a_policy_without_the_action_is_denied() {
    let (url, _) = serve(Arc::new(|_, _| {
        http(
            "403 Forbidden",
            &refusal(
                "UnauthorizedOperation",
                "You are not authorized to perform this operation.",
            ),
        )
    }))
    .await;
    let err = client(&url).describe_image("ami-1").await.unwrap_err();
    check(
        &err,
        ErrorKind::Denied,
        "EC2 DescribeImages: HTTP 403: UnauthorizedOperation: You are not authorized",
    );
}

#[tokio::test]
async fn a_refusal_echoing_the_request_leaks_no_secret() {
    // A hostile endpoint quotes back everything it was sent, the signature
    // and the session token included, and the secret for good measure.
    let (url, _) = serve(Arc::new(|_, request| {
        let message = format!("{request} {SECRET}").replace(['<', '>', '&'], " ");
        http("403 Forbidden", &refusal("SignatureDoesNotMatch", &message))
    }))
    .await;
    let err = client(&url).describe_image("ami-1").await.unwrap_err();
    check(
        &err,
        ErrorKind::Refused,
        "HTTP 403: SignatureDoesNotMatch: ",
    );
    assert!(err.to_string().contains("[redacted]"), "{err}");
    // And one that echoes it outside an error document.
    let (url, _) = serve(Arc::new(|_, request| {
        http("500 Internal Server Error", &format!("{request} {SECRET}"))
    }))
    .await;
    let err = client(&url).describe_image("ami-1").await.unwrap_err();
    check(&err, ErrorKind::Malformed, "HTTP 500");
}

#[test]
fn regions_and_endpoints_are_checked() {
    let t = Timeouts::default();
    for region in ["", "US-EAST-1", "us east", "us-east-1/../x"] {
        let err = Client::new(region, None, credentials(), t).unwrap_err();
        check(&err, ErrorKind::Invalid, "is not an AWS region");
    }
    for endpoint in [
        "ftp://x/",
        "not a url",
        "https://user:pw@ec2.example/",
        "https://ec2.example/?a=b",
    ] {
        let err = Client::new("us-east-1", Some(endpoint), credentials(), t).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Invalid, "{endpoint}: {err}");
    }
    let c = Client::new("eu-west-3", None, credentials(), t).unwrap();
    assert!(format!("{c:?}").contains("https://ec2.eu-west-3.amazonaws.com/"));
    let c = Client::new("cn-north-1", None, credentials(), t).unwrap();
    assert!(format!("{c:?}").contains("https://ec2.cn-north-1.amazonaws.com.cn/"));
    assert!(!format!("{c:?}").contains(SECRET));
}
