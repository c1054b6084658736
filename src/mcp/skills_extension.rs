//! The MCP Skills extension (SEP-2640, `io.modelcontextprotocol/skills`) over a catalogue's
//! verified snapshots.
//!
//! Every file of every served skill is a resource `skill://<name>/<path>` (the path
//! percent-encoded where a URI needs it; `SKILL.md` always `skill://<name>/SKILL.md`), read from
//! the snapshot — the same bytes that were verified against the pin (a file a raised profile
//! keeps on disk is hash-checked on each read, see [`crate::runtime::snapshot`]). Text files are
//! served as `text`, binary files (admitted only by a limits profile) as a base64 `blob` with a
//! MIME type from the extension.
//! `skills/list` and `skills/get` answer with one entry per skill: the `SKILL.md` URI, the
//! frontmatter rendered as JSON under the YAML 1.2 core schema (every field the author wrote, not
//! a subset), and `resources` listing every file exactly once, in digest order, with
//! `digest: "sha256:<hex>"` and `size` of the exact bytes `resources/read` returns — so a host can
//! check each read. `_meta` carries the pin (`skillfold/pin`: name, version, bundle digest) and
//! where the bundle came from (`skillfold/origin`), as provenance the extension lets an
//! implementation attach under its own prefix. Directories (`skill://<name>` and each
//! subdirectory) answer `resources/directory/read`.
//!
//! The index is built once per catalogue (at start and on each reload) and is immutable; a
//! skill whose entry would break a rule the extension puts on entries (rmcp checks names with
//! the Agent Skills rules, which are stricter than the bundle format: no `--`, no trailing `-`)
//! keeps its tools and resources but is left out of the listing, and the build says so.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use rmcp::model::{
    DIRECTORY_MIME_TYPE, JsonObject, MetaObject, Resource, ResourceContents, SKILL_MD, Skill,
    SkillFrontmatter, SkillResource, SkillResources,
};
use serde_json::Value;

use crate::runtime::catalogue::Catalogue;
use base64::Engine as _;

use crate::runtime::snapshot::{FileReadError, Snapshot};

/// The URI scheme of skill files.
pub const SCHEME: &str = "skill://";

/// The skills extension's view of one catalogue: resources, entries, directories.
#[derive(Debug, Default)]
pub struct SkillIndex {
    /// Every file by URI.
    files: BTreeMap<String, File>,
    /// One entry per listed skill, by name.
    skills: Vec<Skill>,
    /// Directory URI → its direct children (files and subdirectories).
    directories: BTreeMap<String, Vec<Resource>>,
    /// Skills left out of the listing, with why.
    unlisted: Vec<String>,
}

#[derive(Debug)]
struct File {
    snapshot: Arc<Snapshot>,
    path: String,
    resource: Resource,
}

impl SkillIndex {
    /// Indexes every file of every skill of `catalogue`.
    pub fn new(catalogue: &Catalogue) -> SkillIndex {
        let mut index = SkillIndex::default();
        let mut children: BTreeMap<String, BTreeSet<(bool, String)>> = BTreeMap::new();
        for snapshot in catalogue.skills() {
            let name = snapshot.pin().name.as_str();
            let root = format!("{SCHEME}{name}");
            children.entry(root.clone()).or_default();
            let mut manifest = Vec::with_capacity(snapshot.files().len());
            for file in snapshot.files() {
                let path = file.path();
                let uri = file_uri(name, path);
                // The SHA-256 of the whole file (for SKILL.md too: it is served whole here).
                let digest = format!("sha256:{}", file.sha256());
                manifest.push(SkillResource::new(&uri, digest, file.size()));
                let mime = mime_type(path, file.is_binary());
                let mut resource = Resource::new(&uri, format!("{name}/{path}"))
                    .with_mime_type(mime)
                    .with_size(file.size());
                if path == SKILL_MD {
                    resource = Resource::new(&uri, name)
                        .with_description(snapshot.description())
                        .with_mime_type(mime)
                        .with_size(file.size());
                }
                // Register the file under its directory, and each directory under its parent.
                let mut dir = root.clone();
                let segments: Vec<&str> = path.split('/').collect();
                for (i, segment) in segments.iter().enumerate() {
                    let is_file = i + 1 == segments.len();
                    let child = format!("{dir}/{}", encode(segment));
                    children
                        .entry(dir.clone())
                        .or_default()
                        .insert((is_file, child.clone()));
                    if !is_file {
                        children.entry(child.clone()).or_default();
                    }
                    dir = child;
                }
                index.files.insert(
                    uri,
                    File {
                        snapshot: Arc::clone(snapshot),
                        path: path.to_owned(),
                        resource,
                    },
                );
            }
            let skill = Skill::new(
                file_uri(name, SKILL_MD),
                frontmatter(snapshot),
                SkillResources::Files(manifest),
            )
            .with_meta(provenance(snapshot));
            match skill.validate() {
                Ok(()) => index.skills.push(skill),
                Err(e) => index.unlisted.push(format!(
                    "`{name}` is served but left out of `skills/list`: {e}"
                )),
            }
        }
        for (dir, entries) in children {
            let listed = entries
                .into_iter()
                .map(|(is_file, uri)| {
                    if is_file {
                        index.files[&uri].resource.clone()
                    } else {
                        let name = uri.rsplit('/').next().unwrap_or_default().to_owned();
                        Resource::new(uri, name).with_mime_type(DIRECTORY_MIME_TYPE)
                    }
                })
                .collect();
            index.directories.insert(dir, listed);
        }
        index
    }

    /// Every file as a resource, skill by skill, in digest order.
    pub fn resources(&self) -> Vec<Resource> {
        self.files.values().map(|f| f.resource.clone()).collect()
    }

    /// The entries of `skills/list`, by name.
    pub fn skills(&self) -> &[Skill] {
        &self.skills
    }

    /// The entry of the skill whose `SKILL.md` is at `uri`.
    pub fn skill(&self, uri: &str) -> Option<&Skill> {
        self.skills.iter().find(|s| s.uri == uri)
    }

    /// The exact bytes of the file at `uri`, as `resources/read` contents: text, or a base64
    /// blob for a binary file. `None` when no file has that URI; an error when a file kept on
    /// disk no longer holds its verified bytes.
    pub fn read(&self, uri: &str) -> Option<Result<ResourceContents, FileReadError>> {
        let file = self.files.get(uri)?;
        let stored = file.snapshot.file(&file.path)?;
        let mime = file.resource.mime_type.clone().unwrap_or_default();
        Some(file.snapshot.read(stored).map(|bytes| {
            let contents = match std::str::from_utf8(&bytes) {
                Ok(text) if !stored.is_binary() => ResourceContents::text(text, uri),
                _ => ResourceContents::blob(
                    base64::engine::general_purpose::STANDARD.encode(&bytes),
                    uri,
                ),
            };
            contents.with_mime_type(mime)
        }))
    }

    /// The direct children of the directory at `uri` (`skill://<name>` or a subdirectory).
    pub fn directory(&self, uri: &str) -> Option<&[Resource]> {
        self.directories.get(uri).map(Vec::as_slice)
    }

    /// Skills served but left out of the listing, with why.
    pub fn unlisted(&self) -> &[String] {
        &self.unlisted
    }
}

/// The URI of a file of a skill.
pub fn file_uri(name: &str, path: &str) -> String {
    let encoded: Vec<String> = path.split('/').map(encode).collect();
    format!("{SCHEME}{name}/{}", encoded.join("/"))
}

/// Percent-encodes one path segment: everything but RFC 3986 unreserved characters and the
/// sub-delimiters, `:` and `@` that a segment may hold.
fn encode(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    for byte in segment.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// The frontmatter as the author wrote it, as JSON.
fn frontmatter(snapshot: &Snapshot) -> SkillFrontmatter {
    let name = snapshot.pin().name.as_str();
    let mut fields: JsonObject = Some(snapshot.skill_md())
        .and_then(|text| {
            let layout = crate::format::frontmatter::layout(text).ok()?;
            crate::format::yaml::parse(&text[layout.frontmatter])
                .ok()
                .flatten()
        })
        .map(|node| node.to_json())
        .and_then(|v| match v {
            Value::Object(map) => Some(map),
            _ => None,
        })
        .unwrap_or_default();
    // Verified: `name` equals the pin's name and `description` is a string.
    let description = match fields.remove("description") {
        Some(Value::String(d)) => d,
        _ => snapshot.description().to_owned(),
    };
    fields.remove("name");
    let mut frontmatter = SkillFrontmatter::new(name, description);
    frontmatter.extra = fields;
    frontmatter
}

fn provenance(snapshot: &Snapshot) -> MetaObject {
    let pin = snapshot.pin();
    let mut meta = JsonObject::new();
    meta.insert(
        "skillfold/pin".into(),
        serde_json::json!({
            "name": pin.name.as_str(),
            "version": pin.version.to_string(),
            "hash": pin.hash.to_string(),
        }),
    );
    meta.insert(
        "skillfold/origin".into(),
        serde_json::to_value(snapshot.origin()).unwrap_or_default(),
    );
    MetaObject(meta)
}

/// The MIME type of a bundle file, from its extension; `binary` picks the fallback
/// (`application/octet-stream` rather than `text/plain`).
fn mime_type(path: &str, binary: bool) -> &'static str {
    let extension = path
        .rsplit('/')
        .next()
        .and_then(|file| file.rsplit_once('.'))
        .map(|(_, ext)| ext.to_ascii_lowercase());
    match extension.as_deref() {
        Some("pdf") => "application/pdf",
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("webp") => "image/webp",
        Some("ttf") => "font/ttf",
        Some("otf") => "font/otf",
        Some("woff") => "font/woff",
        Some("woff2") => "font/woff2",
        Some("zip") => "application/zip",
        Some("gz" | "tgz") => "application/gzip",
        Some("tar") => "application/x-tar",
        Some("docx") => "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        Some("xlsx") => "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        Some("pptx") => "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        Some("xsd") => "application/xml",
        Some("md" | "markdown") => "text/markdown",
        Some("py") => "text/x-python",
        Some("sh" | "bash") => "text/x-shellscript",
        Some("js" | "mjs") => "text/javascript",
        Some("json") => "application/json",
        Some("yaml" | "yml") => "application/yaml",
        Some("toml") => "application/toml",
        Some("csv") => "text/csv",
        Some("html" | "htm") => "text/html",
        Some("xml") => "application/xml",
        Some("svg") => "image/svg+xml",
        _ if binary => "application/octet-stream",
        _ => "text/plain",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_encode_what_a_path_segment_cannot_hold() {
        assert_eq!(
            file_uri("demo", "references/a b#1?.md"),
            "skill://demo/references/a%20b%231%3F.md"
        );
        assert_eq!(file_uri("demo", "SKILL.md"), "skill://demo/SKILL.md");
        assert_eq!(
            file_uri("demo", "notes/été.md"),
            "skill://demo/notes/%C3%A9t%C3%A9.md"
        );
    }

    #[test]
    fn mime_types_follow_the_extension() {
        assert_eq!(mime_type("SKILL.md", false), "text/markdown");
        assert_eq!(mime_type("scripts/x.PY", false), "text/x-python");
        assert_eq!(mime_type("LICENSE", false), "text/plain");
        assert_eq!(mime_type(".d/x", false), "text/plain");
        assert_eq!(mime_type("fonts/a.TTF", true), "font/ttf");
        assert_eq!(mime_type("theme.pdf", true), "application/pdf");
        assert_eq!(mime_type("blob", true), "application/octet-stream");
    }
}
