//! `skillfold schema`: write the JSON Schemas.

use std::path::PathBuf;

use crate::format::escape;
use clap::Args;

use crate::cli::exit::Exit;

/// Write the JSON Schemas: the descriptor, every tool's input and output, the error object and
/// the host record.
///
/// Without `--out`, prints the descriptor's schema on stdout. With `--out DIR`, writes every
/// schema into DIR (as committed under `schemas/` in the repository; a test fails when those
/// are stale).
#[derive(Debug, Args)]
pub struct SchemaArgs {
    /// Write every schema into this directory.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
}

pub fn run(args: SchemaArgs) -> Exit {
    let schemas = crate::ops::schema::all();
    let Some(dir) = args.out else {
        return match schemas.first() {
            Some((_, schema)) => crate::cli::output::print(&crate::ops::schema::render(schema)),
            None => Exit::Ok,
        };
    };
    if let Err(e) = fs_err::create_dir_all(&dir) {
        diag!("error: {e}");
        return Exit::Retryable;
    }
    for (name, schema) in &schemas {
        let path = dir.join(name);
        if let Err(e) = fs_err::write(&path, crate::ops::schema::render(schema)) {
            diag!("error: {e}");
            return Exit::Retryable;
        }
        diag!("wrote {}", escape::path(&path));
    }
    Exit::Ok
}
