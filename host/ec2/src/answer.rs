//! EC2's XML answers, read as a stream: only the few fields the boot image
//! job uses are kept, found by their path from the root, so an answer's
//! size in memory is bounded by what is kept, not by what EC2 (or whoever
//! answers in its place) sends.
//!
//! The text is already bounded by the caller ([`crate::MAX_BODY`]); here
//! the nesting is bounded ([`MAX_DEPTH`]), every kept field is bounded
//! ([`MAX_FIELD`]), DTDs are refused (no entity tricks), and a document
//! that ends early is an error, never a shorter list.

use quick_xml::Reader;
use quick_xml::events::Event;

use crate::Image;

/// The deepest nesting accepted. A DescribeImages answer is 6 levels deep
/// (`…/imagesSet/item/blockDeviceMapping/item/ebs/…`); EC2's error
/// document 4.
pub(crate) const MAX_DEPTH: usize = 32;

/// The longest kept field, in bytes. EC2 allows 128 characters for an AMI
/// name and 255 for a description; tokens are opaque but short.
pub(crate) const MAX_FIELD: usize = 4096;

/// A DescribeImages page.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Page {
    pub images: Vec<Image>,
    pub next_token: Option<String>,
}

/// EC2's error document (`<Response><Errors><Error><Code>…`), or the
/// `<ErrorResponse><Error>…` form some endpoints use.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Ec2Error {
    pub code: String,
    pub message: String,
}

/// The fields an image item may carry that are kept.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Field {
    ImageId,
    OwnerId,
    Name,
    Description,
    CreationDate,
}

impl Field {
    fn of(name: &[u8]) -> Option<Field> {
        Some(match name {
            b"imageId" => Field::ImageId,
            b"imageOwnerId" => Field::OwnerId,
            b"name" => Field::Name,
            b"description" => Field::Description,
            b"creationDate" => Field::CreationDate,
            _ => return None,
        })
    }
}

#[derive(Default)]
struct Item {
    /// The kept fields opened so far: each may appear once, since one
    /// element's text arrives in pieces that are joined, and two elements'
    /// would be joined too (two `<imageOwnerId>` read as one owner).
    opened: Vec<Field>,
    image_id: Option<String>,
    owner_id: Option<String>,
    name: Option<String>,
    description: Option<String>,
    creation_date: Option<String>,
}

impl Item {
    fn slot(&mut self, field: Field) -> &mut Option<String> {
        match field {
            Field::ImageId => &mut self.image_id,
            Field::OwnerId => &mut self.owner_id,
            Field::Name => &mut self.name,
            Field::Description => &mut self.description,
            Field::CreationDate => &mut self.creation_date,
        }
    }

    fn finish(self, index: usize) -> Result<Image, String> {
        let required = |value: Option<String>, what: &str| {
            value
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
                .ok_or_else(|| format!("image {index} has no {what}"))
        };
        Ok(Image {
            image_id: required(self.image_id, "imageId")?,
            owner_id: required(self.owner_id, "imageOwnerId")?,
            name: self.name,
            description: self.description,
            creation_date: self.creation_date,
        })
    }
}

/// Where the reader stands, by the local names of the open elements.
enum Slot {
    /// Text here is not kept.
    Skip,
    Item(Field),
    NextToken,
    ErrorCode,
    ErrorMessage,
}

/// Parses a DescribeImagesResponse.
pub(crate) fn images(text: &str) -> Result<Page, String> {
    let mut page = Page::default();
    let mut item: Option<Item> = None;
    walk(text, "DescribeImagesResponse", |event| match event {
        Walk::Open(path) => {
            if path == [&b"imagesSet"[..], b"item"] {
                item = Some(Item::default());
            }
            Ok(match path {
                [set, it, field] if *set == b"imagesSet" && *it == b"item" => {
                    match (Field::of(field), item.as_mut()) {
                        (Some(kept), Some(open)) => {
                            if open.opened.contains(&kept) {
                                return Err(format!(
                                    "image {} has more than one <{}>",
                                    page.images.len(),
                                    String::from_utf8_lossy(field)
                                ));
                            }
                            open.opened.push(kept);
                            Slot::Item(kept)
                        }
                        _ => Slot::Skip,
                    }
                }
                [token] if *token == b"nextToken" => Slot::NextToken,
                _ => Slot::Skip,
            })
        }
        Walk::Text(Slot::Item(field), text) => {
            if let Some(item) = item.as_mut() {
                push(item.slot(*field), text)?;
            }
            Ok(Slot::Skip)
        }
        Walk::Text(Slot::NextToken, text) => {
            push(&mut page.next_token, text)?;
            Ok(Slot::Skip)
        }
        Walk::Text(..) => Ok(Slot::Skip),
        Walk::Close(path) => {
            if path == [&b"imagesSet"[..], b"item"]
                && let Some(done) = item.take()
            {
                let index = page.images.len();
                page.images.push(done.finish(index)?);
            }
            Ok(Slot::Skip)
        }
    })?;
    page.next_token = page
        .next_token
        .map(|t| t.trim().to_owned())
        .filter(|t| !t.is_empty());
    Ok(page)
}

/// Parses an EC2 error document.
pub(crate) fn error(text: &str) -> Result<Ec2Error, String> {
    let mut code = None;
    let mut message = None;
    let mut root = String::new();
    walk(text, "", |event| match event {
        Walk::Open(path) => Ok(match path {
            [errors, error, field] if *errors == b"Errors" && *error == b"Error" => {
                error_slot(field)
            }
            [error, field] if *error == b"Error" => error_slot(field),
            _ => Slot::Skip,
        }),
        Walk::Text(Slot::ErrorCode, text) => push(&mut code, text).map(|()| Slot::Skip),
        Walk::Text(Slot::ErrorMessage, text) => push(&mut message, text).map(|()| Slot::Skip),
        Walk::Text(..) => Ok(Slot::Skip),
        Walk::Close(_) => Ok(Slot::Skip),
    })
    .map(|name| root = name)?;
    let code = code
        .map(|c| c.trim().to_owned())
        .filter(|c| !c.is_empty())
        .ok_or_else(|| format!("<{root}> is not an EC2 error document (no Error/Code)"))?;
    Ok(Ec2Error {
        code,
        message: message.unwrap_or_default().trim().to_owned(),
    })
}

fn error_slot(field: &[u8]) -> Slot {
    match field {
        b"Code" => Slot::ErrorCode,
        b"Message" => Slot::ErrorMessage,
        _ => Slot::Skip,
    }
}

fn push(slot: &mut Option<String>, text: &str) -> Result<(), String> {
    let value = slot.get_or_insert_with(String::new);
    if value.len() + text.len() > MAX_FIELD {
        return Err(format!("a field is longer than {MAX_FIELD} bytes"));
    }
    value.push_str(text);
    Ok(())
}

/// One step of [`walk`]: paths are the local names below the root.
enum Walk<'a, 'p> {
    Open(&'p [&'p [u8]]),
    Text(&'a Slot, &'a str),
    Close(&'p [&'p [u8]]),
}

/// Reads `text`, whose root must be named `root` (any root if empty),
/// calling `visit` on each element opened and closed and on each piece of
/// text; `Open` says where the text of that element goes. The root's name.
fn walk(
    text: &str,
    root: &str,
    mut visit: impl FnMut(Walk<'_, '_>) -> Result<Slot, String>,
) -> Result<String, String> {
    let mut reader = Reader::from_str(text);
    // Names of open elements below the root, and where their text goes.
    let mut names: Vec<Vec<u8>> = Vec::new();
    let mut slots: Vec<Slot> = Vec::new();
    let mut root_name: Option<String> = None;
    let mut closed = false;
    loop {
        let event = reader
            .read_event()
            .map_err(|e| format!("at byte {}: {e}", reader.error_position()))?;
        match event {
            Event::Start(start) | Event::Empty(start) if closed => {
                let _ = start;
                return Err("more than one root element".to_owned());
            }
            Event::Start(start) => {
                let name = start.local_name().as_ref().to_vec();
                if root_name.is_none() {
                    root_name = Some(check_root(&name, root)?);
                    slots.push(Slot::Skip);
                    continue;
                }
                if names.len() + 1 >= MAX_DEPTH {
                    return Err(format!("nested deeper than {MAX_DEPTH} elements"));
                }
                names.push(name);
                let path: Vec<&[u8]> = names.iter().map(Vec::as_slice).collect();
                slots.push(visit(Walk::Open(&path))?);
            }
            Event::Empty(start) => {
                let name = start.local_name().as_ref().to_vec();
                if root_name.is_none() {
                    root_name = Some(check_root(&name, root)?);
                    closed = true;
                    continue;
                }
                names.push(name);
                let path: Vec<&[u8]> = names.iter().map(Vec::as_slice).collect();
                visit(Walk::Open(&path))?;
                visit(Walk::Close(&path))?;
                names.pop();
            }
            Event::End(_) => {
                slots.pop();
                if names.is_empty() {
                    if root_name.is_none() {
                        return Err("an end tag without a start".to_owned());
                    }
                    closed = true;
                    continue;
                }
                let path: Vec<&[u8]> = names.iter().map(Vec::as_slice).collect();
                visit(Walk::Close(&path))?;
                names.pop();
            }
            Event::Text(t) => {
                let s = t.xml10_content().map_err(|e| e.to_string())?;
                text_event(&mut visit, &slots, &s, closed)?;
            }
            Event::CData(c) => {
                let s = c.decode().map_err(|e| e.to_string())?;
                text_event(&mut visit, &slots, &s, closed)?;
            }
            Event::GeneralRef(r) => {
                let ch = match r.resolve_char_ref().map_err(|e| e.to_string())? {
                    Some(ch) => ch,
                    None => match &*r.decode().map_err(|e| e.to_string())? {
                        "lt" => '<',
                        "gt" => '>',
                        "amp" => '&',
                        "apos" => '\'',
                        "quot" => '"',
                        other => return Err(format!("unknown entity &{other};")),
                    },
                };
                text_event(&mut visit, &slots, ch.encode_utf8(&mut [0; 4]), closed)?;
            }
            Event::DocType(_) => return Err("a DOCTYPE is not accepted".to_owned()),
            Event::Decl(_) | Event::PI(_) | Event::Comment(_) => {}
            Event::Eof => break,
        }
    }
    match (root_name, closed) {
        (Some(name), true) => Ok(name),
        (Some(name), false) => Err(format!("the document ends inside <{name}>")),
        (None, _) => Err("no root element".to_owned()),
    }
}

fn check_root(name: &[u8], want: &str) -> Result<String, String> {
    let name = String::from_utf8_lossy(name).into_owned();
    if !want.is_empty() && name != want {
        return Err(format!("<{name}> where <{want}> was expected"));
    }
    Ok(name)
}

fn text_event(
    visit: &mut impl FnMut(Walk<'_, '_>) -> Result<Slot, String>,
    slots: &[Slot],
    text: &str,
    closed: bool,
) -> Result<(), String> {
    match slots.last() {
        Some(slot) => visit(Walk::Text(slot, text)).map(drop),
        None if text.trim().is_empty() => Ok(()),
        None if closed => Err("text after the root element".to_owned()),
        None => Err("text outside the root element".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<DescribeImagesResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/">
  <requestId>59dbff89-35bd-4eac-99ed-be587EXAMPLE</requestId>
  <imagesSet>
    <item>
      <imageId>ami-0a1b2c3d4e5f60718</imageId>
      <imageLocation>531415883065/rhcos-9.6</imageLocation>
      <imageState>available</imageState>
      <imageOwnerId>531415883065</imageOwnerId>
      <creationDate>2026-02-10T12:00:00.000Z</creationDate>
      <name>rhcos-9.6.20260210-0-x86_64</name>
      <description>OpenShift &amp; RHCOS 9.6.20260210-0</description>
      <blockDeviceMapping><item><deviceName>/dev/xvda</deviceName><ebs><snapshotId>snap-1</snapshotId></ebs></item></blockDeviceMapping>
      <tagSet><item><key>name</key><value>not the image name</value></item></tagSet>
    </item>
    <item>
      <imageId>ami-2</imageId>
      <imageOwnerId>679593333241</imageOwnerId>
      <name><![CDATA[RHEL-9.4-RHCOS-9.6_HVM_GA-20260210-x86_64-0-59ead7de-2540-4653-a8b0-fa7926d5c845]]></name>
      <description/>
    </item>
  </imagesSet>
  <nextToken>tok&#x2F;2</nextToken>
</DescribeImagesResponse>"#;

    #[test]
    fn reads_the_kept_fields_of_every_image_and_the_token() {
        let page = images(PAGE).unwrap();
        assert_eq!(
            page.images,
            vec![
                Image {
                    image_id: "ami-0a1b2c3d4e5f60718".into(),
                    owner_id: "531415883065".into(),
                    name: Some("rhcos-9.6.20260210-0-x86_64".into()),
                    description: Some("OpenShift & RHCOS 9.6.20260210-0".into()),
                    creation_date: Some("2026-02-10T12:00:00.000Z".into()),
                },
                Image {
                    image_id: "ami-2".into(),
                    owner_id: "679593333241".into(),
                    name: Some(
                        "RHEL-9.4-RHCOS-9.6_HVM_GA-20260210-x86_64-0-59ead7de-2540-4653-a8b0-fa7926d5c845"
                            .into()
                    ),
                    description: None,
                    creation_date: None,
                },
            ]
        );
        assert_eq!(page.next_token.as_deref(), Some("tok/2"));
        let empty =
            images("<DescribeImagesResponse><imagesSet/><nextToken/></DescribeImagesResponse>")
                .unwrap();
        assert_eq!(empty, Page::default());
    }

    #[test]
    fn refuses_broken_and_hostile_pages() {
        let item = |inner: &str| {
            format!(
                "<DescribeImagesResponse><imagesSet><item>{inner}</item></imagesSet></DescribeImagesResponse>"
            )
        };
        let cases = [
            (String::new(), "no root element"),
            ("not xml".to_owned(), "outside the root"),
            (
                "<Other/>".to_owned(),
                "<Other> where <DescribeImagesResponse>",
            ),
            (PAGE[..PAGE.len() / 2].to_owned(), ""),
            (
                PAGE.replace("</DescribeImagesResponse>", ""),
                "ends inside <DescribeImagesResponse>",
            ),
            (
                "<DescribeImagesResponse><a></b></DescribeImagesResponse>".to_owned(),
                "",
            ),
            (
                "<DescribeImagesResponse/><x/>".to_owned(),
                "more than one root",
            ),
            (
                "<DescribeImagesResponse/>trailing".to_owned(),
                "after the root",
            ),
            (
                item("<imageOwnerId>1</imageOwnerId>"),
                "image 0 has no imageId",
            ),
            (
                item("<imageId>ami-1</imageId><imageOwnerId> </imageOwnerId>"),
                "no imageOwnerId",
            ),
            // The attack: a second owner element, which joined to the
            // first would read as another owner ID.
            (
                item(
                    "<imageId>ami-1</imageId><imageOwnerId>53141</imageOwnerId><imageOwnerId>5883065</imageOwnerId>",
                ),
                "image 0 has more than one <imageOwnerId>",
            ),
            (
                item(
                    "<imageId>ami-1</imageId><imageId>ami-2</imageId><imageOwnerId>1</imageOwnerId>",
                ),
                "image 0 has more than one <imageId>",
            ),
            (item("<imageId>&xxe;</imageId>"), "unknown entity"),
            (
                r#"<!DOCTYPE d [<!ENTITY x "y">]><DescribeImagesResponse/>"#.to_owned(),
                "DOCTYPE",
            ),
            (
                item(&format!(
                    "<imageId>ami-1</imageId><imageOwnerId>1</imageOwnerId><name>{}</name>",
                    "n".repeat(MAX_FIELD + 1)
                )),
                "longer than",
            ),
        ];
        for (doc, want) in cases {
            let err = images(&doc).expect_err(&doc);
            assert!(err.contains(want), "{doc:.80}: {err}");
        }
        let deep = format!(
            "<DescribeImagesResponse>{}{}</DescribeImagesResponse>",
            "<a>".repeat(MAX_DEPTH),
            "</a>".repeat(MAX_DEPTH)
        );
        assert!(images(&deep).unwrap_err().contains("deeper"));
        // Very deep nesting fails at the bound, not by running out of stack.
        let hostile = format!("<DescribeImagesResponse>{}", "<a>".repeat(1_000_000));
        assert!(images(&hostile).unwrap_err().contains("deeper"));
    }

    #[test]
    fn reads_both_error_document_forms() {
        let doc = r#"<?xml version="1.0" encoding="UTF-8"?>
<Response><Errors><Error><Code>AuthFailure</Code><Message>AWS was not able to validate the provided access credentials</Message></Error></Errors><RequestID>r</RequestID></Response>"#;
        assert_eq!(
            error(doc).unwrap(),
            Ec2Error {
                code: "AuthFailure".into(),
                message: "AWS was not able to validate the provided access credentials".into()
            }
        );
        let doc = "<ErrorResponse><Error><Type>Sender</Type><Code>Throttling</Code></Error></ErrorResponse>";
        assert_eq!(
            error(doc).unwrap(),
            Ec2Error {
                code: "Throttling".into(),
                message: String::new()
            }
        );
        for doc in [
            "<html><body>502 Bad Gateway</body></html>",
            "<Response/>",
            "<Response><Errors><Error><Code> </Code></Error></Errors></Response>",
        ] {
            let err = error(doc).unwrap_err();
            assert!(err.contains("not an EC2 error document"), "{doc}: {err}");
        }
        assert!(
            error("<Response><Errors>")
                .unwrap_err()
                .contains("ends inside")
        );
    }
}
