//! The paths the documentation names are paths its reader can follow.
//!
//! - Every `skillfold::…` path a page names (in prose or in a code block, `use skillfold::{A, B}`
//!   groups expanded) is allowed by the API rule — it starts at a name the crate root exports
//!   (`pub use` or `pub fn` in `src/lib.rs`), at `skillfold::prelude` or at `skillfold::codes` — and
//!   is listed in `tests/data/doc-paths.md`, whose one Rust block the `#[cfg(doctest)]` item
//!   `DocPaths` of `src/lib.rs` compiles: a path that does not resolve fails `cargo test --doc`.
//!   The rule also catches a path into a module that only happens to be reachable (a `pub`
//!   module added without the decision to make it host API).
//! - The list names nothing the pages do not, so it stays the pages' list.
//! - Every repository path a page names outside its code blocks — a relative link, or a
//!   backticked `src/…`, `tests/…`, `scripts/…` (and the other top-level folders) — exists.
//! - Every `--flag` a page names is an option of its command, and every option is described in
//!   `docs/cli.md` ([`flags`]).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

// The pages describe the default build: every command and option is in its `--help` only there.
#[cfg(all(
    feature = "git",
    feature = "signatures",
    feature = "mcp",
    feature = "http",
    feature = "oci"
))]
mod flags;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const LIST: &str = "tests/data/doc-paths.md";

/// The Markdown pages of the repository: the README and BENCHMARKS, `docs/`, and the READMEs of
/// `fuzz/`, the examples and the test data. Skill bundles (`examples/skills/`, the skills-ref
/// cases) are data, not documentation.
fn pages() -> Vec<PathBuf> {
    let mut pages = Vec::new();
    for dir in [
        "",
        "docs",
        "fuzz",
        "examples",
        "examples/rig-host",
        "tests/skills_ref",
        "bindings/python",
    ] {
        let dir = Path::new(ROOT).join(dir);
        if !dir.is_dir() {
            continue;
        }
        for entry in fs_err::read_dir(&dir).expect("list a folder of pages") {
            let path = entry.expect("list a folder of pages").path();
            if path.extension().is_some_and(|e| e == "md") && path.is_file() {
                pages.push(path);
            }
        }
    }
    pages.sort();
    assert!(
        pages.len() >= 14,
        "found only {} pages: {pages:?}",
        pages.len()
    );
    pages
}

fn relative(path: &Path) -> String {
    path.strip_prefix(ROOT)
        .unwrap_or(path)
        .display()
        .to_string()
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Expands one use tree (`A`, `a::B`, `{A, b::{C, D}}`, `A as B`, `*`) under `prefix`.
fn expand(prefix: &str, tree: &str, out: &mut Vec<String>) {
    let tree = tree.trim();
    if let Some(inner) = tree.strip_prefix('{').and_then(|t| t.strip_suffix('}')) {
        let (mut depth, mut start) = (0, 0);
        for (i, c) in inner.char_indices().chain([(inner.len(), ',')]) {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    expand(prefix, &inner[start..i], out);
                    start = i + 1;
                }
                _ => {}
            }
        }
        return;
    }
    let tree = tree.split(" as ").next().unwrap_or(tree).trim();
    if tree.is_empty() || tree == "*" || tree == "self" {
        out.push(prefix.to_owned());
        return;
    }
    match tree.find("::{") {
        Some(at) => expand(&format!("{prefix}::{}", &tree[..at]), &tree[at + 2..], out),
        None => out.push(format!("{prefix}::{}", tree.trim_end_matches("::*"))),
    }
}

/// Every `skillfold::…` path in `text`, with its 1-based line.
fn skillfold_paths(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let mut from = 0;
        while let Some(at) = line[from..].find("skillfold::") {
            let start = from + at;
            from = start + "skillfold::".len();
            let before = line[..start].chars().next_back();
            if before.is_some_and(|c| is_ident(c) || c == ':' || c == '$') {
                continue;
            }
            // The path: identifiers joined by `::`, possibly ending in a `{…}` group or `*`.
            let rest = &line[from..];
            let mut end = 0;
            let bytes: Vec<char> = rest.chars().collect();
            let mut depth = 0;
            while end < bytes.len() {
                let c = bytes[end];
                if c == '{' {
                    depth += 1;
                } else if c == '}' {
                    depth -= 1;
                    if depth == 0 {
                        end += 1;
                        break;
                    }
                } else if depth == 0 && !(is_ident(c) || c == ':' || c == '*') {
                    break;
                }
                end += 1;
            }
            let tree: String = bytes[..end].iter().collect();
            let tree = tree.trim_end_matches(':');
            if tree.is_empty() {
                continue;
            }
            let mut paths = Vec::new();
            expand("skillfold", tree, &mut paths);
            for path in paths {
                found.push((number + 1, path));
            }
        }
    }
    found
}

/// The first segments a host can write after `skillfold::`: what `src/lib.rs` exports at the
/// root (`pub use`, `pub fn`), `prelude` and `codes`.
fn host_roots() -> BTreeSet<String> {
    let lib = fs_err::read_to_string(Path::new(ROOT).join("src/lib.rs")).expect("read src/lib.rs");
    let mut roots: BTreeSet<String> = ["prelude", "codes"].map(String::from).into();
    let mut rest = lib.as_str();
    while let Some(at) = rest.find("\npub use ") {
        let statement = &rest[at + "\npub use ".len()..];
        let end = statement.find(';').expect("a `pub use` ends with `;`");
        let mut paths = Vec::new();
        expand("crate", &statement[..end], &mut paths);
        for path in paths {
            let original = &statement[..end];
            // `X as Y` exports Y: read the alias from the tree when there is one.
            let last = path.rsplit("::").next().unwrap_or(&path).to_owned();
            let alias = original
                .split(',')
                .map(str::trim)
                .find_map(|item| {
                    let item = item.trim_start_matches('{').trim_end_matches('}');
                    let (name, alias) = item.split_once(" as ")?;
                    (name.rsplit("::").next()? == last).then(|| alias.trim().to_owned())
                })
                .unwrap_or(last);
            roots.insert(alias);
        }
        rest = &statement[end..];
    }
    for line in lib.lines() {
        if let Some(name) = line.strip_prefix("pub fn ") {
            roots.insert(
                name.split(|c: char| !is_ident(c))
                    .next()
                    .unwrap_or("")
                    .to_owned(),
            );
        }
    }
    assert!(
        roots.contains("Runtime") && roots.contains("DescriptorError"),
        "{roots:?}"
    );
    roots
}

fn host_reachable(path: &str, roots: &BTreeSet<String>) -> bool {
    path.strip_prefix("skillfold::")
        .and_then(|rest| rest.split("::").next())
        .is_some_and(|first| roots.contains(first))
}

/// The Rust code blocks of the list, joined.
fn list_code() -> String {
    let text = fs_err::read_to_string(Path::new(ROOT).join(LIST)).expect("read the list");
    let mut code = String::new();
    let mut blocks = 0;
    let mut inside = false;
    for line in text.lines() {
        if line.starts_with("```") {
            inside = !inside;
            if inside {
                assert_eq!(line, "```rust", "{LIST}: its one block is compiled Rust");
                blocks += 1;
            }
            continue;
        }
        if inside {
            code.push_str(line);
            code.push('\n');
        }
    }
    assert_eq!(blocks, 1, "{LIST} has one Rust block");
    code
}

#[test]
fn every_rust_path_a_page_names_is_host_api_and_compiles() {
    let roots = host_roots();
    let mut named: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut refused = Vec::new();
    for page in pages() {
        let name = relative(&page);
        let text = fs_err::read_to_string(&page).expect("read a page");
        for (line, path) in skillfold_paths(&text) {
            if !host_reachable(&path, &roots) {
                refused.push(format!(
                    "{name}:{line}: `{path}` is not host API (a host reaches the crate root, \
                     skillfold::prelude and skillfold::codes only)"
                ));
            }
            named
                .entry(path)
                .or_default()
                .push(format!("{name}:{line}"));
        }
    }
    assert!(refused.is_empty(), "{}", refused.join("\n"));

    let listed: BTreeSet<String> = skillfold_paths(&list_code())
        .into_iter()
        .map(|(_, p)| p)
        .collect();
    for path in &listed {
        assert!(
            host_reachable(path, &roots),
            "{LIST}: `{path}` is not host API"
        );
    }
    let missing: Vec<String> = named
        .iter()
        .filter(|(path, _)| !listed.contains(*path))
        .map(|(path, at)| {
            format!(
                "{} names `{path}`: add a line that uses it to {LIST}",
                at.join(", ")
            )
        })
        .collect();
    assert!(missing.is_empty(), "{}", missing.join("\n"));
    let stale: Vec<&String> = listed.iter().filter(|p| !named.contains_key(*p)).collect();
    assert!(
        stale.is_empty(),
        "{LIST} lists paths no page names any more: {stale:?}"
    );

    // The list is compiled: `src/lib.rs` includes it as the doc of a `cfg(doctest)` item.
    let lib = fs_err::read_to_string(Path::new(ROOT).join("src/lib.rs")).expect("read src/lib.rs");
    let include = format!("#[cfg(doctest)]\n#[doc = include_str!(\"../{LIST}\")]");
    assert!(
        lib.contains(&include),
        "src/lib.rs must compile {LIST}: {include}"
    );
}

/// The rule refuses paths into the implementation modules.
#[test]
fn the_api_rule_refuses_implementation_paths() {
    let roots = host_roots();
    let text = "use skillfold::runtime::tools::export::ToolFormat;\n\
                `skillfold::format::bundle::Bundle::read_dir`, skillfold::{Runtime, ops::check}";
    let paths: Vec<String> = skillfold_paths(text).into_iter().map(|(_, p)| p).collect();
    assert_eq!(
        paths,
        [
            "skillfold::runtime::tools::export::ToolFormat",
            "skillfold::format::bundle::Bundle::read_dir",
            "skillfold::Runtime",
            "skillfold::ops::check",
        ]
    );
    let reachable: Vec<bool> = paths.iter().map(|p| host_reachable(p, &roots)).collect();
    assert_eq!(reachable, [false, false, true, false]);
    assert!(host_reachable("skillfold::prelude", &roots));
    assert!(host_reachable("skillfold::ToolFormat::Anthropic", &roots));
    assert!(host_reachable("skillfold::run_cli", &roots));
}

/// The repository paths a page's prose names: relative link targets, and backticked paths that
/// start with a top-level folder (outside code blocks, where `scripts/…` is often a bundle's file).
fn file_paths(page: &Path, text: &str) -> Vec<(usize, PathBuf, String)> {
    const FOLDERS: &[&str] = &[
        "src/",
        "tests/",
        "scripts/",
        "benches/",
        "examples/",
        "schemas/",
        "fuzz/",
        "bindings/",
        "docs/",
        "python/",
        ".ci/",
    ];
    let dir = page.parent().expect("a page is in a folder");
    let mut found = Vec::new();
    let mut fenced = false;
    for (number, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        for (at, _) in line.match_indices("](") {
            let target = &line[at + 2..];
            let Some(end) = target.find(')') else {
                continue;
            };
            let target = target[..end].split('#').next().unwrap_or("");
            if target.is_empty() || target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            found.push((number + 1, dir.join(target), target.to_owned()));
        }
        for (i, span) in line.split('`').enumerate() {
            if i % 2 == 1
                && FOLDERS.iter().any(|f| span.starts_with(f))
                && !span.contains(|c: char| c.is_whitespace() || "*<>…{}$".contains(c))
            {
                // From the repository's root, or from the page's folder (a README of its own
                // crate, such as examples/rig-host's, names its own files).
                let local = dir.join(span);
                let path = if local.exists() {
                    local
                } else {
                    Path::new(ROOT).join(span)
                };
                found.push((number + 1, path, span.to_owned()));
            }
        }
    }
    found
}

#[test]
fn every_file_a_page_names_exists() {
    let mut missing = Vec::new();
    let mut checked = 0;
    for page in pages() {
        let text = fs_err::read_to_string(&page).expect("read a page");
        for (line, path, written) in file_paths(&page, &text) {
            checked += 1;
            if !path.exists() {
                missing.push(format!(
                    "{}:{line}: `{written}` does not exist",
                    relative(&page)
                ));
            }
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
    assert!(
        checked > 50,
        "only {checked} paths found: is the scanner broken?"
    );
}

/// The scanner finds what a renamed folder leaves behind.
#[test]
fn a_path_that_moved_is_found() {
    let page = Path::new(ROOT).join("docs/x.md");
    let text = "see `src/prepare/mod.rs` and [spec](../src/spec/)\n```text\nsrc/nothing\n```\n";
    let found: Vec<(usize, String)> = file_paths(&page, text)
        .into_iter()
        .map(|(l, p, _)| (l, relative(&p)))
        .collect();
    assert_eq!(
        found,
        [
            (1, "docs/../src/spec".to_owned()),
            (1, "src/prepare/mod.rs".to_owned())
        ]
    );
    assert!(found.iter().all(|(_, p)| !Path::new(ROOT).join(p).exists()));
}

/// The README stays a front page: at most 250 lines (the rest belongs in `docs/`).
#[test]
fn the_readme_is_at_most_250_lines() {
    let text = fs_err::read_to_string(Path::new(ROOT).join("README.md")).expect("read README.md");
    let lines = text.lines().count();
    assert!(lines <= 250, "README.md has {lines} lines, at most 250");
}
