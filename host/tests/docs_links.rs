//! Every relative link in `README.md`, `CONTRIBUTING.md` and `docs/**/*.md`
//! resolves: the file or directory it names exists, and an anchor
//! (`page.md#section`, `#section`) names a heading of that page, by the
//! slugs a forge (GitHub) gives headings. Links to other sites are not
//! followed: the tests reach no network. The Markdown is read by
//! pulldown-cmark, so links in code blocks and inline code are not links.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

/// The pages checked, relative to the repository root.
fn pages(root: &Path) -> Vec<PathBuf> {
    let mut pages = vec![PathBuf::from("README.md"), PathBuf::from("CONTRIBUTING.md")];
    let mut dirs = vec![PathBuf::from("docs")];
    while let Some(dir) = dirs.pop() {
        let entries = std::fs::read_dir(root.join(&dir))
            .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()));
        for entry in entries {
            let entry = entry.unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()));
            let path = dir.join(entry.file_name());
            if root.join(&path).is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                pages.push(path);
            }
        }
    }
    pages.sort();
    pages
}

/// One page's links (destination as written) and its heading anchors.
#[derive(Default)]
struct Page {
    links: Vec<String>,
    anchors: BTreeSet<String>,
}

fn parse(text: &str) -> Page {
    let mut page = Page::default();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut heading: Option<String> = None;
    for event in Parser::new_ext(text, Options::ENABLE_TABLES) {
        match event {
            Event::Start(Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. }) => {
                page.links.push(dest_url.to_string());
            }
            Event::Start(Tag::Heading { .. }) => heading = Some(String::new()),
            Event::Text(text) | Event::Code(text) => {
                if let Some(heading) = heading.as_mut() {
                    heading.push_str(&text);
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                let slug = slug(&heading.take().unwrap_or_default());
                let count = seen.entry(slug.clone()).or_default();
                page.anchors.insert(if *count == 0 {
                    slug.clone()
                } else {
                    format!("{slug}-{count}")
                });
                *count += 1;
            }
            _ => {}
        }
    }
    page
}

/// GitHub's heading anchor: the text lower-cased, every character that is
/// not a letter, a digit, `_`, `-` or a space dropped, and each space made
/// a `-` (repeated slugs get `-1`, `-2`, … in [`parse`]).
fn slug(heading: &str) -> String {
    heading
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            '-' | '_' => Some(c),
            c if c.is_alphanumeric() => Some(c),
            _ => None,
        })
        .collect()
}

/// `base/../x` without touching the file system, so a link that climbs
/// out of the repository is caught rather than followed.
fn normalize(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    Some(out)
}

/// What is wrong with one link of `page`, if anything.
fn check(
    root: &Path,
    page: &Path,
    link: &str,
    parsed: &mut BTreeMap<PathBuf, Page>,
) -> Option<String> {
    if link.contains("://") || link.starts_with("mailto:") {
        return None;
    }
    let (path, anchor) = link
        .split_once('#')
        .map_or((link, None), |(p, a)| (p, Some(a)));
    let target = if path.is_empty() {
        page.to_path_buf()
    } else {
        let dir = page.parent().unwrap_or(Path::new(""));
        match normalize(&dir.join(path)) {
            Some(target) => target,
            None => return Some(format!("{link}: leaves the repository")),
        }
    };
    if !root.join(&target).exists() {
        return Some(format!("{link}: {} does not exist", target.display()));
    }
    let anchor = anchor?;
    if target.extension().is_none_or(|e| e != "md") {
        return None;
    }
    if !parsed.contains_key(&target) {
        let text = std::fs::read_to_string(root.join(&target))
            .unwrap_or_else(|e| panic!("reading {}: {e}", target.display()));
        parsed.insert(target.clone(), parse(&text));
    }
    let known = &parsed[&target].anchors;
    (!known.contains(anchor)).then(|| {
        format!(
            "{link}: {} has no heading #{anchor} (it has: {})",
            target.display(),
            known.iter().cloned().collect::<Vec<_>>().join(", ")
        )
    })
}

#[test]
fn every_relative_link_and_anchor_in_the_docs_resolves() {
    let root = common::repo_root();
    let mut parsed = BTreeMap::new();
    let mut broken = Vec::new();
    let pages = pages(&root);
    for page in &pages {
        let text = std::fs::read_to_string(root.join(page))
            .unwrap_or_else(|e| panic!("reading {}: {e}", page.display()));
        let links = parse(&text).links;
        for link in links {
            if let Some(problem) = check(&root, page, &link, &mut parsed) {
                broken.push(format!("{}: {problem}", page.display()));
            }
        }
    }
    assert!(pages.len() > 20, "only {} pages found", pages.len());
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn heading_anchors_follow_the_forges_rules() {
    let page = parse(
        "# Rolling a guest out: shadow, a canary, everyone\n\
         ## The WIT package in a registry: `guests wit --push`\n\
         ## Auditing 5,000 nodes\n\
         ## Notes\n## Notes\n\
         ```sh\n# not a heading\n```\n",
    );
    let expected = [
        "rolling-a-guest-out-shadow-a-canary-everyone",
        "the-wit-package-in-a-registry-guests-wit---push",
        "auditing-5000-nodes",
        "notes",
        "notes-1",
    ];
    assert_eq!(
        page.anchors,
        expected
            .iter()
            .map(|s| s.to_string())
            .collect::<BTreeSet<_>>()
    );
}

#[test]
fn broken_links_and_anchors_are_found() {
    let root = common::repo_root();
    let mut parsed = BTreeMap::new();
    let page = Path::new("docs/README.md");
    let mut problem = |link: &str| check(&root, page, link, &mut parsed);
    assert_eq!(problem("../README.md#the-two-commands"), None);
    assert_eq!(problem("https://example.com/missing"), None);
    assert!(problem("../README.md#no-such-heading").is_some());
    assert!(problem("admin/no-such-page.md").is_some());
    assert!(problem("../../outside.md").is_some());
    let links = parse("[a](x.md) `[b](y.md)`\n\n```\n[c](z.md)\n```\n").links;
    assert_eq!(links, ["x.md"]);
}
