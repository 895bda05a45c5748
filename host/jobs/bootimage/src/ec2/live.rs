//! The live side of EC2, over `mco-ec2`: the calls that answer what the
//! planner asks (`ec2`, sans-IO). The credentials (Secret
//! `openshift-machine-api/aws-cloud-credentials`, keys `aws_access_key_id`
//! and `aws_secret_access_key`, as upstream's `aws_helpers.go` reads them),
//! and the answers to the planner's [`Ec2Read`]s: the Secret read once a
//! pass, one client per region kept across passes while the Secret's
//! `resourceVersion` stays the same (upstream `getAWSEC2Client` keeps its
//! clients so; here making one loads the system's TLS roots), every answer
//! kept for the rest of the pass (MachineSets share AMIs and products), and
//! a region that did not answer is not asked again in the same pass (each
//! try would wait for the timeouts).
//!
//! EC2 refusing the credentials (`AuthFailure`, `UnauthorizedOperation`)
//! is an [`Ec2Answer::Denied`]; any other failure, from a missing Secret to
//! a timeout, is an [`Ec2Answer::Unreachable`]. Either reason names the
//! step: the guest then decides from the static AMI lists, and the
//! MachineSet's decision says why EC2 was not consulted. No reason carries
//! a secret (`mco-ec2` masks them, and the Secret's values are never
//! quoted).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use k8s_openapi::api::core::v1::Secret;
use kube::api::Api;
use mco_ec2::{Client, Credentials, ErrorKind, Image, Timeouts};
use tracing::Instrument;

use super::{Ec2Answer, Ec2Image, Ec2Read};

/// Where the AWS credentials are kept (upstream: the credentials request
/// of the machine API operator, which the Cloud Credential Operator fills).
pub const CREDENTIALS_NAMESPACE: &str = "openshift-machine-api";
pub const CREDENTIALS_SECRET: &str = "aws-cloud-credentials";

const ACCESS_KEY_ID: &str = "aws_access_key_id";
const SECRET_ACCESS_KEY: &str = "aws_secret_access_key";
const ROLE_ARN: &str = "role_arn";
const WEB_IDENTITY_TOKEN_FILE: &str = "web_identity_token_file";
/// The longest value read from the Secret: IAM's limit on an access key
/// ID (a secret access key is 40 characters). The Secret can hold up to
/// 1 MiB, and a longer value would only be sent to EC2 to be refused.
const MAX_VALUE_BYTES: usize = 128;

/// How EC2 is reached.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Every region's endpoint (a VPC endpoint, a proxy, moto in the
    /// tests); `None`: EC2's own endpoint of each region.
    pub endpoint: Option<String>,
    pub timeouts: Timeouts,
}

/// The most regions whose clients are kept; past it (MachineSets naming
/// more regions than AWS has) the cache starts again.
const MAX_REGIONS: usize = 64;

/// The job's EC2 reader; [`Ec2::pass`] makes the reader of one pass.
pub struct Ec2 {
    client: kube::Client,
    options: Options,
    clients: Mutex<Clients>,
}

/// The EC2 clients made with the credentials Secret at one
/// `resourceVersion`, by region.
#[derive(Default)]
struct Clients {
    resource_version: Option<String>,
    by_region: BTreeMap<String, Arc<Client>>,
}

/// The credentials Secret as one pass read it.
#[derive(Clone)]
struct Read {
    /// `None` for a Secret without one: its clients are not kept.
    resource_version: Option<String>,
    credentials: Credentials,
}

impl Ec2 {
    pub fn new(client: kube::Client, options: Options) -> Ec2 {
        Ec2 {
            client,
            options,
            clients: Mutex::default(),
        }
    }

    /// A reader for one pass: the Secret is read (once) when the first
    /// read comes, so a pass without AWS MachineSets reads nothing.
    pub fn pass(&self) -> Ec2Pass<'_> {
        Ec2Pass {
            ec2: self,
            credentials: None,
            answers: BTreeMap::new(),
            down: BTreeMap::new(),
        }
    }

    /// The client of `region` for the credentials `read`: the one kept,
    /// unless the Secret changed since it was made.
    fn client(&self, region: &str, read: &Read) -> Result<Arc<Client>, String> {
        // The cache holds no invariant a panic elsewhere could break.
        let mut clients = self.clients.lock().unwrap_or_else(PoisonError::into_inner);
        let version = read.resource_version.as_deref();
        if version.is_none()
            || clients.resource_version.as_deref() != version
            || clients.by_region.len() >= MAX_REGIONS
        {
            clients.by_region.clear();
            clients.resource_version = read.resource_version.clone();
        }
        if let Some(client) = clients.by_region.get(region) {
            return Ok(client.clone());
        }
        let client = Client::new(
            region,
            self.options.endpoint.as_deref(),
            read.credentials.clone(),
            self.options.timeouts,
        )
        .map(Arc::new)
        .map_err(|e| e.to_string())?;
        tracing::debug!(region, "made an EC2 client");
        if version.is_some() {
            clients.by_region.insert(region.to_owned(), client.clone());
        }
        Ok(client)
    }

    async fn credentials(&self) -> Result<Read, String> {
        let secrets: Api<Secret> = Api::namespaced(self.client.clone(), CREDENTIALS_NAMESPACE);
        let name = format!("Secret {CREDENTIALS_NAMESPACE}/{CREDENTIALS_SECRET}");
        match secrets.get_opt(CREDENTIALS_SECRET).await {
            Ok(Some(secret)) => Ok(Read {
                credentials: credentials(&secret)?,
                resource_version: secret.metadata.resource_version,
            }),
            Ok(None) => Err(format!("{name} does not exist")),
            // The apiserver's own words (Forbidden: …), not the whole
            // status object.
            Err(kube::Error::Api(status)) => Err(format!(
                "reading {name}: {}: {}",
                status.reason, status.message
            )),
            Err(e) => Err(format!("reading {name}: {e}")),
        }
    }
}

/// The static keys of the credentials Secret. STS web identity (only
/// `role_arn` and `web_identity_token_file`), which upstream tries first,
/// is not supported: such a Secret is an error that says so.
pub fn credentials(secret: &Secret) -> Result<Credentials, String> {
    let name = format!("Secret {CREDENTIALS_NAMESPACE}/{CREDENTIALS_SECRET}");
    let empty = BTreeMap::new();
    let data = secret.data.as_ref().unwrap_or(&empty);
    // Values are read, never quoted: a key with stray whitespace (a
    // trailing newline from `kubectl create secret --from-file`) is
    // trimmed, as no AWS key holds any.
    let value = |key: &str| -> Result<Option<String>, String> {
        let Some(bytes) = data.get(key) else {
            return Ok(None);
        };
        let text = std::str::from_utf8(&bytes.0)
            .map_err(|_| format!("{name}: key {key} is not UTF-8"))?
            .trim();
        if text.len() > MAX_VALUE_BYTES {
            return Err(format!(
                "{name}: key {key} is longer than {MAX_VALUE_BYTES} bytes"
            ));
        }
        Ok((!text.is_empty()).then(|| text.to_owned()))
    };
    match (value(ACCESS_KEY_ID)?, value(SECRET_ACCESS_KEY)?) {
        (Some(id), Some(key)) => Ok(Credentials::new(id, key, None)),
        (Some(_), None) | (None, Some(_)) => Err(format!(
            "{name} has only one of {ACCESS_KEY_ID} and {SECRET_ACCESS_KEY}"
        )),
        (None, None) if value(ROLE_ARN)?.is_some() && value(WEB_IDENTITY_TOKEN_FILE)?.is_some() => {
            Err(format!(
                "{name} holds STS web identity credentials ({ROLE_ARN}, {WEB_IDENTITY_TOKEN_FILE}), which this controller does not support yet; it needs {ACCESS_KEY_ID} and {SECRET_ACCESS_KEY}"
            ))
        }
        (None, None) => Err(format!(
            "{name} has neither {ACCESS_KEY_ID} and {SECRET_ACCESS_KEY} nor {ROLE_ARN} and {WEB_IDENTITY_TOKEN_FILE}"
        )),
    }
}

/// The EC2 reader of one pass.
pub struct Ec2Pass<'a> {
    ec2: &'a Ec2,
    credentials: Option<Result<Read, String>>,
    answers: BTreeMap<Ec2Read, Ec2Answer>,
    /// Regions whose endpoint could not be reached in this pass, or that
    /// refused the credentials, and the answer every read there gets.
    down: BTreeMap<String, Ec2Answer>,
}

impl Ec2Pass<'_> {
    /// EC2's answer to `read`, asked once per pass.
    pub async fn answer(&mut self, read: &Ec2Read) -> Ec2Answer {
        if let Some(answer) = self.answers.get(read) {
            return answer.clone();
        }
        let span = tracing::info_span!("ec2", region = %read.region(), %read);
        let answer = self.ask(read).instrument(span).await;
        self.answers.insert(read.clone(), answer.clone());
        answer
    }

    async fn ask(&mut self, read: &Ec2Read) -> Ec2Answer {
        let region = read.region().to_owned();
        if let Some(answer) = self.down.get(&region) {
            return answer.clone();
        }
        let client = match self.client(&region).await {
            Ok(client) => client,
            Err(why) => {
                let answer = Ec2Answer::Unreachable(why);
                self.down.insert(region, answer.clone());
                return answer;
            }
        };
        let result = match read {
            Ec2Read::Image { image_id, .. } => client
                .describe_image(image_id)
                .await
                .map(|image| Ec2Answer::Image(image.map(ec2_image))),
            Ec2Read::Marketplace { product_id, .. } => client
                .marketplace_images(product_id)
                .await
                .map(|images| Ec2Answer::Marketplace(images.into_iter().map(ec2_image).collect())),
        };
        match result {
            Ok(answer) => answer,
            Err(err) => {
                let why = err.to_string();
                let kind = err.kind();
                if kind == ErrorKind::Denied {
                    tracing::warn!(error = %why, "EC2 refused the credentials; the static AMI lists decide");
                    let answer = Ec2Answer::Denied(why);
                    self.down.insert(region, answer.clone());
                    return answer;
                }
                tracing::warn!(error = %why, "EC2 did not answer; the static AMI lists decide");
                let answer = Ec2Answer::Unreachable(why);
                if matches!(kind, ErrorKind::Unreachable | ErrorKind::Timeout) {
                    self.down.insert(region, answer.clone());
                }
                answer
            }
        }
    }

    /// The client of `region`, with the Secret read once per pass.
    async fn client(&mut self, region: &str) -> Result<Arc<Client>, String> {
        let read = match &self.credentials {
            Some(read) => read,
            None => self.credentials.insert(self.ec2.credentials().await),
        };
        self.ec2
            .client(region, read.as_ref().map_err(String::clone)?)
    }
}

fn ec2_image(image: Image) -> Ec2Image {
    Ec2Image {
        image_id: image.image_id,
        owner_id: image.owner_id,
        name: image.name.unwrap_or_default(),
        description: image.description.unwrap_or_default(),
        creation_date: image.creation_date.unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::ByteString;

    fn secret(pairs: &[(&str, &[u8])]) -> Secret {
        Secret {
            data: Some(
                pairs
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), ByteString(v.to_vec())))
                    .collect(),
            ),
            ..Secret::default()
        }
    }

    #[test]
    fn static_keys_are_read_and_trimmed() {
        let c = credentials(&secret(&[
            (ACCESS_KEY_ID, b"AKIDEXAMPLE\n"),
            (SECRET_ACCESS_KEY, b" s3cr3t-value "),
        ]))
        .unwrap();
        assert_eq!(c.access_key_id(), "AKIDEXAMPLE");
        assert!(!format!("{c:?}").contains("s3cr3t-value"));
    }

    #[test]
    fn other_secrets_say_what_is_missing_and_quote_no_value() {
        for (pairs, want) in [
            (vec![], "has neither"),
            (vec![(ACCESS_KEY_ID, &b"AKID"[..])], "only one of"),
            (
                vec![(SECRET_ACCESS_KEY, &b"s3cr3t-value"[..])],
                "only one of",
            ),
            (
                vec![
                    (ACCESS_KEY_ID, &b" "[..]),
                    (SECRET_ACCESS_KEY, &b"s3cr3t-value"[..]),
                ],
                "only one of",
            ),
            (
                vec![
                    (ROLE_ARN, &b"arn:aws:iam::1:role/r"[..]),
                    (WEB_IDENTITY_TOKEN_FILE, &b"/var/run/token"[..]),
                ],
                "STS web identity",
            ),
            (
                vec![(ROLE_ARN, &b"arn:aws:iam::1:role/r"[..])],
                "has neither",
            ),
            (
                vec![
                    (ACCESS_KEY_ID, &b"AKID"[..]),
                    (SECRET_ACCESS_KEY, &b"\xffs3cr3t-value"[..]),
                ],
                "is not UTF-8",
            ),
        ] {
            let err = credentials(&secret(&pairs)).unwrap_err();
            assert!(err.contains(want), "{err}");
            assert!(!err.contains("s3cr3t-value"), "{err}");
        }
        let err = credentials(&Secret::default()).unwrap_err();
        assert!(
            err.contains("openshift-machine-api/aws-cloud-credentials"),
            "{err}"
        );
    }

    #[test]
    fn an_apiserver_size_secret_is_read_or_refused_by_name_unquoted() {
        // The most a Secret holds (the apiserver's 1 MiB of data).
        let full = "s3cr3t-value".repeat((1 << 20) / 12);
        // Filled by a key the controller does not read: read as usual.
        let c = credentials(&secret(&[
            (ACCESS_KEY_ID, b"AKIDEXAMPLE"),
            (SECRET_ACCESS_KEY, b"s3cr3t-value"),
            ("padding", full.as_bytes()),
        ]))
        .unwrap();
        assert_eq!(c.access_key_id(), "AKIDEXAMPLE");
        // Filled by a key it reads: refused before anything reaches EC2.
        for (key, other) in [
            (ACCESS_KEY_ID, SECRET_ACCESS_KEY),
            (SECRET_ACCESS_KEY, ACCESS_KEY_ID),
        ] {
            let err = credentials(&secret(&[(key, full.as_bytes()), (other, b"AKIDEXAMPLE")]))
                .unwrap_err();
            assert_eq!(
                err,
                format!(
                    "Secret openshift-machine-api/aws-cloud-credentials: key {key} is longer than 128 bytes"
                )
            );
        }
    }

    /// A pass reader whose credentials are already read: its job's kube
    /// client points nowhere (the Secret is never read).
    fn pass_for(ec2: &Ec2) -> Ec2Pass<'_> {
        pass_at(ec2, Some("1"))
    }

    /// As [`pass_for`], the Secret read at `resource_version`.
    fn pass_at<'a>(ec2: &'a Ec2, resource_version: Option<&str>) -> Ec2Pass<'a> {
        let mut pass = ec2.pass();
        pass.credentials = Some(Ok(Read {
            resource_version: resource_version.map(str::to_owned),
            credentials: Credentials::new("AKIDEXAMPLE", "s3cr3t-value", None),
        }));
        pass
    }

    /// The job's EC2 reader with every region at `endpoint`.
    fn ec2_at(endpoint: String) -> Ec2 {
        let config = kube::Config::new("http://127.0.0.1:9".parse().unwrap());
        let timeouts = Timeouts {
            connect: std::time::Duration::from_secs(5),
            read: std::time::Duration::from_secs(5),
            call: std::time::Duration::from_secs(10),
        };
        Ec2::new(
            kube::Client::try_from(config).unwrap(),
            Options {
                endpoint: Some(endpoint),
                timeouts,
            },
        )
    }

    /// A loopback server answering every request with `body` (HTTP 200),
    /// counting the requests.
    async fn serve(body: &'static str) -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
        serve_status("200 OK", body).await
    }

    /// [`serve`] with another status.
    async fn serve_status(
        status: &'static str,
        body: &'static str,
    ) -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let count = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let seen = count.clone();
        tokio::spawn(async move {
            while let Ok((mut sock, _)) = listener.accept().await {
                let mut buf = [0u8; 16384];
                // One read holds these small requests whole.
                let _ = sock.read(&mut buf).await;
                seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let response = format!(
                    "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = sock.write_all(response.as_bytes()).await;
            }
        });
        (format!("http://{addr}/"), count)
    }

    fn image_read(region: &str) -> Ec2Read {
        Ec2Read::Image {
            region: region.into(),
            image_id: "ami-1".into(),
        }
    }

    #[tokio::test]
    async fn each_read_is_asked_once_a_pass() {
        let (url, count) = serve(
            "<DescribeImagesResponse><imagesSet><item><imageId>ami-1</imageId><imageOwnerId>531415883065</imageOwnerId></item></imagesSet></DescribeImagesResponse>",
        )
        .await;
        let ec2 = ec2_at(url);
        let mut pass = pass_for(&ec2);
        for _ in 0..3 {
            let Ec2Answer::Image(Some(image)) = pass.answer(&image_read("us-east-1")).await else {
                panic!("no image");
            };
            assert_eq!(image.owner_id, "531415883065");
        }
        assert_eq!(count.load(std::sync::atomic::Ordering::SeqCst), 1);
        // Another region is another read; the next pass asks again.
        pass.answer(&image_read("eu-west-1")).await;
        assert_eq!(count.load(std::sync::atomic::Ordering::SeqCst), 2);
        let mut next = pass_for(&ec2);
        next.answer(&image_read("us-east-1")).await;
        assert_eq!(count.load(std::sync::atomic::Ordering::SeqCst), 3);
    }

    #[tokio::test]
    async fn a_region_that_does_not_answer_is_not_asked_again_in_the_pass() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        drop(listener);
        let ec2 = ec2_at(format!("http://{addr}/"));
        let mut pass = pass_for(&ec2);
        let Ec2Answer::Unreachable(first) = pass.answer(&image_read("us-east-1")).await else {
            panic!("a closed port answered");
        };
        assert!(first.starts_with("EC2 DescribeImages: "), "{first}");
        let marketplace = Ec2Read::Marketplace {
            region: "us-east-1".into(),
            product_id: "59ead7de-2540-4653-a8b0-fa7926d5c845".into(),
        };
        assert_eq!(
            pass.answer(&marketplace).await,
            Ec2Answer::Unreachable(first)
        );
        assert!(!pass.down.is_empty());
    }

    #[tokio::test]
    async fn clients_are_kept_while_the_secret_is_unchanged() {
        let ec2 = ec2_at("http://127.0.0.1:9/".into());
        let client = async |version: Option<&str>, region: &str| {
            pass_at(&ec2, version).client(region).await.unwrap()
        };
        let first = client(Some("1"), "us-east-1").await;
        // Another pass, the same Secret: the same client.
        assert!(Arc::ptr_eq(&first, &client(Some("1"), "us-east-1").await));
        let other_region = client(Some("1"), "eu-west-1").await;
        assert!(!Arc::ptr_eq(&first, &other_region));
        assert!(Arc::ptr_eq(
            &other_region,
            &client(Some("1"), "eu-west-1").await
        ));
        // A changed Secret (rotated keys): new clients, kept in turn.
        let rotated = client(Some("2"), "us-east-1").await;
        assert!(!Arc::ptr_eq(&first, &rotated));
        assert!(Arc::ptr_eq(&rotated, &client(Some("2"), "us-east-1").await));
        // A Secret without a resourceVersion: never kept.
        let unversioned = client(None, "us-east-1").await;
        assert!(!Arc::ptr_eq(&unversioned, &client(None, "us-east-1").await));
        assert!(!Arc::ptr_eq(
            &rotated,
            &client(Some("2"), "us-east-1").await
        ));
        // Past the bound of regions, the cache starts again.
        let kept = client(Some("3"), "us-east-1").await;
        for i in 0..MAX_REGIONS {
            client(Some("3"), &format!("xx-test-{i}")).await;
        }
        assert!(!Arc::ptr_eq(&kept, &client(Some("3"), "us-east-1").await));
    }

    #[tokio::test]
    async fn refused_credentials_are_denied_once_a_pass_per_region() {
        let (url, count) = serve_status(
            "401 Unauthorized",
            "<Response><Errors><Error><Code>AuthFailure</Code><Message>AWS was not able to validate the provided access credentials</Message></Error></Errors></Response>",
        )
        .await;
        let ec2 = ec2_at(url);
        let mut pass = pass_for(&ec2);
        let answer = pass.answer(&image_read("us-east-1")).await;
        let Ec2Answer::Denied(why) = &answer else {
            panic!("{answer:?}");
        };
        assert_eq!(
            why,
            "EC2 DescribeImages: HTTP 401: AuthFailure: AWS was not able to validate the provided access credentials"
        );
        let marketplace = Ec2Read::Marketplace {
            region: "us-east-1".into(),
            product_id: "59ead7de-2540-4653-a8b0-fa7926d5c845".into(),
        };
        assert_eq!(pass.answer(&marketplace).await, answer);
        assert_eq!(count.load(std::sync::atomic::Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn credentials_that_cannot_be_read_answer_every_read_unreachable() {
        let ec2 = ec2_at("http://127.0.0.1:9/".into());
        let mut pass = ec2.pass();
        pass.credentials = Some(Err(
            "Secret openshift-machine-api/aws-cloud-credentials has neither …".into(),
        ));
        let answer = pass.answer(&image_read("us-east-1")).await;
        assert!(
            matches!(&answer, Ec2Answer::Unreachable(why) if why.contains("has neither")),
            "{answer:?}"
        );
    }

    #[test]
    fn images_keep_what_ec2_said() {
        let image = ec2_image(Image {
            image_id: "ami-1".into(),
            owner_id: "531415883065".into(),
            name: Some("rhcos".into()),
            description: None,
            creation_date: Some("2026-02-10T12:00:00.000Z".into()),
        });
        assert_eq!(
            (image.name.as_str(), image.description.as_str()),
            ("rhcos", "")
        );
    }
}
