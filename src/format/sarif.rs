//! Findings as SARIF 2.1.0, the JSON log CI systems read (`--format sarif` of `check`, `pin`,
//! `update`, `validate` and `verify --installed`): a [`Log`] of [`Entry`]s, each a rule id (the
//! error code), a level, a message and where, rendered as one `run` whose `tool.driver.rules`
//! holds one descriptor per rule id used, its `shortDescription` the code's meaning in
//! `docs/error-codes.md`. [`Entry::of_problem`] is the one conversion of a bundle [`Problem`]
//! (content findings, bundle rules, warnings) to a result; a command adds what it refuses for
//! other reasons (a pin that does not match, a drifted install, a descriptor problem) with
//! [`Entry::new`]. A location is a relative URI under a named base ([`Base`]: the bundle folder,
//! the repository, the descriptor's folder), declared in `originalUriBaseIds`; each path segment
//! is percent-encoded, so no control or reordering character reaches a viewer raw in a URI, and
//! the messages are the escaped messages of the text output. Columns count Unicode code points
//! (`columnKind`), as the content rules do. The log holds no time or host: the same input makes
//! the same bytes.

use std::fmt::Write as _;

use serde::Serialize;

use crate::format::problem::{Problem, ProblemSeverity};

/// The SARIF version written.
pub const VERSION: &str = "2.1.0";

/// The schema the log names (the OASIS standard's, errata 01).
pub const SCHEMA: &str =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

/// The table of codes and their meanings the rules' descriptions come from.
const ERROR_CODES_PAGE: &str = include_str!("../../docs/error-codes.md");

/// How serious a result is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// It refuses (the command fails with the code).
    Error,
    /// Reported; nothing is refused.
    Warning,
}

/// A base the URIs of locations are relative to (a `uriBaseId`), with what it stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Base {
    /// The id, e.g. `BUNDLEROOT`.
    pub id: String,
    /// Its absolute URI (`file:///…/`, ending with `/`), when there is one to give.
    pub uri: Option<String>,
    /// What it is, in words (escaped).
    pub description: String,
}

impl Base {
    /// A base that is the local folder `dir` (its absolute `file:` URI when `dir` resolves).
    pub fn folder(id: &str, dir: &std::path::Path, description: String) -> Base {
        let uri = fs_err::canonicalize(dir).ok().map(|abs| {
            use std::os::unix::ffi::OsStrExt as _;
            let mut uri = "file://".to_owned();
            uri.push_str(&encode_path(abs.as_os_str().as_bytes()));
            if !uri.ends_with('/') {
                uri.push('/');
            }
            uri
        });
        Base {
            id: id.to_owned(),
            uri,
            description,
        }
    }
}

/// Where a result is: a path relative to a base, and a line and column when known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    /// The id of the [`Base`] the path is relative to.
    pub base: String,
    /// The relative path (`/`-separated, not yet encoded); a folder ends with `/`.
    pub path: String,
    /// The line, from 1.
    pub line: Option<usize>,
    /// The column in code points, from 1 (only with a line).
    pub column: Option<usize>,
}

impl Place {
    /// The file or folder `path` under `base`, without a region.
    pub fn file(base: &str, path: impl Into<String>) -> Place {
        Place {
            base: base.to_owned(),
            path: path.into(),
            line: None,
            column: None,
        }
    }
}

/// One result: the rule id (an error code), the level, the message and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The error code, e.g. `hidden_character`.
    pub rule: String,
    /// Error, warning or note.
    pub level: Level,
    /// The message as the text output shows it (already escaped).
    pub message: String,
    /// Where, when it is about a file or folder.
    pub place: Option<Place>,
}

impl Entry {
    /// A result with `code`, `level` and `message` (already escaped), nowhere yet.
    pub fn new(code: impl ToString, level: Level, message: impl Into<String>) -> Entry {
        Entry {
            rule: code.to_string(),
            level,
            message: message.into(),
            place: None,
        }
    }

    /// The result, at `place`.
    pub fn at(mut self, place: Place) -> Entry {
        self.place = Some(place);
        self
    }

    /// The result of a bundle problem: its code, `error` for a refusal and `warning` for the
    /// rest, its message, and its file (or the bundle's folder for a bundle-wide rule) as a
    /// path under `base`, the bundle being the folder `folder` there (empty: the base itself);
    /// a content finding's line and column as the region.
    pub fn of_problem(problem: &Problem, base: &str, folder: &str) -> Entry {
        let level = match problem.severity {
            ProblemSeverity::Error => Level::Error,
            ProblemSeverity::Warning => Level::Warning,
        };
        let folder = folder.trim_end_matches('/');
        let path = match (&problem.path, folder.is_empty()) {
            (Some(path), true) => path.clone(),
            (Some(path), false) => format!("{folder}/{path}"),
            (None, true) => "./".to_owned(),
            (None, false) => format!("{folder}/"),
        };
        let (line, column) = match problem.finding.as_deref() {
            Some(f) => (f.line, f.line.map(|_| f.column)),
            None => (None, None),
        };
        Entry::new(problem.code, level, problem.message.clone()).at(Place {
            base: base.to_owned(),
            path,
            line,
            column,
        })
    }
}

/// A SARIF log being built: the bases its URIs use and its results, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Log {
    bases: Vec<Base>,
    entries: Vec<Entry>,
}

impl Log {
    /// An empty log.
    pub fn new() -> Log {
        Log::default()
    }

    /// Declares a base (once per id; a later one with the same id is ignored).
    pub fn base(&mut self, base: Base) {
        if !self.bases.iter().any(|b| b.id == base.id) {
            self.bases.push(base);
        }
    }

    /// Adds a result.
    pub fn push(&mut self, entry: Entry) {
        self.entries.push(entry);
    }

    /// Adds the result of each problem of a bundle in `folder` under `base`.
    pub fn problems<'a>(
        &mut self,
        problems: impl IntoIterator<Item = &'a Problem>,
        base: &str,
        folder: &str,
    ) {
        for p in problems {
            self.push(Entry::of_problem(p, base, folder));
        }
    }

    /// The SARIF document, made by the tool version `version`: one run, its rules in the order
    /// of their first result, only the bases a result uses.
    pub fn document(&self, version: &'static str) -> impl Serialize + '_ {
        let mut rules: Vec<&str> = Vec::new();
        let results = self
            .entries
            .iter()
            .map(|e| {
                let index = match rules.iter().position(|r| *r == e.rule) {
                    Some(i) => i,
                    None => {
                        rules.push(&e.rule);
                        rules.len() - 1
                    }
                };
                SarifResult {
                    rule_id: &e.rule,
                    rule_index: index,
                    level: e.level,
                    message: Message { text: &e.message },
                    locations: e.place.as_ref().map(|p| vec![location(p)]),
                }
            })
            .collect::<Vec<_>>();
        let used = |id: &str| {
            self.entries
                .iter()
                .any(|e| e.place.as_ref().is_some_and(|p| p.base == id))
        };
        let bases: serde_json::Map<String, serde_json::Value> = self
            .bases
            .iter()
            .filter(|b| used(&b.id))
            .map(|b| {
                let mut value = serde_json::Map::new();
                if let Some(uri) = &b.uri {
                    value.insert("uri".into(), uri.clone().into());
                }
                value.insert(
                    "description".into(),
                    serde_json::json!({ "text": b.description }),
                );
                (b.id.clone(), value.into())
            })
            .collect();
        Sarif {
            schema: SCHEMA,
            version: VERSION,
            runs: [Run {
                tool: Tool {
                    driver: Driver {
                        name: "skillfold",
                        version,
                        rules: rules.into_iter().map(rule).collect(),
                    },
                },
                original_uri_base_ids: bases,
                column_kind: "unicodeCodePoints",
                results,
            }],
        }
    }
}

/// A rule's descriptor: its id and, when the codes' page has it, its meaning.
fn rule(id: &str) -> Rule<'_> {
    Rule {
        id,
        short_description: meaning(id).map(|text| Text { text }),
    }
}

/// The meaning column of the first row of `docs/error-codes.md` for `code`
/// (`` | `code` | exit | meaning | fix | ``), each Markdown link `[text](page)` written as its
/// text (the pages are not beside the log).
fn meaning(code: &str) -> Option<String> {
    let head = format!("| `{code}` |");
    let row = ERROR_CODES_PAGE.lines().find(|l| l.starts_with(&head))?;
    let mut rest = row.split(" | ").nth(2)?.trim();
    let mut meaning = String::with_capacity(rest.len());
    while let Some(open) = rest.find('[') {
        let link = rest[open..].find("](").and_then(|mid| {
            let close = rest[open + mid..].find(')')?;
            Some((open + mid, open + mid + close))
        });
        match link {
            Some((mid, close)) => {
                meaning.push_str(&rest[..open]);
                meaning.push_str(&rest[open + 1..mid]);
                rest = &rest[close + 1..];
            }
            None => break,
        }
    }
    meaning.push_str(rest);
    (!meaning.is_empty()).then_some(meaning)
}

fn location(p: &Place) -> Location<'_> {
    Location {
        physical_location: Physical {
            artifact_location: Artifact {
                uri: encode_path(p.path.as_bytes()),
                uri_base_id: &p.base,
            },
            region: p.line.map(|line| Region {
                start_line: line,
                start_column: p.column,
            }),
        },
    }
}

/// `path` as a URI path: each byte outside the unreserved characters and `/` percent-encoded.
fn encode_path(path: &[u8]) -> String {
    let mut out = String::with_capacity(path.len());
    for &b in path {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

#[derive(Serialize)]
struct Sarif<'a> {
    #[serde(rename = "$schema")]
    schema: &'static str,
    version: &'static str,
    runs: [Run<'a>; 1],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Run<'a> {
    tool: Tool<'a>,
    #[serde(skip_serializing_if = "serde_json::Map::is_empty")]
    original_uri_base_ids: serde_json::Map<String, serde_json::Value>,
    column_kind: &'static str,
    results: Vec<SarifResult<'a>>,
}

#[derive(Serialize)]
struct Tool<'a> {
    driver: Driver<'a>,
}

#[derive(Serialize)]
struct Driver<'a> {
    name: &'static str,
    version: &'static str,
    rules: Vec<Rule<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Rule<'a> {
    id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    short_description: Option<Text>,
}

#[derive(Serialize)]
struct Text {
    text: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifResult<'a> {
    rule_id: &'a str,
    rule_index: usize,
    level: Level,
    message: Message<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    locations: Option<Vec<Location<'a>>>,
}

#[derive(Serialize)]
struct Message<'a> {
    text: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Location<'a> {
    physical_location: Physical<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Physical<'a> {
    artifact_location: Artifact<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    region: Option<Region>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Artifact<'a> {
    uri: String,
    uri_base_id: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Region {
    start_line: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    start_column: Option<usize>,
}

#[cfg(test)]
#[path = "sarif_tests.rs"]
mod tests;
