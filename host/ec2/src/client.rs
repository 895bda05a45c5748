//! The client: one region's endpoint, its credentials, signed POSTs of the
//! Query API, bounded answers.

use std::time::SystemTime;

use aws_sigv4::http_request::{SignableBody, SignableRequest, SigningSettings, sign};
use aws_sigv4::sign::v4;
use aws_smithy_runtime_api::client::identity::Identity;
use mco_http::{Body, Chain, Over, ReadError, Trust, excerpt};
use reqwest::Url;
use reqwest::header::CONTENT_TYPE;

use crate::answer::{self, Page};
use crate::error::Error;
use crate::{Credentials, Image, Limits, MARKETPLACE_OWNER, MAX_BODY, Timeouts};

/// The Query API version every request names.
const API_VERSION: &str = "2016-11-15";

/// The error code of a well-formed AMI ID that EC2 does not know.
const NOT_FOUND: &str = "InvalidAMIID.NotFound";

const FORM: &str = "application/x-www-form-urlencoded; charset=utf-8";

/// An EC2 client for one region. `Send + Sync`; its futures are `Send`.
pub struct Client {
    http: reqwest::Client,
    endpoint: Url,
    region: String,
    credentials: Credentials,
    timeouts: Timeouts,
    limits: Limits,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("endpoint", &self.endpoint.as_str())
            .field("region", &self.region)
            .field("credentials", &self.credentials)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// A client for `region` at `endpoint` (an `http` or `https` URL, e.g.
    /// a VPC endpoint or moto), by default EC2's own
    /// (`https://ec2.<region>.amazonaws.com/`, `.com.cn` in China).
    pub fn new(
        region: &str,
        endpoint: Option<&str>,
        credentials: Credentials,
        timeouts: Timeouts,
    ) -> Result<Client, Error> {
        if region.is_empty()
            || region.len() > 32
            || !region
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        {
            return Err(Error::Invalid(format!("{region:?} is not an AWS region")));
        }
        let endpoint = match endpoint {
            Some(url) => url.to_owned(),
            None if region.starts_with("cn-") => format!("https://ec2.{region}.amazonaws.com.cn/"),
            None => format!("https://ec2.{region}.amazonaws.com/"),
        };
        let endpoint = Url::parse(&endpoint)
            .map_err(|e| Error::Invalid(format!("endpoint {endpoint:?}: {e}")))?;
        if !matches!(endpoint.scheme(), "http" | "https")
            || endpoint.host().is_none()
            || !endpoint.username().is_empty()
            || endpoint.password().is_some()
            || endpoint.query().is_some()
            || endpoint.fragment().is_some()
        {
            return Err(Error::Invalid(format!(
                "endpoint {:?} is not an http(s) URL without credentials, query or fragment",
                endpoint.as_str()
            )));
        }
        Ok(Client {
            http: http_client(timeouts)?,
            endpoint,
            region: region.to_owned(),
            credentials,
            timeouts,
            limits: Limits::default(),
        })
    }

    /// This client with other listing bounds.
    pub fn with_limits(mut self, limits: Limits) -> Client {
        self.limits = limits;
        self
    }

    pub fn region(&self) -> &str {
        &self.region
    }

    /// The AMI `image_id` as EC2 describes it to these credentials;
    /// `None` when EC2 does not know it (`InvalidAMIID.NotFound`, or an
    /// empty answer). An ID EC2 finds malformed is [`Error::Refused`] with
    /// code `InvalidAMIID.Malformed`, as upstream reports it.
    pub async fn describe_image(&self, image_id: &str) -> Result<Option<Image>, Error> {
        let action = "DescribeImages";
        let params = [("ImageId.1", image_id.to_owned())];
        let page = match self.call(action, &params).await {
            Err(Error::Refused { code, .. }) if code == NOT_FOUND => return Ok(None),
            other => other?,
        };
        let mut images = page.images.into_iter();
        let image = images.next();
        let malformed = |detail: String| Error::Malformed { action, detail };
        if images.next().is_some() {
            return Err(malformed(format!("more than one image for {image_id}")));
        }
        match image {
            Some(image) if image.image_id != image_id => Err(malformed(format!(
                "asked for {image_id}, answered {}",
                excerpt(&image.image_id, 64)
            ))),
            image => Ok(image),
        }
    }

    /// Every image of the marketplace account whose name contains
    /// `product_id`, over as many pages as EC2 gives, within
    /// [`Limits`]: beyond them the whole listing is [`Error::TooLarge`].
    /// `product_id` is an ID, not a pattern: letters, digits and `-` only.
    pub async fn marketplace_images(&self, product_id: &str) -> Result<Vec<Image>, Error> {
        let action = "DescribeImages";
        if product_id.is_empty()
            || product_id.len() > 64
            || !product_id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-')
        {
            return Err(Error::Invalid(format!(
                "{:?} is not a marketplace product ID",
                excerpt(product_id, 80)
            )));
        }
        let mut images = Vec::new();
        let mut token: Option<String> = None;
        for _ in 0..self.limits.max_pages {
            let mut params = vec![
                ("Owner.1", MARKETPLACE_OWNER.to_owned()),
                ("Filter.1.Name", "name".to_owned()),
                ("Filter.1.Value.1", format!("*{product_id}*")),
                ("MaxResults", self.limits.page_size.to_string()),
            ];
            if let Some(token) = &token {
                params.push(("NextToken", token.clone()));
            }
            let page = self.call(action, &params).await?;
            images.extend(page.images);
            if images.len() > self.limits.max_images {
                return Err(Error::TooLarge {
                    action,
                    limit: format!("{} images", self.limits.max_images),
                });
            }
            match page.next_token {
                None => return Ok(images),
                Some(next) if token.as_ref() == Some(&next) => {
                    return Err(Error::Malformed {
                        action,
                        detail: "the same NextToken twice".to_owned(),
                    });
                }
                next => token = next,
            }
        }
        Err(Error::TooLarge {
            action,
            limit: format!("{} pages", self.limits.max_pages),
        })
    }

    /// One signed POST of `action`; the page it answers, or EC2's error.
    async fn call(&self, action: &'static str, params: &[(&str, String)]) -> Result<Page, Error> {
        let body = form_body(action, params);
        let (headers, signature) = self.sign(&body)?;
        let redact = |text: &str| {
            self.credentials
                .redact(text)
                .replace(&signature, "[redacted]")
        };
        let mut request = self
            .http
            .post(self.endpoint.clone())
            .timeout(self.timeouts.call)
            .header(CONTENT_TYPE, FORM)
            .body(body);
        for (name, value) in headers {
            request = request.header(name, value);
        }
        let failed = |e: reqwest::Error| {
            if e.is_timeout() {
                Error::Timeout {
                    action,
                    after: self.timeouts.call,
                }
            } else {
                Error::Unreachable {
                    action,
                    detail: redact(&Chain(&e).to_string()),
                }
            }
        };
        let response = request.send().await.map_err(failed)?;
        let status = response.status();
        let bytes = match Body::new(response, MAX_BODY).read(Over::Refuse).await {
            Ok(bytes) => bytes,
            Err(ReadError::Transport(e)) => return Err(failed(e)),
            Err(ReadError::TooLarge { .. }) => {
                return Err(Error::TooLarge {
                    action,
                    limit: format!("{MAX_BODY} bytes"),
                });
            }
            Err(ReadError::Deadline) => {
                return Err(Error::Timeout {
                    action,
                    after: self.timeouts.call,
                });
            }
        };
        let malformed = |detail: String| Error::Malformed {
            action,
            detail: redact(&detail),
        };
        let text = std::str::from_utf8(&bytes)
            .map_err(|_| malformed(format!("HTTP {status}: the body is not UTF-8")))?;
        if status.is_success() {
            return answer::images(text).map_err(|e| malformed(format!("HTTP {status}: {e}")));
        }
        match answer::error(text) {
            Ok(refusal) => Err(Error::Refused {
                action,
                status: status.as_u16(),
                code: excerpt(&redact(&refusal.code), 100),
                message: excerpt(&redact(&refusal.message), 1000),
            }),
            Err(_) => Err(malformed(format!("HTTP {status}: {}", excerpt(text, 200)))),
        }
    }

    /// The SigV4 headers for a POST of `body` to the endpoint, now, and
    /// the signature (to keep it out of error texts).
    fn sign(&self, body: &str) -> Result<(Vec<(String, String)>, String), Error> {
        let invalid = |e: &dyn std::error::Error| Error::Invalid(format!("signing: {}", Chain(e)));
        let identity: Identity = aws_credential_types::Credentials::new(
            self.credentials.access_key_id.clone(),
            self.credentials.secret_access_key.clone(),
            self.credentials.session_token.clone(),
            None,
            "mco-ec2",
        )
        .into();
        let params = v4::SigningParams::builder()
            .identity(&identity)
            .region(&self.region)
            .name("ec2")
            .time(SystemTime::now())
            .settings(SigningSettings::default())
            .build()
            .map_err(|e| invalid(&e))?
            .into();
        let request = SignableRequest::new(
            "POST",
            self.endpoint.as_str(),
            [("content-type", FORM)].into_iter(),
            SignableBody::Bytes(body.as_bytes()),
        )
        .map_err(|e| invalid(&e))?;
        let (instructions, signature) = sign(request, &params)
            .map_err(|e| invalid(&e))?
            .into_parts();
        let headers = instructions
            .headers()
            .map(|(name, value)| (name.to_owned(), value.to_owned()))
            .collect();
        Ok((headers, signature))
    }
}

/// The form body of `action` with `params`. Its own function: the
/// serializer is not `Send`, and must not live across an `await`.
fn form_body(action: &str, params: &[(&str, String)]) -> String {
    let mut form = url::form_urlencoded::Serializer::new(String::new());
    form.append_pair("Action", action)
        .append_pair("Version", API_VERSION);
    for (name, value) in params {
        form.append_pair(name, value);
    }
    form.finish()
}

/// An HTTP client checking TLS against the system's roots, with the
/// connect and read timeouts.
fn http_client(timeouts: Timeouts) -> Result<reqwest::Client, Error> {
    mco_http::client_builder(Trust::Platform)
        .map_err(|e| Error::Invalid(e.to_string()))?
        .connect_timeout(timeouts.connect)
        .read_timeout(timeouts.read)
        .build()
        .map_err(|e| Error::Invalid(format!("HTTP client setup: {}", Chain(&e))))
}
