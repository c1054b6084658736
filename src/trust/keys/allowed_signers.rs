//! An allowed-signers file in the format of Git's `gpg.ssh.allowedSignersFile` (OpenSSH's
//! `ssh-keygen -Y verify -f`): its lines, read and parsed ([`AllowedSigners::read`]), and the line
//! that allows a key to sign ([`AllowedSigners::allowing`]). The format, the options and which line
//! decides are described in the parent module's doc ([`crate::trust::commit::policy`]).

use std::path::{Path, PathBuf};

use super::key_file::{SignersError, SignersRefusal, read_bounded};
use super::pattern::{PatternMatch, match_pattern_list};

/// One line of an allowed-signers file.
#[derive(Debug, Clone)]
pub struct AllowedSigner {
    /// The principals, as written (patterns allowed).
    pub principals: String,
    /// `namespaces=`: the pattern list a signature's namespace must match (see
    /// [`match_pattern_list`]); `None` allows any.
    pub namespaces: Option<String>,
    /// `valid-after=`, in Unix seconds.
    pub valid_after: Option<i64>,
    /// `valid-before=`, in Unix seconds.
    pub valid_before: Option<i64>,
    /// `cert-authority`: the key signs certificates, never a commit directly.
    pub cert_authority: bool,
    /// The public key.
    pub key: ssh_key::PublicKey,
    /// Its line in the file (1-based).
    pub line: usize,
}

/// A parsed allowed-signers file.
#[derive(Debug, Clone)]
pub struct AllowedSigners {
    /// The file it was read from.
    pub path: PathBuf,
    /// Its entries, in file order.
    pub signers: Vec<AllowedSigner>,
}

impl AllowedSigners {
    /// The line that allows `key` to sign in `namespace` at Unix time `at`, chosen as `git
    /// verify-commit` chooses it through `ssh-keygen` (see the module doc): the principals of the
    /// first line listing the key and valid at `at`, then for each of them in order the first line
    /// matching it that lists the key, allows `namespace` and is valid at `at`.
    pub fn allowing(
        &self,
        key: &ssh_key::public::KeyData,
        namespace: &str,
        at: i64,
    ) -> Result<&AllowedSigner, NotAllowed> {
        let listing = |s: &&AllowedSigner| !s.cert_authority && s.key.key_data() == key;
        let Some(first) = self.signers.iter().find(listing) else {
            return Err(NotAllowed::Unlisted);
        };
        let Some(found) = self.signers.iter().filter(listing).find(|s| s.valid_at(at)) else {
            return Err(NotAllowed::OutsideWindow { line: first.line });
        };
        // `ssh-keygen -Y find-principals` prints the principals one a line, up to an empty one.
        for principal in found.principals.split(',').take_while(|p| !p.is_empty()) {
            if let Some(allowed) = self.signers.iter().filter(listing).find(|s| {
                match_pattern_list(principal, &s.principals) == PatternMatch::Matched
                    && s.allows_namespace(namespace)
                    && s.valid_at(at)
            }) {
                return Ok(allowed);
            }
        }
        Err(NotAllowed::NoLineForNamespace { line: found.line })
    }

    /// Reads and parses the file at `path` (at most
    /// [`MAX_SIGNERS_BYTES`](super::key_file::MAX_SIGNERS_BYTES)).
    pub fn read(path: &Path) -> Result<AllowedSigners, SignersError> {
        let bytes = read_bounded(path)?;
        let text = String::from_utf8(bytes).map_err(|e| {
            let line = 1 + e.as_bytes()[..e.utf8_error().valid_up_to()]
                .iter()
                .filter(|&&b| b == b'\n')
                .count();
            SignersError {
                path: path.to_owned(),
                line: Some(line),
                refusal: SignersRefusal::NotUtf8,
            }
        })?;
        AllowedSigners::parse(&text, path)
    }

    /// Parses the text of an allowed-signers file read from `path`.
    pub fn parse(text: &str, path: &Path) -> Result<AllowedSigners, SignersError> {
        let mut signers = Vec::new();
        for (index, raw) in text.lines().enumerate() {
            if raw.contains('\0') {
                return Err(SignersError {
                    path: path.to_owned(),
                    line: Some(index + 1),
                    refusal: SignersRefusal::Nul,
                });
            }
            let line = raw.trim_matches(SEPARATORS);
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let signer = parse_line(line, index + 1).map_err(|refusal| SignersError {
                path: path.to_owned(),
                line: Some(index + 1),
                refusal,
            })?;
            signers.push(signer);
        }
        if signers.is_empty() {
            return Err(SignersError {
                path: path.to_owned(),
                line: None,
                refusal: SignersRefusal::NoSigner,
            });
        }
        Ok(AllowedSigners {
            path: path.to_owned(),
            signers,
        })
    }
}

/// Why no line of an allowed-signers file allows a key (see [`AllowedSigners::allowing`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotAllowed {
    /// No line lists the key (certificate authorities aside).
    Unlisted,
    /// The key is listed (first on this line), but no line listing it is valid at the time.
    OutsideWindow {
        /// The first line listing the key.
        line: usize,
    },
    /// The principals of this line (the first listing the key and valid at the time) are allowed
    /// by no line for the namespace at the time.
    NoLineForNamespace {
        /// The line whose principals were tried.
        line: usize,
    },
}

impl AllowedSigner {
    /// Whether this line, taken alone, allows `key` to sign in `namespace` at Unix time `at`,
    /// principals aside: the per-line conditions [`AllowedSigners::allowing`] is built from,
    /// which the tests and the fuzz oracle judge each line by.
    #[cfg(any(test, fuzzing))]
    pub fn allows(&self, key: &ssh_key::public::KeyData, namespace: &str, at: i64) -> bool {
        !self.cert_authority
            && self.key.key_data() == key
            && self.allows_namespace(namespace)
            && self.valid_at(at)
    }

    /// Whether `namespaces=` (absent: any) matches `namespace`.
    fn allows_namespace(&self, namespace: &str) -> bool {
        self.namespaces
            .as_deref()
            .is_none_or(|list| match_pattern_list(namespace, list) == PatternMatch::Matched)
    }

    /// Whether Unix time `at` is inside `valid-after=` and `valid-before=` (both inclusive, as in
    /// `ssh-keygen`).
    fn valid_at(&self, at: i64) -> bool {
        self.valid_after.is_none_or(|t| at >= t) && self.valid_before.is_none_or(|t| at <= t)
    }
}

/// Splits off the next token separated by spaces or tabs (`ssh-keygen`'s separators), keeping
/// double-quoted parts whole.
fn token(rest: &str) -> (&str, &str) {
    let rest = rest.trim_start_matches(SEPARATORS);
    let mut quoted = false;
    let mut chars = rest.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            // `\"` is an escaped quote to `ssh-keygen` (refused later, but the token ends where
            // it ends there).
            '\\' if chars.peek().is_some_and(|&(_, next)| next == '"') => {
                chars.next();
            }
            '"' => quoted = !quoted,
            c if SEPARATORS.contains(&c) && !quoted => return (&rest[..i], &rest[i..]),
            _ => {}
        }
    }
    (rest, "")
}

/// What separates the fields of a line.
const SEPARATORS: &[char] = &[' ', '\t', '\r'];

fn parse_line(line: &str, number: usize) -> Result<AllowedSigner, SignersRefusal> {
    let (principals, rest) = token(line);
    if principals.is_empty() || principals.contains('"') {
        return Err(SignersRefusal::Principals);
    }
    let (next, after) = token(rest);
    let (options, key_text) = if ssh_key::Algorithm::new(next).is_ok() {
        ("", rest)
    } else {
        (next, after)
    };
    let key_text = key_text.trim();
    if key_text.is_empty() {
        return Err(SignersRefusal::NoKey);
    }
    let key = ssh_key::PublicKey::from_openssh(key_text).map_err(|e| SignersRefusal::Key {
        reason: e.to_string(),
    })?;
    let mut signer = AllowedSigner {
        principals: principals.to_owned(),
        namespaces: None,
        valid_after: None,
        valid_before: None,
        cert_authority: false,
        key,
        line: number,
    };
    if options.contains('\\') {
        // `ssh-keygen` reads `\"` inside a quoted value as a quote; no escapes are read here.
        return Err(SignersRefusal::Backslash);
    }
    for option in split_options(options)? {
        let (name, value) = match option.split_once('=') {
            Some((name, value)) => (name, Some(unquote(value)?)),
            None => (option, None),
        };
        let name = name.to_ascii_lowercase();
        let twice = || SignersRefusal::OptionTwice { name: name.clone() };
        match (name.as_str(), value) {
            ("cert-authority", None) => signer.cert_authority = true,
            ("namespaces", Some(v)) => {
                if signer.namespaces.replace(v.to_owned()).is_some() {
                    return Err(twice());
                }
            }
            ("valid-after", Some(v)) => {
                if signer.valid_after.replace(parse_time(v)?).is_some() {
                    return Err(twice());
                }
            }
            ("valid-before", Some(v)) => {
                if signer.valid_before.replace(parse_time(v)?).is_some() {
                    return Err(twice());
                }
            }
            _ => {
                return Err(SignersRefusal::UnknownOption {
                    option: crate::support::escape::text(option).to_string(),
                });
            }
        }
    }
    if let (Some(after), Some(before)) = (signer.valid_after, signer.valid_before)
        && before <= after
    {
        return Err(SignersRefusal::ValidityOrder);
    }
    Ok(signer)
}

/// The comma-separated options, commas inside quotes kept.
fn split_options(options: &str) -> Result<Vec<&str>, SignersRefusal> {
    if options.is_empty() {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    let mut start = 0;
    let mut quoted = false;
    for (i, c) in options.char_indices() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => {
                out.push(&options[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if quoted {
        return Err(SignersRefusal::QuoteOpen);
    }
    out.push(&options[start..]);
    if out.iter().any(|o| o.is_empty()) {
        return Err(SignersRefusal::EmptyOption);
    }
    Ok(out)
}

fn unquote(value: &str) -> Result<&str, SignersRefusal> {
    value
        .strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .ok_or(SignersRefusal::Unquoted)
}

/// `YYYYMMDD[HHMM[SS]][Z]` as Unix seconds (UTC).
fn parse_time(text: &str) -> Result<i64, SignersRefusal> {
    let bad = || SignersRefusal::NotTime {
        text: crate::support::escape::text(text).to_string(),
    };
    let digits = text.strip_suffix(['Z', 'z']).unwrap_or(text);
    if !digits.bytes().all(|b| b.is_ascii_digit()) || ![8, 12, 14].contains(&digits.len()) {
        return Err(bad());
    }
    let field = |range: std::ops::Range<usize>| -> i64 {
        digits.get(range).and_then(|d| d.parse().ok()).unwrap_or(0)
    };
    let (year, month, day) = (field(0..4), field(4..6), field(6..8));
    let (hour, minute, second) = (field(8..10), field(10..12), field(12..14));
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 59
    {
        return Err(bad());
    }
    let seconds = days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second;
    if seconds <= 0 {
        // `ssh-keygen` refuses a time at or before the epoch (it reads 0 as "no bound").
        return Err(SignersRefusal::BeforeEpoch {
            text: crate::support::escape::text(text).to_string(),
        });
    }
    Ok(seconds)
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    const KEY: &str =
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAILM+rvN+ot98qgEN796jTiQfZfG1KaT0PtFDJ/XFSqti";

    fn parse(text: &str) -> Result<AllowedSigners, SignersError> {
        AllowedSigners::parse(text, Path::new("allowed_signers"))
    }

    #[test]
    fn reads_principals_options_and_keys() {
        let text = format!(
            "# who may sign\n\nalice@example.com,bob@* namespaces=\"git,file\",valid-after=\"20250101\",valid-before=\"20260101120000Z\" {KEY} alice\ncarol {KEY}\n"
        );
        let signers = parse(&text).expect("valid");
        assert_eq!(signers.signers.len(), 2);
        let alice = &signers.signers[0];
        assert_eq!(alice.principals, "alice@example.com,bob@*");
        assert_eq!(alice.line, 3);
        assert_eq!(alice.namespaces.as_deref(), Some("git,file"));
        assert_eq!(alice.valid_after, Some(1_735_689_600));
        assert_eq!(alice.valid_before, Some(1_767_268_800));
        let key = alice.key.key_data().clone();
        assert!(alice.allows(&key, "git", 1_750_000_000));
        assert!(
            !alice.allows(&key, "git", 1_735_689_599),
            "before valid-after"
        );
        assert!(
            !alice.allows(&key, "git", 1_767_268_801),
            "after valid-before"
        );
        assert!(
            !alice.allows(&key, "email", 1_750_000_000),
            "other namespace"
        );
        assert!(signers.signers[1].allows(&key, "anything", 0));
    }

    #[test]
    fn refuses_malformed_lines_naming_them() {
        let not_time = |text: &str| SignersRefusal::NotTime {
            text: text.to_owned(),
        };
        for (text, want) in [
            (
                format!("alice valid-after=\"2025\" {KEY}\n"),
                not_time("2025"),
            ),
            (
                format!("alice valid-after=\"20251301\" {KEY}\n"),
                not_time("20251301"),
            ),
            (
                format!("alice namespaces=git {KEY}\n"),
                SignersRefusal::Unquoted,
            ),
            (
                format!("alice namespaces=\"git {KEY}\n"),
                SignersRefusal::NoKey,
            ),
            ("alice\n".to_owned(), SignersRefusal::NoKey),
            ("# only a comment\n".to_owned(), SignersRefusal::NoSigner),
            (
                format!("alice bogus=\"x\" {KEY}\n"),
                SignersRefusal::UnknownOption {
                    option: "bogus=\"x\"".to_owned(),
                },
            ),
        ] {
            let err = parse(&text).expect_err(&text);
            assert_eq!(err.refusal, want, "{text}: {err}");
        }
        let err = parse(&format!("alice {KEY}\nbob ssh-ed25519 AAAA\n")).unwrap_err();
        assert!(matches!(err.refusal, SignersRefusal::Key { .. }), "{err}");
        let err = parse(&format!("alice {KEY}\nbob ssh-ed25519 AAAA\n")).unwrap_err();
        assert_eq!(err.line, Some(2));
        assert!(err.to_string().starts_with("allowed_signers:2: "), "{err}");
    }

    #[test]
    fn a_line_ssh_keygen_refuses_refuses_the_file() {
        let twice = |name: &str| SignersRefusal::OptionTwice {
            name: name.to_owned(),
        };
        for (options, want) in [
            (r#"namespaces="file",namespaces="git""#, twice("namespaces")),
            (r#"namespaces="git",NAMESPACES="git""#, twice("namespaces")),
            (
                r#"valid-after="20200101",valid-after="20100101""#,
                twice("valid-after"),
            ),
            (
                r#"valid-before="20200101",valid-before="20990101""#,
                twice("valid-before"),
            ),
            (
                r#"valid-after="20200101",valid-before="20200101""#,
                SignersRefusal::ValidityOrder,
            ),
            (
                r#"valid-after="20200102",valid-before="20200101""#,
                SignersRefusal::ValidityOrder,
            ),
            (
                r#"valid-before="19700101Z""#,
                SignersRefusal::BeforeEpoch {
                    text: "19700101Z".to_owned(),
                },
            ),
            (r#"namespaces="g\"it""#, SignersRefusal::Backslash),
        ] {
            let text = format!("alice@example.com {options} {KEY}\n");
            let err = parse(&text).expect_err(&text);
            assert_eq!(err.refusal, want, "{text}: {err}");
            assert_eq!(err.line, Some(1), "{text}");
        }
        // The message names the option and the clause ssh-keygen refuses.
        let err = parse(&format!("a namespaces=\"x\",namespaces=\"y\" {KEY}\n")).unwrap_err();
        assert!(
            err.to_string()
                .contains("`namespaces` is given twice (`ssh-keygen` refuses the line"),
            "{err}"
        );
        let err = parse(&format!("alice {KEY}\nbob\0 {KEY}\n")).expect_err("a NUL");
        assert_eq!(err.line, Some(2));
        assert_eq!(err.refusal, SignersRefusal::Nul);
    }

    #[test]
    fn the_line_that_decides_is_the_one_git_takes() {
        let signers = |text: &str| parse(text).expect(text);
        let key = parse(&format!("a {KEY}\n")).expect("valid").signers[0]
            .key
            .key_data()
            .clone();
        let decide = |text: &str| {
            signers(text)
                .allowing(&key, "git", 1_750_000_000)
                .map(|s| s.line)
        };
        // The first line listing the key gives the principals; a later line for another
        // principal does not help.
        assert_eq!(
            decide(&format!(
                "x namespaces=\"file\" {KEY}\ny namespaces=\"git\" {KEY}\n"
            )),
            Err(NotAllowed::NoLineForNamespace { line: 1 })
        );
        // The same principal on a later line does.
        assert_eq!(
            decide(&format!(
                "x namespaces=\"file\" {KEY}\nx namespaces=\"git\" {KEY}\n"
            )),
            Ok(2)
        );
        // Each principal of the first line is tried, in order, against every line's patterns.
        assert_eq!(
            decide(&format!(
                "x,y namespaces=\"file\" {KEY}\n*y namespaces=\"git\" {KEY}\n"
            )),
            Ok(2)
        );
        // A first line outside its validity window is passed over when looking for principals.
        assert_eq!(
            decide(&format!("x valid-before=\"20200101\" {KEY}\ny {KEY}\n")),
            Ok(2)
        );
        assert_eq!(
            decide(&format!("x valid-before=\"20200101\" {KEY}\n")),
            Err(NotAllowed::OutsideWindow { line: 1 })
        );
        // Negated patterns, in principals and in namespaces.
        assert_eq!(
            decide(&format!("x namespaces=\"!git,*\" {KEY}\n")),
            Err(NotAllowed::NoLineForNamespace { line: 1 })
        );
        assert_eq!(decide(&format!("x namespaces=\"!file,*\" {KEY}\n")), Ok(1));
        assert_eq!(
            decide(&format!(
                "x namespaces=\"file\" {KEY}\n!x,* namespaces=\"git\" {KEY}\n"
            )),
            Err(NotAllowed::NoLineForNamespace { line: 1 })
        );
        // Certificate authorities are never the key itself; an unlisted key is not listed.
        assert_eq!(
            decide(&format!("x cert-authority {KEY}\n")),
            Err(NotAllowed::Unlisted)
        );
        // find-principals stops at an empty principal.
        assert_eq!(
            decide(&format!(
                "x,,y namespaces=\"file\" {KEY}\ny namespaces=\"git\" {KEY}\n"
            )),
            Err(NotAllowed::NoLineForNamespace { line: 1 })
        );
    }

    #[test]
    fn a_certificate_authority_never_allows_a_plain_signature() {
        let signers = parse(&format!("*@example.com cert-authority {KEY}\n")).expect("valid");
        let key = signers.signers[0].key.key_data().clone();
        assert!(!signers.signers[0].allows(&key, "git", 0));
    }

    #[test]
    fn civil_days_match_known_dates() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        assert_eq!(parse_time("20240229").unwrap(), 1_709_164_800);
    }
}
