//! vAPI tagging over REST.
//!
//! vcsim v0.45.1 serves tagging under `/rest` only (its `/api` handlers
//! are the content library's security policies and trusted certificates);
//! vCenter 7 and 8 serve `/rest` too, so `/rest` is what this client uses,
//! as govmomi's tags manager does. A session is opened with basic auth
//! (`POST /rest/com/vmware/cis/session`, answered `{"value": "<id>"}`) and
//! sent back in the `vmware-api-session-id` header.

use reqwest::Method;
use reqwest::header::CONTENT_TYPE;
use serde_json::{Value, json};

use mco_http::excerpt;

use crate::error::Error;
use crate::session::{Session, http_error, read_bounded};

const SESSION: &str = "/rest/com/vmware/cis/session";
const TAGS: &str = "/rest/com/vmware/cis/tagging/tag";
const ASSOCIATION: &str = "/rest/com/vmware/cis/tagging/tag-association";
const SESSION_HEADER: &str = "vmware-api-session-id";

/// What a tag ID starts with; anything else is taken as a tag name.
const TAG_ID_PREFIX: &str = "urn:vmomi:InventoryServiceTag:";

/// The most tags read when resolving a tag name.
const MAX_TAGS: usize = 10_000;

impl Session {
    /// The vAPI session, opened on first use.
    async fn rest_session(&self) -> Result<String, Error> {
        let mut token = self.rest_token.lock().await;
        if let Some(t) = token.as_ref() {
            return Ok(t.clone());
        }
        let url = format!("https://{}{SESSION}", self.server);
        let response = self
            .http
            .post(&url)
            .timeout(self.timeouts.call)
            .basic_auth(&self.username, Some(&self.password))
            // Answer with the ID in the body only, no cookie.
            .header("vmware-use-header-authn", "true")
            .send()
            .await
            .map_err(|e| http_error(SESSION, &e, "call", self.timeouts.call))?;
        let value = json_answer(SESSION, response, self.timeouts.call).await?;
        let id = value
            .get("value")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty() && s.len() <= 256)
            .ok_or_else(|| Error::Malformed {
                method: SESSION.into(),
                detail: "no session ID in the answer".into(),
            })?
            .to_owned();
        *token = Some(id.clone());
        Ok(id)
    }

    /// Ends the vAPI session, if one was opened.
    pub(crate) async fn rest_logout(&self) -> Result<(), Error> {
        let Some(id) = self.rest_token.lock().await.take() else {
            return Ok(());
        };
        let url = format!("https://{}{SESSION}", self.server);
        let response = self
            .http
            .delete(&url)
            .timeout(self.timeouts.call)
            .header(SESSION_HEADER, id)
            .send()
            .await
            .map_err(|e| http_error(SESSION, &e, "call", self.timeouts.call))?;
        json_answer(SESSION, response, self.timeouts.call)
            .await
            .map(drop)
    }

    /// One vAPI call: `path` (with its `?~action=`), a JSON body or none;
    /// the JSON answer (`null` for an empty one). A 401 (the session
    /// expired) logs in again once.
    async fn rest(&self, method: Method, path: &str, body: Option<&Value>) -> Result<Value, Error> {
        for attempt in 0..2 {
            let id = self.rest_session().await?;
            let url = format!("https://{}{path}", self.server);
            let mut request = self
                .http
                .request(method.clone(), &url)
                .timeout(self.timeouts.call)
                .header(SESSION_HEADER, id);
            if let Some(body) = body {
                request = request
                    .header(CONTENT_TYPE, "application/json")
                    .body(body.to_string());
            }
            let response = request
                .send()
                .await
                .map_err(|e| http_error(path, &e, "call", self.timeouts.call))?;
            if response.status() == reqwest::StatusCode::UNAUTHORIZED && attempt == 0 {
                *self.rest_token.lock().await = None;
                continue;
            }
            return json_answer(path, response, self.timeouts.call).await;
        }
        Err(Error::Rest {
            path: path.to_owned(),
            status: 401,
            body: "unauthorized after logging in again".into(),
        })
    }

    /// The ID of `tag`: itself if it is an ID, else the ID of the first tag
    /// named `tag` (every tag is read: vAPI has no lookup by name).
    pub(crate) async fn tag_id(&self, tag: &str) -> Result<String, Error> {
        if tag.starts_with(TAG_ID_PREFIX) {
            return checked_id(tag).map(str::to_owned);
        }
        let list = self.rest(Method::GET, TAGS, None).await?;
        // vcsim leaves an empty list out (`{}`); vCenter sends `[]`.
        let ids = match list.get("value") {
            None | Some(Value::Null) => &[][..],
            Some(Value::Array(ids)) => ids.as_slice(),
            Some(_) => {
                return Err(Error::Malformed {
                    method: TAGS.into(),
                    detail: "the tag list is not a list".into(),
                });
            }
        };
        for id in ids.iter().take(MAX_TAGS).filter_map(Value::as_str) {
            let Ok(id) = checked_id(id) else { continue };
            let path = format!("{TAGS}/id:{id}");
            let model = self.rest(Method::GET, &path, None).await?;
            if model.pointer("/value/name").and_then(Value::as_str) == Some(tag) {
                return Ok(id.to_owned());
            }
        }
        Err(Error::NotFound {
            what: "tag",
            path: tag.to_owned(),
        })
    }

    /// Attaches `tag` (an ID or a name) to the VM `vm` (`vm-42`).
    pub(crate) async fn attach_tag(&self, tag: &str, vm: &str) -> Result<(), Error> {
        let id = self.tag_id(tag).await?;
        let path = format!("{ASSOCIATION}/id:{id}?~action=attach");
        let body = json!({ "object_id": { "id": vm, "type": "VirtualMachine" } });
        self.rest(Method::POST, &path, Some(&body)).await.map(drop)
    }
}

/// A tag ID that is safe to put in a URL path.
fn checked_id(id: &str) -> Result<&str, Error> {
    if !id.is_empty()
        && id.len() <= 256
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, ':' | '-' | '_' | '.'))
    {
        Ok(id)
    } else {
        Err(Error::Invalid(format!(
            "{:?} is not a tag ID",
            excerpt(id, 100)
        )))
    }
}

/// The JSON of a 2xx answer (`null` when empty); [`Error::Rest`] with the
/// start of the body otherwise.
async fn json_answer(
    path: &str,
    response: reqwest::Response,
    timeout: std::time::Duration,
) -> Result<Value, Error> {
    let status = response.status();
    let bytes = read_bounded(response, path, "call", timeout).await?;
    if !status.is_success() {
        return Err(Error::Rest {
            path: path.to_owned(),
            status: status.as_u16(),
            body: excerpt(&String::from_utf8_lossy(&bytes), 500),
        });
    }
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(Value::Null);
    }
    serde_json::from_slice(&bytes).map_err(|e| Error::Malformed {
        method: path.to_owned(),
        detail: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tag_ids_are_checked_before_they_go_in_a_url() {
        let id = "urn:vmomi:InventoryServiceTag:2c5c6d5f-1f4e-4b1a-9c1e-0f6c2a1b3c4d:GLOBAL";
        assert_eq!(checked_id(id).ok(), Some(id));
        for bad in ["", "a/b", "a?b", "a b", "../x"] {
            assert!(checked_id(bad).is_err(), "{bad}");
        }
    }
}
