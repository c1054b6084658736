//! `docs/error-codes.md` and the registry of codes agree: every code of every area's enum is in
//! its area's table, every code of a table is in its area's enum, and the exit column is the
//! status the code declares.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

// Through the public path only: what a host gets.
use skillfold::codes::{ErrorCode, ExitClass, registry};

/// Each table of the page (its `##` heading) and the area whose enum it documents.
const TABLES: &[(&str, &str)] = &[
    ("Bundle problems", "bundle"),
    ("Reading a bundle directory", "bundle directory"),
    ("Pins and verification", "pin"),
    ("Descriptor", "descriptor"),
    ("Preparation", "preparation"),
    ("Distribution", "distribution"),
    ("Runtime and catalogues", "runtime"),
    ("Installing into agent folders", "install"),
    ("The MCP server", "mcp"),
    ("Importing lock files", "import"),
    ("Tool errors", "tool"),
    ("Spec tooling", "spec"),
    ("The command line", "command"),
];

/// The rows `code -> exit column` of every table with a `code` column, by heading.
fn tables(page: &str) -> BTreeMap<String, Vec<(String, String)>> {
    let mut tables: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    let mut heading = String::new();
    let mut in_code_table = false;
    for line in page.lines() {
        if let Some(h) = line.strip_prefix("## ") {
            heading = h.trim().to_owned();
            in_code_table = false;
            continue;
        }
        let Some(row) = line.strip_prefix('|') else {
            in_code_table = false;
            continue;
        };
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        if cells.first() == Some(&"code") {
            in_code_table = true;
            tables.entry(heading.clone()).or_default();
            continue;
        }
        if !in_code_table || cells.first().is_some_and(|c| c.starts_with("---")) {
            continue;
        }
        let code = cells[0].trim_matches('`').to_owned();
        let exit = cells.get(1).copied().unwrap_or_default().to_owned();
        tables
            .entry(heading.clone())
            .or_default()
            .push((code, exit));
    }
    tables
}

fn page() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/error-codes.md");
    fs_err::read_to_string(path).expect("docs/error-codes.md")
}

/// Every disagreement between the page's tables and the registry, one line each.
fn disagreements(page: &str, codes: &[ErrorCode]) -> Vec<String> {
    let tables = tables(page);
    let mut wrong = Vec::new();
    for heading in tables.keys() {
        if !TABLES.iter().any(|(h, _)| h == heading) {
            wrong.push(format!(
                "the table under `{heading}` is not an area of the registry"
            ));
        }
    }
    for (heading, area) in TABLES {
        let enum_codes: Vec<&ErrorCode> = codes.iter().filter(|c| c.area() == *area).collect();
        if enum_codes.is_empty() {
            // An area this build does not have (the MCP server without the `mcp` feature).
            continue;
        }
        let Some(rows) = tables.get(*heading) else {
            wrong.push(format!("no table `{heading}` for area `{area}`"));
            continue;
        };
        let mut seen = BTreeSet::new();
        for (code, exit) in rows {
            if !seen.insert(code.as_str()) {
                wrong.push(format!("`{code}` twice in `{heading}`"));
            }
            match enum_codes.iter().find(|c| c.as_str() == code) {
                None => wrong.push(format!("`{code}` of `{heading}` is in no enum of `{area}`")),
                Some(c) if exit != &c.exit().status().to_string() => wrong.push(format!(
                    "`{code}` of `{heading}`: the page says exit `{exit}`, the enum {}",
                    c.exit().status()
                )),
                Some(_) => {}
            }
        }
        for c in enum_codes {
            if !rows.iter().any(|(code, _)| code == c.as_str()) {
                wrong.push(format!("`{c}` of area `{area}` is not in `{heading}`"));
            }
        }
    }
    wrong
}

#[test]
fn the_error_codes_page_and_the_enums_agree() {
    let wrong = disagreements(&page(), &registry());
    assert!(
        wrong.is_empty(),
        "docs/error-codes.md disagrees with the enums:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn a_page_that_disagrees_with_the_enums_is_refused() {
    let page = page();
    let codes = registry();
    // A code left off the page.
    let missing = page.replace("| `guard_held` | 1 |", "| `guard_hold` | 1 |");
    let wrong = disagreements(&missing, &codes);
    assert!(
        wrong
            .iter()
            .any(|w| w.contains("`guard_held` of area `preparation`")),
        "{wrong:?}"
    );
    assert!(
        wrong
            .iter()
            .any(|w| w.contains("`guard_hold` of `Preparation` is in no enum")),
        "{wrong:?}"
    );
    // Another exit status.
    let exit = page.replace("| `corpus_io` | 1 |", "| `corpus_io` | 2 |");
    let wrong = disagreements(&exit, &codes);
    assert_eq!(wrong.len(), 1, "{wrong:?}");
    assert!(
        wrong[0].contains("the page says exit `2`, the enum 1"),
        "{wrong:?}"
    );
    // A dash where the code declares a status.
    let dash = page.replace("| `not_prepared` | 2 |", "| `not_prepared` | — |");
    assert_eq!(disagreements(&dash, &codes).len(), 1);
}

#[test]
fn every_area_has_codes_and_failures_never_exit_0_except_warnings() {
    let codes = registry();
    for (_, area) in TABLES {
        if *area == "mcp" && cfg!(not(feature = "mcp")) {
            continue;
        }
        assert!(
            codes.iter().any(|c| c.area() == *area),
            "no codes for `{area}`"
        );
    }
    let ok: Vec<&str> = codes
        .iter()
        .filter(|c| c.exit() == ExitClass::Ok)
        .map(|c| c.as_str())
        .collect();
    assert_eq!(ok, ["case_collision"], "only a warning exits 0");
}

/// The lines of `text` that decide an exit status other than from a code: a named `Exit`
/// class, an `ExitClass`, or a hand-written retryable flag.
fn status_not_from_a_code(text: &str) -> Vec<String> {
    const NEEDLES: &[&str] = &[
        "Exit::Retryable",
        "Exit::Invalid",
        "ExitClass::",
        "Exit::judged",
        "retryable: true",
        "retryable: false",
        "transient: true",
        "transient: false",
    ];
    text.lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .filter(|line| NEEDLES.iter().any(|n| line.contains(n)))
        .map(str::to_owned)
        .collect()
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in fs_err::read_dir(dir).expect("read_dir") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

// The page's claim, kept: the binary takes a failing command's status from its code and nowhere
// else. Outside `cli/exit.rs` (the one place that maps a code's class to a status), no command
// names a status class or sets a retryable flag by hand.
#[test]
fn the_binary_takes_a_status_from_codes_and_nowhere_else() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/cli");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    assert!(files.len() > 10, "{files:?}");
    let mut wrong = Vec::new();
    for file in files.iter().filter(|f| !f.ends_with("cli/exit.rs")) {
        let text = fs_err::read_to_string(file).expect("read");
        for line in status_not_from_a_code(&text) {
            wrong.push(format!("{}: {}", file.display(), line.trim()));
        }
    }
    assert!(
        wrong.is_empty(),
        "statuses not from a code:\n{}",
        wrong.join("\n")
    );
    // The check itself refuses what it looks for.
    let hostile = "    return Exit::Retryable;\n    // Exit::Invalid in a comment\n    let e = SourceError { retryable: true };\n";
    assert_eq!(status_not_from_a_code(hostile).len(), 2);
}
