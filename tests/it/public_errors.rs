//! Every public error implements `Coded`, as `src/lib.rs` and `skillfold::codes` promise: each
//! error type the crate root or the prelude exports is in [`coded`] (which only compiles for types
//! that implement it), and the errors that lacked it until issue 34 report the codes their call
//! sites report. Every public error enum is `#[non_exhaustive]`, so a variant can be added.

use std::path::Path;

use skillfold::codes::{Coded, ExitClass};

/// Names the types, and fails to compile if one of them does not implement `Coded`.
macro_rules! coded {
    ($($ty:ident),* $(,)?) => {{
        fn is_coded<T: Coded + ?Sized>() {}
        $(is_coded::<skillfold::$ty>();)*
        &[$(stringify!($ty)),*]
    }};
}

/// Every error type the crate root exports, each checked to implement `Coded`.
fn coded() -> &'static [&'static str] {
    coded!(
        BuildError,
        BundleError,
        BundleReadError,
        CatalogueError,
        DescriptorError,
        DigestMismatch,
        DigestParseError,
        FileReadError,
        InvalidBundle,
        LimitsError,
        LoadFailure,
        OpenError,
        PathRefusal,
        SkillNameError,
        SyntaxError,
        ToolError,
        VerifyError,
        VersionError,
    )
}

/// One exported error type: where it is exported, its module, its name there and its name at the
/// root.
struct Exported {
    file: &'static str,
    module: String,
    defined: String,
    exported: String,
}

impl std::fmt::Display for Exported {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Exported {
            file,
            module,
            defined,
            exported,
        } = self;
        write!(f, "{file}: `{exported}` ({module}::{defined})")
    }
}

/// Every error type `src/lib.rs` and `src/prelude.rs` export.
fn exported_errors(root: &Path) -> Vec<Exported> {
    let mut errors = Vec::new();
    for file in ["src/lib.rs", "src/prelude.rs"] {
        let text = fs_err::read_to_string(root.join(file)).expect("read the exports");
        for (module, defined, exported) in exports(&text) {
            if is_error(root, &module, &defined) {
                errors.push(Exported {
                    file,
                    module,
                    defined,
                    exported,
                });
            }
        }
    }
    assert!(
        errors.len() > 10,
        "found only {} exported errors",
        errors.len()
    );
    errors
}

#[test]
fn every_exported_error_is_coded() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let coded = coded();
    let missing: Vec<String> = exported_errors(root)
        .iter()
        .filter(|e| !coded.contains(&e.exported.as_str()))
        .map(ToString::to_string)
        .collect();
    assert!(
        missing.is_empty(),
        "public errors without `Coded` (implement it and add them to `coded()`):\n{}",
        missing.join("\n")
    );
}

#[test]
fn every_exported_error_enum_is_non_exhaustive() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut exhaustive = Vec::new();
    for error in exported_errors(root) {
        // The first definition: the module's own file before its children.
        let module = root.join("src").join(error.module.replace("::", "/"));
        let found = definitions(&module, &error.defined);
        let Some((text, at)) = found.first() else {
            continue;
        };
        let is_enum = text
            .lines()
            .nth(*at)
            .is_some_and(|l| l.contains("pub enum "));
        if is_enum
            && !attributes(text, *at)
                .iter()
                .any(|l| l.contains("non_exhaustive"))
        {
            exhaustive.push(error.to_string());
        }
    }
    assert!(
        exhaustive.is_empty(),
        "public error enums without `#[non_exhaustive]`:\n{}",
        exhaustive.join("\n")
    );
}

#[test]
fn the_errors_report_their_call_sites_codes() {
    use skillfold::{BundleDigest, BundlePath, Limits, SkillName, VersionLabel};

    let code = |e: &dyn Coded| e.error_code().as_str();

    // `Runtime::open`'s own error: the loader's code, or the worst problem's.
    let unreadable = skillfold::Runtime::open("/nowhere/skillfold.yaml").unwrap_err();
    assert_eq!(code(&unreadable), "descriptor_unreadable");
    let build = skillfold::Runtime::builder()
        .local("x", "1", "/nowhere", "not-a-digest")
        .build()
        .unwrap_err();
    assert_eq!(code(&build), "invalid_hash");
    assert_eq!(code(&skillfold::OpenError::from(build)), "invalid_hash");

    let unknown = Limits::named("huge").unwrap_err();
    assert_eq!(code(&unknown), "invalid_limits");
    let over = Limits::from_keys([("files", "100000")]).unwrap_err();
    assert_eq!(code(&over), "limits_over_ceiling");

    let changed = skillfold::FileReadError::Changed {
        path: "references/a.md".into(),
        expected: "0".repeat(64),
        found: "1".repeat(64),
    };
    assert_eq!(code(&changed), "reference_changed");

    let digest = |c: &str| c.repeat(64).parse::<BundleDigest>().unwrap();
    let mismatch = skillfold::DigestMismatch {
        dir: "/srv/skills/pdf".into(),
        name: "pdf".into(),
        expected: digest("0"),
        actual: digest("1"),
        changed: Vec::new(),
    };
    assert_eq!(code(&mismatch), "digest_mismatch");

    assert_eq!(
        code(&BundlePath::parse("../x").unwrap_err()),
        "path_escapes"
    );
    assert_eq!(code(&BundlePath::parse(".env").unwrap_err()), "hidden_path");
    assert_eq!(
        code(&"PDF Tools".parse::<SkillName>().unwrap_err()),
        "name_invalid"
    );
    let rolling = VersionLabel::parse("latest").unwrap_err();
    assert_eq!(code(&rolling), "version_rolling");
    assert!(rolling.to_string().ends_with("[version_rolling]"));

    // Each is a refused input, not a transient failure.
    for e in [&unknown as &dyn Coded, &over, &changed, &mismatch, &rolling] {
        assert_eq!(e.exit_class(), ExitClass::Invalid);
    }
}

/// `(module, name defined, name exported)` of every type a file re-exports with `pub use`.
fn exports(text: &str) -> Vec<(String, String, String)> {
    let mut statements = Vec::new();
    let mut open: Option<String> = None;
    for line in text.lines().map(str::trim) {
        // A `use` may span lines: join it up to its `;`.
        let statement = match open.take() {
            Some(start) => start + " " + line,
            None if line.starts_with("pub use ") => line.to_owned(),
            None => continue,
        };
        match statement.strip_suffix(';') {
            Some(done) => statements.push(done["pub use ".len()..].to_owned()),
            None => open = Some(statement),
        }
    }
    let mut found = Vec::new();
    for path in &statements {
        let path = path.trim_start_matches("crate::");
        let (module, names) = match path.split_once("::{") {
            Some((module, names)) => (module, names.trim_end_matches('}')),
            None => path.rsplit_once("::").unwrap_or(("", path)),
        };
        for name in names.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            let (defined, exported) = name.split_once(" as ").unwrap_or((name, name));
            // Types only: a constant or function is not an error.
            if defined.starts_with(|c: char| c.is_ascii_uppercase())
                && defined.chars().any(|c| c.is_ascii_lowercase())
            {
                found.push((module.to_owned(), defined.to_owned(), exported.to_owned()));
            }
        }
    }
    found
}

/// Whether `name`, defined in (or below) `module`, is an error: named as one, deriving
/// `thiserror::Error` or implementing `std::error::Error`.
fn is_error(root: &Path, module: &str, name: &str) -> bool {
    let named = ["Error", "Refusal", "Mismatch", "Failure"]
        .iter()
        .any(|s| name.ends_with(s));
    named
        || definitions(&root.join("src").join(module.replace("::", "/")), name)
            .iter()
            .any(|(file, at)| derives_error(file, *at, name))
}

/// `(file text, line)` of every `pub struct NAME` / `pub enum NAME` in the module's file or folder.
fn definitions(module: &Path, name: &str) -> Vec<(String, usize)> {
    let mut files = vec![module.with_extension("rs")];
    let mut folders = vec![module.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in fs_err::read_dir(&folder).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    let mut found = Vec::new();
    for file in files {
        let Ok(text) = fs_err::read_to_string(&file) else {
            continue;
        };
        for (at, line) in text.lines().enumerate() {
            let line = line.trim_start();
            let rest = line
                .strip_prefix("pub struct ")
                .or_else(|| line.strip_prefix("pub enum "));
            if rest.is_some_and(|r| {
                r.strip_prefix(name)
                    .is_some_and(|after| after.starts_with([' ', '{', '(', '<', ';']))
            }) {
                found.push((text.clone(), at));
            }
        }
    }
    found
}

/// Whether the attributes above line `at` derive `thiserror::Error`, or the file implements
/// `std::error::Error` for `name`.
fn derives_error(text: &str, at: usize, name: &str) -> bool {
    attributes(text, at)
        .iter()
        .any(|l| l.contains("thiserror::Error"))
        || text.contains(&format!("Error for {name} "))
        || text.contains(&format!("Error for {name}{{"))
}

/// The doc comments and attributes above line `at`, nearest first.
fn attributes(text: &str, at: usize) -> Vec<&str> {
    let lines: Vec<&str> = text.lines().collect();
    lines[..at]
        .iter()
        .rev()
        .take_while(|l| {
            let l = l.trim_start();
            !(l.is_empty() || l.starts_with('}') || l.ends_with(';') && !l.starts_with("//"))
        })
        .copied()
        .collect()
}
