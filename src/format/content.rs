//! The content rules (DESIGN §10): characters and comments a model reads and a reader does not
//! see, judged wherever the bundle rules run, because [`crate::format::bundle::Bundle::check`]
//! runs them. They judge no intent: a finding says what is there and where.
//!
//! Every text file is scanned — `SKILL.md` always, a supporting file unless the profile allows
//! binary files and it is not text — and so is every file and folder name:
//!
//! | class (`hidden_character`) | default verdict |
//! | --- | --- |
//! | `tag`: U+E0000–U+E007F | refused |
//! | `bidi`: U+202A–U+202E, U+2066–U+2069 | refused in a name or `SKILL.md`'s frontmatter; a warning elsewhere |
//! | `control`: C0 but TAB, LF, CR (NUL is `nul_byte`), DEL, C1 | refused |
//! | `invisible`: zero-width, joiners, variation selectors, other default-ignorables | refused in a name or the frontmatter; a warning elsewhere |
//!
//! and `hidden_comment`, an HTML comment in `SKILL.md`'s body: a warning. [`classes`] holds the
//! exact code point sets and the contexts that make one ordinary text (an emoji ZWJ sequence, a
//! joining script); [`scan`] the single pass over the bytes; [`comments`] the Markdown rules for
//! comments; [`policy`] what a source's descriptor key `content:` makes of them
//! ([`ContentPolicy`], carried by its
//! [`Limits`](crate::format::limits::Limits)) tightens or relaxes the verdicts.
//!
//! A finding names the file, the line and column (characters, from 1; for a name, the character
//! in the path), the code point and its Unicode name, and the class ([`Finding`]). At most
//! [`LISTED_PER_FILE`] findings are listed per file and [`LISTED_PER_BUNDLE`] per bundle; one
//! more problem counts the rest, with the worst of their verdicts.

pub mod classes;
mod comments;
pub mod policy;
mod scan;

pub use self::policy::{CommentRule, ContentPolicy, Finding, HiddenRule};

use std::collections::BTreeSet;

use self::classes::HiddenClass;
use self::scan::{Cursor, Run};
use crate::format::file_set::FileSet;
use crate::format::limits::SKILL_MD;
use crate::format::problem::{Problem, ProblemCode, Problems};
use crate::support::escape;

/// Findings listed for one file; the rest are counted.
pub const LISTED_PER_FILE: usize = 8;
/// Findings listed for one bundle; the rest are counted, one problem per file.
pub const LISTED_PER_BUNDLE: usize = 64;
/// Characters of a comment or of spelled tags a message shows.
const EXCERPT_CHARS: usize = 60;

/// Where a finding is: what a verdict depends on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Zone {
    /// A file or folder name.
    Name,
    /// `SKILL.md` up to the end of its closing fence line.
    Frontmatter,
    /// Anywhere else in a text file.
    Text,
    /// The parsed `description`, for characters written as YAML escapes (judged as in the
    /// frontmatter).
    Description,
}

/// What to do with a finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Verdict {
    Allow,
    Warn,
    Refuse,
}

fn hidden_verdict(policy: ContentPolicy, class: HiddenClass, zone: Zone) -> Verdict {
    match policy.hidden {
        HiddenRule::Refuse => Verdict::Refuse,
        HiddenRule::Warn => Verdict::Warn,
        HiddenRule::Default => match (class, zone) {
            (HiddenClass::Tag | HiddenClass::Control, _) => Verdict::Refuse,
            (
                HiddenClass::Bidi | HiddenClass::Invisible,
                Zone::Name | Zone::Frontmatter | Zone::Description,
            ) => Verdict::Refuse,
            (HiddenClass::Bidi | HiddenClass::Invisible, Zone::Text) => Verdict::Warn,
        },
    }
}

fn comment_verdict(policy: ContentPolicy) -> Verdict {
    match policy.comments {
        CommentRule::Refuse => Verdict::Refuse,
        CommentRule::Warn => Verdict::Warn,
        CommentRule::Allow => Verdict::Allow,
    }
}

/// Applies the content rules to every file and name of `files` under the policy its profile
/// carries, adding a problem per finding to `problems`.
pub fn check(files: &FileSet, problems: &mut Problems) {
    let limits = files.limits();
    let policy = limits.content();
    let mut report = Report {
        policy,
        listed: 0,
        problems,
    };
    let mut names_seen: BTreeSet<&str> = BTreeSet::new();
    for (path, bytes) in files.iter() {
        let path = path.as_str();
        check_name(path, &mut names_seen, &mut report);
        let skill_md = path == SKILL_MD;
        if !skill_md && limits.binary() && crate::format::file_set::is_binary(bytes) {
            continue; // a binary asset the profile approves: not text
        }
        let Ok(text) = std::str::from_utf8(bytes) else {
            continue; // not text: refused as `not_utf8`
        };
        let mut file = FileReport::new(path);
        let split = if skill_md {
            crate::format::frontmatter::layout(text).map_or(0, |l| l.body.start)
        } else {
            0
        };
        let mut cursor = Cursor::new(text);
        scan::scan(text, split, |run| {
            let zone = if run.start < split {
                Zone::Frontmatter
            } else {
                Zone::Text
            };
            let verdict = hidden_verdict(policy, run.class, zone);
            file.add(&mut report, verdict, || {
                let (line, column) = cursor.position(run.start);
                hidden_problem(text, &run, Some(line), column, zone)
            });
        });
        if skill_md {
            let verdict = comment_verdict(policy);
            if verdict != Verdict::Allow {
                let body = &text[split..];
                let mut cursor = Cursor::new(text);
                for comment in comments::find(body) {
                    file.add(&mut report, verdict, || {
                        comment_problem(text, split, &comment, &mut cursor)
                    });
                }
            }
        }
        file.finish(&mut report);
    }
}

/// Applies the rules to the parsed `description` of `SKILL.md` whose frontmatter text is
/// `frontmatter`: a YAML escape (`"\u200b"`, `"\U000E0041"`) writes a hidden character the bytes
/// do not show. A character the bytes hold as written was reported by the scan of the file; a
/// control is `description_control_char`'s.
pub fn check_description(
    description: &str,
    frontmatter: &str,
    policy: ContentPolicy,
    problems: &mut Problems,
) {
    if description.is_ascii() {
        return;
    }
    let mut report = Report {
        policy,
        listed: 0,
        problems,
    };
    let mut file = FileReport::new(SKILL_MD);
    scan::scan(description, 0, |run| {
        if run.class == HiddenClass::Control || frontmatter.contains(run.first) {
            return;
        }
        let verdict = hidden_verdict(policy, run.class, Zone::Frontmatter);
        file.add(&mut report, verdict, || {
            let column = description[..run.start].chars().count() + 1;
            hidden_problem(description, &run, None, column, Zone::Description)
        });
    });
    file.finish(&mut report);
}

/// Scans each folder and file name of `path` once (a folder shared by several files is scanned
/// with the first). Controls in names are the path rule's (`control_char_in_path`).
fn check_name<'a>(path: &'a str, seen: &mut BTreeSet<&'a str>, report: &mut Report<'_>) {
    let mut start = 0;
    for (end, _) in path.match_indices('/').chain([(path.len(), "")]) {
        let prefix = &path[..end];
        let segment = &path[start..end];
        start = end + 1;
        if !seen.insert(prefix) || segment.is_ascii() {
            continue;
        }
        let mut file = FileReport::new(prefix);
        let offset = prefix.len() - segment.len();
        scan::scan(segment, 0, |run| {
            if run.class == HiddenClass::Control {
                return;
            }
            let verdict = hidden_verdict(report.policy, run.class, Zone::Name);
            file.add(report, verdict, || {
                let column = path[..offset + run.start].chars().count() + 1;
                hidden_problem(segment, &run, None, column, Zone::Name)
            });
        });
        file.finish(report);
    }
}

/// The policy and the listing budget of one bundle.
struct Report<'p> {
    policy: ContentPolicy,
    listed: usize,
    problems: &'p mut Problems,
}

/// The findings of one file: listed while the budgets last, then counted.
struct FileReport<'a> {
    path: &'a str,
    listed: usize,
    unlisted: usize,
    worst_unlisted: Verdict,
}

impl<'a> FileReport<'a> {
    fn new(path: &'a str) -> Self {
        FileReport {
            path,
            listed: 0,
            unlisted: 0,
            worst_unlisted: Verdict::Allow,
        }
    }

    /// Records one finding; `make` builds its code, message and detail when it is listed.
    fn add(
        &mut self,
        report: &mut Report<'_>,
        verdict: Verdict,
        make: impl FnOnce() -> (ProblemCode, String, Finding),
    ) {
        if verdict == Verdict::Allow {
            return;
        }
        if self.listed < LISTED_PER_FILE && report.listed < LISTED_PER_BUNDLE {
            let (code, message, finding) = make();
            let message = if verdict == Verdict::Refuse {
                format!("{message}; refused ({})", relax_hint(code))
            } else {
                message
            };
            let problem = match verdict {
                Verdict::Refuse => Problem::error(code, Some(self.path), message),
                _ => Problem::warning(code, Some(self.path), message),
            };
            report.problems.push(problem.with_finding(finding));
            self.listed += 1;
            report.listed += 1;
        } else {
            self.unlisted += 1;
            self.worst_unlisted = self.worst_unlisted.max(verdict);
        }
    }

    /// Counts the findings not listed in one more problem.
    fn finish(self, report: &mut Report<'_>) {
        if self.unlisted == 0 {
            return;
        }
        let message = format!(
            "{} more hidden character(s) or comment(s) not listed{}",
            self.unlisted,
            if self.worst_unlisted == Verdict::Refuse {
                ", at least one refused"
            } else {
                ""
            }
        );
        report.problems.push(match self.worst_unlisted {
            Verdict::Refuse => {
                Problem::error(ProblemCode::HiddenCharacter, Some(self.path), message)
            }
            _ => Problem::warning(ProblemCode::HiddenCharacter, Some(self.path), message),
        });
    }
}

/// The descriptor setting that would accept a refused finding of `code`.
fn relax_hint(code: ProblemCode) -> &'static str {
    match code {
        ProblemCode::HiddenComment => {
            "a source's `content: {comments: allow, reason: …}` accepts it"
        }
        _ => "a source's `content: {hidden: warn, reason: …}` accepts it",
    }
}

fn hidden_problem(
    text: &str,
    run: &Run,
    line: Option<usize>,
    column: usize,
    zone: Zone,
) -> (ProblemCode, String, Finding) {
    let code_point = classes::code_point(run.first);
    let name = classes::name(run.first);
    let place = match (line, zone) {
        (None, Zone::Description) => {
            format!("in `description` (a YAML escape), character {column}")
        }
        (None, _) => format!("in the name, character {column}"),
        (Some(line), Zone::Frontmatter) => format!("line {line}, column {column} (frontmatter)"),
        (Some(line), _) => format!("line {line}, column {column}"),
    };
    let mut message = format!("{place}: {code_point} {name}, {}", run.class.described());
    if run.count > 1 {
        message.push_str(&format!(", the first of {} in a row", run.count));
    }
    if run.class == HiddenClass::Tag {
        let spelled: String = text[run.start..run.end]
            .chars()
            .take(EXCERPT_CHARS)
            .map(classes::tag_ascii)
            .collect();
        let more = if run.count > EXCERPT_CHARS { "…" } else { "" };
        message.push_str(&format!(" spelling `{}`{more}", escape::text(&spelled)));
    }
    let finding = Finding {
        class: run.class.as_str(),
        line,
        column,
        code_point: Some(code_point),
        name: Some(name.into_owned()),
        count: run.count,
    };
    (ProblemCode::HiddenCharacter, message, finding)
}

fn comment_problem(
    text: &str,
    split: usize,
    comment: &comments::Comment,
    cursor: &mut Cursor<'_>,
) -> (ProblemCode, String, Finding) {
    let (start, end) = (split + comment.start, split + comment.end);
    let (line, column) = cursor.position(start);
    let lines =
        text[start..end].matches('\n').count() + usize::from(!text[start..end].ends_with('\n'));
    let inner = text[start + 4..end]
        .strip_suffix("-->")
        .unwrap_or(&text[start + 4..end])
        .trim();
    let excerpt: String = inner.chars().take(EXCERPT_CHARS).collect();
    let more = if inner.chars().nth(EXCERPT_CHARS).is_some() {
        "…"
    } else {
        ""
    };
    let unclosed = if comment.closed {
        ""
    } else {
        ", unclosed: it hides the rest of the body"
    };
    let message = format!(
        "line {line}, column {column}: an HTML comment of {lines} line(s){unclosed}, read by the model but hidden when rendered: `{}`{more}",
        escape::text(&excerpt)
    );
    let finding = Finding {
        class: "comment",
        line: Some(line),
        column,
        code_point: None,
        name: None,
        count: lines,
    };
    (ProblemCode::HiddenComment, message, finding)
}

#[cfg(test)]
#[path = "content_tests.rs"]
mod tests;
