//! The stream ConfigMap as the host parsed it, kept between passes: a
//! pass re-reads every watched object, but the stream changes once a
//! release, so the host parses it once per resourceVersion, not once per
//! pass.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::guest::StreamInput;
use super::objects::{ConfigMapData, Decoded};

/// The stream ConfigMap as the host read it at one resourceVersion.
#[derive(Clone, Default)]
pub struct ParsedStream {
    version: String,
    /// Its `data.stream` and the host's parse of it.
    pub input: Arc<StreamInput>,
    /// The boot images it publishes.
    pub published: Arc<BTreeSet<String>>,
}

/// The last stream ConfigMap parsed.
#[derive(Default)]
pub struct StreamCache(Option<ParsedStream>);

impl StreamCache {
    /// The stream ConfigMap's text and the host's parse of it, with the
    /// images it publishes: once per ConfigMap version. A stream that does
    /// not parse publishes none (every guest call reports why).
    pub fn read(&mut self, cm: Option<&Decoded<ConfigMapData>>) -> ParsedStream {
        let Some(cm) = cm else {
            return ParsedStream::default();
        };
        let version = cm.metadata.resource_version.clone().unwrap_or_default();
        if let Some(parsed) = &self.0
            && parsed.version == version
        {
            return parsed.clone();
        }
        let input = StreamInput::new(cm.object.as_ref().ok().and_then(ConfigMapData::stream));
        let published = input
            .index()
            .map(mco_bootimage::Stream::published_images)
            .unwrap_or_default();
        let parsed = ParsedStream {
            version,
            input: Arc::new(input),
            published: Arc::new(published),
        };
        self.0 = Some(parsed.clone());
        parsed
    }
}
