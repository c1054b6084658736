//! Who may sign a pinned commit: an allowed-signers file in the format of Git's
//! `gpg.ssh.allowedSignersFile` (OpenSSH's `ssh-keygen -Y verify -f`), parsed and checked when the
//! descriptor is checked, so a malformed line refuses the descriptor with its line number.
//!
//! Each line that is neither blank nor a `#` comment holds: comma-separated principals (patterns
//! with `*` and `?`), optional comma-separated options, the key type and its base64 data, and an
//! optional comment. Options: `namespaces="git,…"` (the signature's namespace must be listed),
//! `valid-after="…"` and `valid-before="…"` (`YYYYMMDD`, `YYYYMMDDHHMM` or `YYYYMMDDHHMMSS`,
//! optionally followed by `Z`; read as UTC — a deviation from `ssh-keygen`, which reads times
//! without `Z` in the local time zone; the committer time of the commit is judged against them,
//! as Git does), and `cert-authority` (a certificate authority: certificates are not supported,
//! so such a line never allows a signature). Unknown options refuse the file, as `ssh-keygen`
//! does.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Who signed a verified commit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Signer {
    /// `ssh`.
    pub format: String,
    /// The principals of the allowed-signers line that allowed the key.
    pub principal: String,
    /// The key's fingerprint (`SHA256:…`).
    pub fingerprint: String,
}

/// A source's trust policy: the keys that may sign its pinned commit.
#[derive(Debug, Clone)]
pub struct TrustPolicy {
    /// SSH keys (`verify.allowed_signers`).
    pub ssh: Option<AllowedSigners>,
    /// OpenPGP keys (`verify.openpgp_keys`).
    pub openpgp: Option<OpenPgpKeys>,
}

impl TrustPolicy {
    /// Whether the key with this fingerprint is still allowed (SSH: listed for the `git`
    /// namespace; OpenPGP: in the keyring, primary key or subkey).
    pub fn lists(&self, fingerprint: &str) -> bool {
        self.ssh.as_ref().is_some_and(|s| s.lists(fingerprint))
            || self.openpgp.as_ref().is_some_and(|k| k.lists(fingerprint))
    }
}

/// An armored OpenPGP keyring (`verify.openpgp_keys`): public keys whose self-signatures and
/// subkey bindings verify.
#[derive(Debug, Clone)]
pub struct OpenPgpKeys {
    /// The file it was read from.
    pub path: PathBuf,
    /// The keys.
    pub keys: Vec<pgp::composed::SignedPublicKey>,
}

impl OpenPgpKeys {
    /// Reads the armored public keys in `path` (at most [`MAX_SIGNERS_BYTES`]); a key whose
    /// bindings do not verify refuses the file.
    pub fn read(path: &Path) -> Result<OpenPgpKeys, SignersError> {
        use pgp::composed::Deserializable as _;
        use pgp::types::KeyDetails as _;

        let error = |message: String| SignersError {
            path: path.to_owned(),
            line: None,
            message,
        };
        let bytes = read_bounded(path)?;
        let (keys, _) = pgp::composed::SignedPublicKey::from_armor_many(&bytes[..])
            .map_err(|e| error(format!("not armored OpenPGP public keys: {e}")))?;
        let mut out = Vec::new();
        for (i, key) in keys.enumerate() {
            let key = key.map_err(|e| error(format!("key {} cannot be read: {e}", i + 1)))?;
            key.verify_bindings().map_err(|e| {
                error(format!(
                    "key {} ({:X}): its self-signatures do not verify: {e}",
                    i + 1,
                    key.fingerprint()
                ))
            })?;
            out.push(key);
        }
        if out.is_empty() {
            return Err(error("no public key is listed".into()));
        }
        Ok(OpenPgpKeys {
            path: path.to_owned(),
            keys: out,
        })
    }

    /// Whether a primary key or subkey has this fingerprint (uppercase hex).
    pub fn lists(&self, fingerprint: &str) -> bool {
        use pgp::types::KeyDetails as _;
        self.keys.iter().any(|k| {
            format!("{:X}", k.fingerprint()) == fingerprint
                || k.public_subkeys
                    .iter()
                    .any(|s| format!("{:X}", s.key.fingerprint()) == fingerprint)
        })
    }
}

/// The most bytes an allowed-signers file may hold.
pub const MAX_SIGNERS_BYTES: u64 = 1024 * 1024;

/// One line of an allowed-signers file.
#[derive(Debug, Clone)]
pub struct AllowedSigner {
    /// The principals, as written (patterns allowed).
    pub principals: String,
    /// `namespaces=`: the namespaces a signature may use; `None` allows any.
    pub namespaces: Option<Vec<String>>,
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

/// Why an allowed-signers file cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{}: {message}", crate::format::escape::path(.path), .line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct SignersError {
    /// The file.
    pub path: PathBuf,
    /// The line at fault, if one is.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

impl AllowedSigners {
    /// Whether the key with this fingerprint (`SHA256:…`) is still listed for the `git`
    /// namespace (the validity window is not judged here: it needs the commit's time).
    pub fn lists(&self, fingerprint: &str) -> bool {
        self.signers.iter().any(|s| {
            !s.cert_authority
                && s.key.fingerprint(ssh_key::HashAlg::Sha256).to_string() == fingerprint
                && s.namespaces
                    .as_ref()
                    .is_none_or(|n| n.iter().any(|n| n == "git"))
        })
    }

    /// Reads and parses the file at `path` (at most [`MAX_SIGNERS_BYTES`]).
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
                message: "not UTF-8 text".into(),
            }
        })?;
        AllowedSigners::parse(&text, path)
    }

    /// Parses the text of an allowed-signers file read from `path`.
    pub fn parse(text: &str, path: &Path) -> Result<AllowedSigners, SignersError> {
        let mut signers = Vec::new();
        for (index, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let signer = parse_line(line, index + 1).map_err(|message| SignersError {
                path: path.to_owned(),
                line: Some(index + 1),
                message,
            })?;
            signers.push(signer);
        }
        if signers.is_empty() {
            return Err(SignersError {
                path: path.to_owned(),
                line: None,
                message: "no signer is listed".into(),
            });
        }
        Ok(AllowedSigners {
            path: path.to_owned(),
            signers,
        })
    }
}

/// The bytes of the key file at `path`, refused over [`MAX_SIGNERS_BYTES`] without reading more.
pub(crate) fn read_bounded(path: &Path) -> Result<Vec<u8>, SignersError> {
    let error = |message: String| SignersError {
        path: path.to_owned(),
        line: None,
        message,
    };
    crate::format::untrusted_fs::read_input(path, MAX_SIGNERS_BYTES)
        .map_err(|e| error(e.reason))?
        .map_err(|_| error(format!("larger than {MAX_SIGNERS_BYTES} bytes")))
}

impl AllowedSigner {
    /// Whether this line allows `key` to sign in `namespace` at Unix time `at`.
    pub fn allows(&self, key: &ssh_key::public::KeyData, namespace: &str, at: i64) -> bool {
        !self.cert_authority
            && self.key.key_data() == key
            && self
                .namespaces
                .as_ref()
                .is_none_or(|n| n.iter().any(|n| n == namespace))
            && self.valid_after.is_none_or(|t| at >= t)
            && self.valid_before.is_none_or(|t| at <= t)
    }
}

/// Splits off the next whitespace-separated token, keeping double-quoted parts whole.
fn token(rest: &str) -> (&str, &str) {
    let rest = rest.trim_start();
    let mut quoted = false;
    for (i, c) in rest.char_indices() {
        match c {
            '"' => quoted = !quoted,
            c if c.is_whitespace() && !quoted => return (&rest[..i], &rest[i..]),
            _ => {}
        }
    }
    (rest, "")
}

fn parse_line(line: &str, number: usize) -> Result<AllowedSigner, String> {
    let (principals, rest) = token(line);
    if principals.is_empty() || principals.contains('"') {
        return Err("expected principals first".into());
    }
    let (next, after) = token(rest);
    let (options, key_text) = if ssh_key::Algorithm::new(next).is_ok() {
        ("", rest)
    } else {
        (next, after)
    };
    let key_text = key_text.trim();
    if key_text.is_empty() {
        return Err("expected a key type and its base64 data after the principals".into());
    }
    let key = ssh_key::PublicKey::from_openssh(key_text)
        .map_err(|e| format!("the public key cannot be read: {e}"))?;
    let mut signer = AllowedSigner {
        principals: principals.to_owned(),
        namespaces: None,
        valid_after: None,
        valid_before: None,
        cert_authority: false,
        key,
        line: number,
    };
    for option in split_options(options)? {
        let (name, value) = match option.split_once('=') {
            Some((name, value)) => (name, Some(unquote(value)?)),
            None => (option, None),
        };
        match (name.to_ascii_lowercase().as_str(), value) {
            ("cert-authority", None) => signer.cert_authority = true,
            ("namespaces", Some(v)) => {
                signer.namespaces = Some(v.split(',').map(str::to_owned).collect());
            }
            ("valid-after", Some(v)) => signer.valid_after = Some(parse_time(v)?),
            ("valid-before", Some(v)) => signer.valid_before = Some(parse_time(v)?),
            _ => {
                return Err(format!(
                    "unknown or malformed option `{}`",
                    crate::format::escape::text(option)
                ));
            }
        }
    }
    Ok(signer)
}

/// The comma-separated options, commas inside quotes kept.
fn split_options(options: &str) -> Result<Vec<&str>, String> {
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
        return Err("an option's quote is not closed".into());
    }
    out.push(&options[start..]);
    if out.iter().any(|o| o.is_empty()) {
        return Err("an empty option".into());
    }
    Ok(out)
}

fn unquote(value: &str) -> Result<&str, String> {
    value
        .strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .ok_or_else(|| "option values must be double-quoted".to_owned())
}

/// `YYYYMMDD[HHMM[SS]][Z]` as Unix seconds (UTC).
fn parse_time(text: &str) -> Result<i64, String> {
    let bad = || {
        format!(
            "`{}` is not a time (YYYYMMDD, YYYYMMDDHHMM or YYYYMMDDHHMMSS, optionally with Z)",
            crate::format::escape::text(text)
        )
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
    Ok(days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second)
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
        assert_eq!(
            alice.namespaces.as_deref(),
            Some(&["git".to_owned(), "file".to_owned()][..])
        );
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
        for (text, needle) in [
            (format!("alice {KEY}\nbob ssh-ed25519 AAAA\n"), "public key"),
            (
                format!("alice bogus=\"x\" {KEY}\n"),
                "unknown or malformed option",
            ),
            (format!("alice valid-after=\"2025\" {KEY}\n"), "not a time"),
            (
                format!("alice valid-after=\"20251301\" {KEY}\n"),
                "not a time",
            ),
            (format!("alice namespaces=git {KEY}\n"), "double-quoted"),
            (format!("alice namespaces=\"git {KEY}\n"), "key type"),
            ("alice\n".to_owned(), "key type"),
            ("# only a comment\n".to_owned(), "no signer"),
        ] {
            let err = parse(&text).expect_err(&text);
            assert!(err.message.contains(needle), "{text}: {err}");
        }
        let err = parse(&format!("alice {KEY}\nbob ssh-ed25519 AAAA\n")).unwrap_err();
        assert_eq!(err.line, Some(2));
        assert!(err.to_string().starts_with("allowed_signers:2: "), "{err}");
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
