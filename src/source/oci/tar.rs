//! The reproducible tar of one bundle layer: POSIX ustar entries for directories and regular
//! files only, in byte order of their paths (every directory before what it holds), mode 0555
//! (directories and executable files) or 0444 (other files), uid and gid 0, empty user and group names, mtime 0, no
//! extended attributes. A path too long for ustar's 100-byte name and 155-byte prefix gets a PAX
//! `path` record, the one extension used. The same entries give the same bytes on any machine.

use std::collections::BTreeSet;

/// The tar block size.
pub const BLOCK: usize = 512;

/// One file of a layer: its path inside the archive (`<bundle>/<path>`) and its bytes.
pub struct TarFile<'a> {
    /// The archive path, `/`-separated, relative, without `.` or `..` segments.
    pub path: String,
    /// The file's bytes.
    pub bytes: &'a [u8],
    /// Whether it is written executable (`0555`; else `0444`).
    pub executable: bool,
}

/// The archive of `files` (any order; they are sorted here) with every parent directory.
pub fn archive(files: &[TarFile<'_>]) -> Vec<u8> {
    let mut dirs = BTreeSet::new();
    for file in files {
        let mut at = 0;
        while let Some(slash) = file.path[at..].find('/') {
            at += slash + 1;
            dirs.insert(file.path[..at].to_owned());
        }
    }
    let mut entries: Vec<(&str, Option<&TarFile<'_>>)> =
        dirs.iter().map(|d| (d.as_str(), None)).collect();
    entries.extend(files.iter().map(|f| (f.path.as_str(), Some(f))));
    entries.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let mut out = Vec::new();
    for (path, bytes) in entries {
        match bytes {
            None => entry(&mut out, path, b'5', 0o555, &[]),
            Some(file) => {
                let mode = if file.executable { 0o555 } else { 0o444 };
                entry(&mut out, path, b'0', mode, file.bytes);
            }
        }
    }
    out.resize(out.len() + 2 * BLOCK, 0);
    out
}

fn entry(out: &mut Vec<u8>, path: &str, kind: u8, mode: u32, bytes: &[u8]) {
    let (prefix, name) = split_ustar(path).unwrap_or_else(|| {
        pax_path(out, path);
        // The header's own name only shows in readers without PAX; a file's never ends in `/`.
        let name = truncated(path, 100);
        (
            "",
            if kind == b'5' {
                name
            } else {
                name.trim_end_matches('/')
            },
        )
    });
    out.extend_from_slice(&ustar_header(name, prefix, kind, mode, bytes.len() as u64));
    out.extend_from_slice(bytes);
    pad(out);
}

/// A PAX extended header holding `path=<path>` for the entry that follows.
fn pax_path(out: &mut Vec<u8>, path: &str) {
    let record = pax_record("path", path);
    out.extend_from_slice(&ustar_header(
        "@PaxHeader",
        "",
        b'x',
        0o444,
        record.len() as u64,
    ));
    out.extend_from_slice(&record);
    pad(out);
}

/// One POSIX ustar header: `name` (at most 100 bytes) and `prefix` (at most 155), the entry type
/// flag `kind`, `mode` and `size`; owner, group and time 0, empty user and group names, the
/// checksum filled in. (Tests also use it to write entry types the archive never holds.)
pub fn ustar_header(name: &str, prefix: &str, kind: u8, mode: u32, size: u64) -> [u8; BLOCK] {
    let mut header = [0u8; BLOCK];
    put(&mut header[0..100], name.as_bytes());
    octal(&mut header[100..108], u64::from(mode));
    octal(&mut header[108..116], 0);
    octal(&mut header[116..124], 0);
    octal(&mut header[124..136], size);
    octal(&mut header[136..148], 0);
    header[156] = kind;
    put(&mut header[257..263], b"ustar\0");
    put(&mut header[263..265], b"00");
    octal(&mut header[329..337], 0);
    octal(&mut header[337..345], 0);
    put(&mut header[345..500], prefix.as_bytes());
    checksum(&mut header);
    header
}

/// `"<len> <key>=<value>\n"`, where `<len>` counts the whole record, its own digits included.
fn pax_record(key: &str, value: &str) -> Vec<u8> {
    let body = key.len() + value.len() + 3; // ' ', '=', '\n'
    let mut len = body + body.to_string().len();
    if len.to_string().len() != body.to_string().len() {
        len = body + len.to_string().len();
    }
    format!("{len} {key}={value}\n").into_bytes()
}

/// Splits `path` into ustar's prefix (≤ 155 bytes) and name (≤ 100 bytes) at a `/`, if it fits.
fn split_ustar(path: &str) -> Option<(&str, &str)> {
    if path.len() <= 100 {
        return Some(("", path));
    }
    // The name keeps its trailing `/` for a directory, so split before the last segment.
    let searchable = path.strip_suffix('/').unwrap_or(path);
    searchable
        .char_indices()
        .filter(|&(_, c)| c == '/')
        .map(|(i, _)| (&path[..i], &path[i + 1..]))
        .find(|(prefix, name)| prefix.len() <= 155 && name.len() <= 100 && !name.is_empty())
}

fn truncated(path: &str, max: usize) -> &str {
    let mut end = path.len().min(max);
    while !path.is_char_boundary(end) {
        end -= 1;
    }
    &path[..end]
}

fn put(field: &mut [u8], value: &[u8]) {
    field[..value.len()].copy_from_slice(value);
}

/// Zero-padded octal digits followed by a NUL, filling the field.
fn octal(field: &mut [u8], value: u64) {
    let digits = format!("{value:0width$o}", width = field.len() - 1);
    put(field, digits.as_bytes());
    field[field.len() - 1] = 0;
}

fn checksum(header: &mut [u8; BLOCK]) {
    header[148..156].fill(b' ');
    let sum: u32 = header.iter().map(|&b| u32::from(b)).sum();
    let digits = format!("{sum:06o}\0 ");
    header[148..156].copy_from_slice(digits.as_bytes());
}

fn pad(out: &mut Vec<u8>) {
    let rest = out.len() % BLOCK;
    if rest != 0 {
        out.resize(out.len() + BLOCK - rest, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files() -> Vec<TarFile<'static>> {
        vec![
            TarFile {
                path: "pdf/scripts/fill.py".into(),
                bytes: b"print(1)\n",
                executable: false,
            },
            TarFile {
                path: "pdf/SKILL.md".into(),
                bytes: b"---\nname: pdf\n---\n",
                executable: false,
            },
        ]
    }

    #[test]
    fn the_same_files_in_any_order_give_the_same_bytes() {
        let mut reversed = files();
        reversed.reverse();
        assert_eq!(archive(&files()), archive(&reversed));
        assert_eq!(archive(&files()).len() % BLOCK, 0);
    }

    #[test]
    fn an_executable_file_is_written_0555_and_every_other_file_0444() {
        let mut files = files();
        files[0].executable = true;
        let tar = archive(&files);
        // Entries in byte order: `pdf/`, `pdf/SKILL.md`, `pdf/scripts/`, `pdf/scripts/fill.py`;
        // each file here fits one data block after its header.
        let mode_of = |name: &str| {
            let at = tar
                .chunks(BLOCK)
                .position(|block| block.starts_with(name.as_bytes()) && block[name.len()] == 0)
                .expect("the entry");
            std::str::from_utf8(&tar[at * BLOCK + 100..at * BLOCK + 107])
                .expect("octal")
                .to_owned()
        };
        assert_eq!(mode_of("pdf/scripts/fill.py"), "0000555");
        assert_eq!(mode_of("pdf/SKILL.md"), "0000444");
        assert_eq!(mode_of("pdf/"), "0000555");
    }

    #[test]
    fn pax_records_count_their_own_length() {
        for value in ["a", &"x".repeat(90), &"y".repeat(994), &"z".repeat(9_994)] {
            let record = pax_record("path", value);
            let declared: usize = std::str::from_utf8(&record)
                .unwrap()
                .split(' ')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            assert_eq!(declared, record.len(), "{}", value.len());
        }
    }

    #[test]
    fn long_paths_split_at_a_slash_or_fall_back_to_pax() {
        let long = format!("{}/{}", "d".repeat(150), "f".repeat(90));
        assert_eq!(split_ustar(&long), Some((&long[..150], &long[151..])));
        let too_long = format!("{}/{}", "d".repeat(200), "f".repeat(90));
        assert_eq!(split_ustar(&too_long), None);
        let name = "f".repeat(120);
        assert_eq!(split_ustar(&name), None);
    }
}
