//! `skillfold schema`: write the JSON Schemas.

use std::path::PathBuf;

use crate::support::escape;
use clap::Args;

use crate::cli::exit::{self, Exit};
use crate::codes::CommandCode;

/// Write the JSON Schemas: the descriptor, every tool's input and output, the error object and
/// the host record.
///
/// Without `--out`, prints the descriptor's schema on stdout. With `--out DIR`, writes every
/// schema into DIR (as committed under `schemas/` in the repository; a test fails when those
/// are stale), each as a new file renamed into place: a symbolic link at a schema's name, or at
/// DIR itself, is never followed.
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
    // Beneath the directory, never through a link (`ops::schema::write_all`).
    match crate::ops::schema::write_all(&dir) {
        Ok(written) => {
            for path in &written {
                diag!("wrote {}", escape::path(path));
            }
            Exit::Ok
        }
        Err(e) => {
            let code = CommandCode::SchemaWriteFailed;
            diag!("error: {} [{code}]", escape::text(&e.to_string()));
            exit::of(code)
        }
    }
}
