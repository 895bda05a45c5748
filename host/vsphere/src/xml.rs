//! A small owned XML tree, parsed with bounds, for SOAP responses and OVF
//! descriptors. Both come from outside: the text is bounded in size by the
//! caller, and the tree here in depth (no recursion, ours or `Drop`'s, can
//! blow the stack) and in element count (many tiny elements cannot cost far
//! more memory than their bytes). DTDs are refused: neither format uses one,
//! and refusing them rules out entity tricks. Names are kept by local name
//! only, as vim25 has one namespace and OVF readers match by local name;
//! `xsi:type`, the one namespaced attribute that matters in vim25, is
//! resolved properly (vcsim spells its prefix `XMLSchema-instance`).

use std::fmt::Write as _;

use quick_xml::NsReader;
use quick_xml::XmlVersion;
use quick_xml::events::Event;
use quick_xml::name::{Namespace, ResolveResult};

const XSI: &[u8] = b"http://www.w3.org/2001/XMLSchema-instance";

/// The deepest nesting accepted. vim25's deepest answers (an import spec's
/// device backings) are under 20 levels; an OVF is under 10.
pub(crate) const MAX_DEPTH: usize = 64;

/// The most elements one document may hold. Property collector answers are
/// paged well below this (see `inventory`), and an OVF has a few hundred.
pub(crate) const MAX_ELEMENTS: usize = 250_000;

/// One attribute, by local name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Attr {
    pub local: String,
    /// Whether the name had a namespace prefix (`ovf:name`); such attributes
    /// are matched by local name but never written back (vim25 has none).
    pub prefixed: bool,
    pub value: String,
}

/// One element: local name, attributes, its own text, children in order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Element {
    pub name: String,
    pub attrs: Vec<Attr>,
    /// The value of `xsi:type`, as written (`xsd:string`, `VirtualDisk`).
    pub xsi_type: Option<String>,
    pub text: String,
    pub children: Vec<Element>,
}

impl Element {
    pub(crate) fn new(name: &str) -> Element {
        Element {
            name: name.to_owned(),
            ..Element::default()
        }
    }

    /// The first child named `name`.
    pub(crate) fn child(&self, name: &str) -> Option<&Element> {
        self.children.iter().find(|c| c.name == name)
    }

    /// Every child named `name`.
    pub(crate) fn children_named<'a>(
        &'a self,
        name: &'a str,
    ) -> impl Iterator<Item = &'a Element> + 'a {
        self.children.iter().filter(move |c| c.name == name)
    }

    /// The element at `path` (child names from here), first match at each
    /// level.
    pub(crate) fn at(&self, path: &[&str]) -> Option<&Element> {
        path.iter().try_fold(self, |el, name| el.child(name))
    }

    /// The text of the child at `path`, if there is such a child.
    pub(crate) fn text_at(&self, path: &[&str]) -> Option<&str> {
        self.at(path).map(|e| e.text.as_str())
    }

    /// An attribute by local name, prefixed or not.
    pub(crate) fn attr(&self, local: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|a| a.local == local)
            .map(|a| a.value.as_str())
    }

    /// An attribute that has no namespace prefix (vim25's `type` of a
    /// managed object reference).
    pub(crate) fn plain_attr(&self, local: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|a| !a.prefixed && a.local == local)
            .map(|a| a.value.as_str())
    }

    /// `xsi:type` without its prefix (`xsd:string` → `string`).
    pub(crate) fn type_name(&self) -> Option<&str> {
        self.xsi_type
            .as_deref()
            .map(|t| t.rsplit_once(':').map_or(t, |(_, local)| local))
    }

    /// Serializes this element as vim25 request XML, named `name` instead
    /// of its own name if given. Children and text are written as read;
    /// only unprefixed attributes and `xsi:type` are kept (the request
    /// envelope declares `xsi` and `xsd`).
    pub(crate) fn write_vim(&self, out: &mut String, name: Option<&str>) {
        let name = name.unwrap_or(&self.name);
        out.push('<');
        out.push_str(name);
        if let Some(t) = &self.xsi_type {
            let _ = write!(out, r#" xsi:type="{}""#, escape(t));
        }
        for a in self.attrs.iter().filter(|a| !a.prefixed) {
            let _ = write!(out, r#" {}="{}""#, a.local, escape(&a.value));
        }
        out.push('>');
        out.push_str(&escape(&self.text));
        for c in &self.children {
            c.write_vim(out, None);
        }
        let _ = write!(out, "</{name}>");
    }
}

/// Escapes text or an attribute value (`&`, `<`, `>`, `'`, `"`).
pub(crate) fn escape(text: &str) -> std::borrow::Cow<'_, str> {
    quick_xml::escape::escape(text)
}

/// Parses one XML document into its root element.
pub(crate) fn parse(text: &str) -> Result<Element, String> {
    let mut reader = NsReader::from_str(text);
    let mut stack: Vec<Element> = Vec::new();
    let mut root: Option<Element> = None;
    let mut count = 0usize;
    loop {
        let event = reader
            .read_event()
            .map_err(|e| format!("at byte {}: {e}", reader.error_position()))?;
        match event {
            Event::Start(start) => {
                count += 1;
                if count > MAX_ELEMENTS {
                    return Err(format!("more than {MAX_ELEMENTS} elements"));
                }
                if stack.len() >= MAX_DEPTH {
                    return Err(format!("nested deeper than {MAX_DEPTH} elements"));
                }
                if root.is_some() {
                    return Err("more than one root element".to_owned());
                }
                stack.push(element(&reader, &start)?);
            }
            Event::Empty(start) => {
                count += 1;
                if count > MAX_ELEMENTS {
                    return Err(format!("more than {MAX_ELEMENTS} elements"));
                }
                if stack.len() >= MAX_DEPTH {
                    return Err(format!("nested deeper than {MAX_DEPTH} elements"));
                }
                let el = element(&reader, &start)?;
                attach(&mut stack, &mut root, el)?;
            }
            Event::End(_) => {
                let el = stack
                    .pop()
                    .ok_or_else(|| "an end tag without a start".to_owned())?;
                attach(&mut stack, &mut root, el)?;
            }
            Event::Text(t) => {
                let s = t.xml10_content().map_err(|e| e.to_string())?;
                push_text(&mut stack, &s)?;
            }
            Event::CData(c) => {
                let s = c.decode().map_err(|e| e.to_string())?;
                push_text(&mut stack, &s)?;
            }
            Event::GeneralRef(r) => {
                let ch = match r.resolve_char_ref().map_err(|e| e.to_string())? {
                    Some(ch) => ch,
                    None => {
                        let name = r.decode().map_err(|e| e.to_string())?;
                        match &*name {
                            "lt" => '<',
                            "gt" => '>',
                            "amp" => '&',
                            "apos" => '\'',
                            "quot" => '"',
                            other => return Err(format!("unknown entity &{other};")),
                        }
                    }
                };
                push_text(&mut stack, ch.encode_utf8(&mut [0; 4]))?;
            }
            Event::DocType(_) => return Err("a DOCTYPE is not accepted".to_owned()),
            Event::Decl(_) | Event::PI(_) | Event::Comment(_) => {}
            Event::Eof => break,
        }
    }
    if let Some(open) = stack.last() {
        return Err(format!("the document ends inside <{}>", open.name));
    }
    root.ok_or_else(|| "no root element".to_owned())
}

fn attach(stack: &mut [Element], root: &mut Option<Element>, el: Element) -> Result<(), String> {
    if let Some(parent) = stack.last_mut() {
        parent.children.push(el);
    } else if root.is_none() {
        *root = Some(el);
    } else {
        return Err("more than one root element".to_owned());
    }
    Ok(())
}

fn push_text(stack: &mut [Element], s: &str) -> Result<(), String> {
    match stack.last_mut() {
        Some(top) => top.text.push_str(s),
        None if s.trim().is_empty() => {}
        None => return Err("text outside the root element".to_owned()),
    }
    Ok(())
}

fn utf8(bytes: &[u8]) -> Result<String, String> {
    std::str::from_utf8(bytes)
        .map(str::to_owned)
        .map_err(|_| "a name is not UTF-8".to_owned())
}

fn element(
    reader: &NsReader<&[u8]>,
    start: &quick_xml::events::BytesStart<'_>,
) -> Result<Element, String> {
    let mut el = Element::new(&utf8(start.local_name().as_ref())?);
    for attr in start.attributes() {
        let attr = attr.map_err(|e| e.to_string())?;
        let key = attr.key;
        if key.as_namespace_binding().is_some() {
            continue;
        }
        let value = attr
            .normalized_value(XmlVersion::Implicit1_0)
            .map_err(|e| e.to_string())?
            .into_owned();
        let (ns, local) = reader.resolver().resolve_attribute(key);
        let local = utf8(local.as_ref())?;
        if matches!(ns, ResolveResult::Bound(Namespace(n)) if n == XSI) && local == "type" {
            el.xsi_type = Some(value);
            continue;
        }
        el.attrs.push(Attr {
            local,
            prefixed: key.prefix().is_some(),
            value,
        });
    }
    Ok(el)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_names_attributes_text_and_xsi_type() {
        let doc = r#"<?xml version="1.0"?>
<a:Root xmlns:a="urn:x" xmlns:X="http://www.w3.org/2001/XMLSchema-instance">
  <val X:type="ManagedObjectReference" type="Folder">group-d1</val>
  <s>a &amp; b &lt;c&gt; &#x41;&#66;<![CDATA[<raw>]]></s>
  <e ovf:name="VM Network" xmlns:ovf="urn:ovf"/>
</a:Root>"#;
        let root = parse(doc).unwrap();
        assert_eq!(root.name, "Root");
        let val = root.child("val").unwrap();
        assert_eq!(val.type_name(), Some("ManagedObjectReference"));
        assert_eq!(val.plain_attr("type"), Some("Folder"));
        assert_eq!(val.text, "group-d1");
        assert_eq!(root.text_at(&["s"]), Some("a & b <c> AB<raw>"));
        let e = root.child("e").unwrap();
        assert_eq!(e.attr("name"), Some("VM Network"));
        assert_eq!(e.plain_attr("name"), None);
    }

    #[test]
    fn refuses_malformed_and_hostile_documents() {
        for (doc, want) in [
            ("", "no root element"),
            ("<a><b></a>", ""),
            ("<a>", "ends inside <a>"),
            ("<a/><b/>", "more than one root"),
            ("text", "outside the root"),
            ("<a>&xxe;</a>", "unknown entity"),
            (
                r#"<!DOCTYPE a [<!ENTITY x "y">]><a>&x;</a>"#,
                "DOCTYPE is not accepted",
            ),
            ("<a b='1' b='2'/>", ""),
        ] {
            let err = parse(doc).expect_err(doc);
            assert!(err.contains(want), "{doc}: {err}");
        }
        let deep = "<a>".repeat(MAX_DEPTH + 1) + &"</a>".repeat(MAX_DEPTH + 1);
        assert!(parse(&deep).unwrap_err().contains("deeper"));
        let ok = "<a>".repeat(MAX_DEPTH) + &"</a>".repeat(MAX_DEPTH);
        assert!(parse(&ok).is_ok());
        let many = format!("<r>{}</r>", "<a/>".repeat(MAX_ELEMENTS));
        assert!(parse(&many).unwrap_err().contains("elements"));
    }

    #[test]
    fn writes_back_what_vim25_needs() {
        let doc = r#"<importSpec xmlns="urn:vim25" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="VirtualMachineImportSpec"><configSpec><name>a&amp;b</name><pool type="ResourcePool">resgroup-1</pool></configSpec></importSpec>"#;
        let el = parse(doc).unwrap();
        let mut out = String::new();
        el.write_vim(&mut out, Some("spec"));
        assert_eq!(
            out,
            r#"<spec xsi:type="VirtualMachineImportSpec"><configSpec><name>a&amp;b</name><pool type="ResourcePool">resgroup-1</pool></configSpec></spec>"#
        );
    }
}
