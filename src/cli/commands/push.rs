//! `skillfold push`: verified bundles as one OCI image.

use std::path::PathBuf;

use clap::Args;

use super::config::ConfigArg;
use crate::cli::exit::{self, Exit};
use crate::ops::push::{PushError, PushOptions, push};
use crate::prepare::oci::image::Platform;

/// Put every approved bundle (or one agent's) into one OCI image, verified first.
///
/// Loads each approved bundle as the runtime does — from the prepared corpora and local sources,
/// with the safe reader, every rule and the pin — and builds one image from the verified bytes:
/// one gzip tar layer per bundle holding `<name>/…` (files 0444, directories 0555, owner 0,
/// time 0, sorted), annotated with the bundle's name, version and digest, and a standard image
/// config, so container runtimes and Kubernetes image volumes can mount it. The same bundles give
/// the same image digest on any machine; a bundle shared by two images is the same layer.
///
/// `--oci-layout DIR` writes the image into an OCI image layout (created, or added to), for
/// `skopeo copy oci:DIR docker://…` or an air-gapped transfer. The last stdout line is the image
/// pinned by digest, `DIR@sha256:…`; an `oci:` source pins that digest.
///
/// Exit status: 0 written; 1 the image could not be written, or a bundle could not be read (an
/// I/O error); 2 a bundle that does not verify, a conflict, a bad descriptor (nothing written).
#[derive(Debug, Args)]
pub struct PushArgs {
    #[command(flatten)]
    config: ConfigArg,

    /// Write the image into this OCI image layout directory.
    #[arg(long, value_name = "DIR")]
    oci_layout: PathBuf,

    /// Name the image TAG in the layout's index (`org.opencontainers.image.ref.name`).
    #[arg(long, value_name = "TAG")]
    tag: Option<String>,

    /// Only this agent's skills (the defaults plus its extras).
    #[arg(long, value_name = "NAME")]
    agent: Option<String>,

    /// The platform recorded in the image config, OS/ARCH (the bundles are the same on every
    /// platform; some runtimes want the node's).
    #[arg(long, value_name = "OS/ARCH", default_value = "linux/amd64", value_parser = parse_platform)]
    platform: Platform,

    /// Print the report as JSON on stdout.
    #[arg(long)]
    json: bool,
}

fn parse_platform(value: &str) -> Result<Platform, String> {
    let token =
        |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    match value.split_once('/') {
        Some((os, arch)) if token(os) && token(arch) => Ok(Platform {
            os: os.to_owned(),
            architecture: arch.to_owned(),
        }),
        _ => Err("expected OS/ARCH, e.g. linux/arm64".to_owned()),
    }
}

pub fn run(args: PushArgs) -> Exit {
    let plan = match args.config.plan() {
        Ok(plan) => plan,
        Err(exit) => return exit,
    };
    let options = PushOptions {
        agent: args.agent,
        layout: args.oci_layout,
        tag: args.tag,
        platform: args.platform,
    };
    match push(plan, &options) {
        Ok(report) => {
            for b in &report.bundles {
                diag!(
                    "ok: {} {} ({}): layer {}, {} bytes",
                    b.name,
                    b.version,
                    b.hash,
                    b.layer,
                    b.size
                );
            }
            if args.json {
                crate::cli::output::print_json(&report)
            } else {
                let shown = crate::format::escape::path(&report.layout);
                crate::cli::output::print(&format!("{shown}@{}\n", report.digest))
            }
        }
        Err(e) => {
            if let PushError::NotVerified(failures) = &e {
                for f in failures {
                    diag!("error: {}: {} [{}]", f.location, f.reason, f.code);
                    for d in &f.details {
                        diag!("  {d}");
                    }
                }
            }
            let code = e.code();
            diag!("error: {e} [{code}]");
            exit::of(code)
        }
    }
}
