//! `skillfold push`: verified bundles as one OCI image.

use std::path::PathBuf;

use clap::Args;

use super::config::ConfigArg;
use crate::cli::exit::{self, Exit};
use crate::ops::push::{PushError, PushOptions, PushTarget, push};
use crate::runtime::catalogue::CatalogueError;
use crate::source::oci::image::Platform;

/// Put every approved bundle (or one agent's) into one OCI image, verified first.
///
/// Loads each approved bundle as the runtime does — from the prepared corpora and local sources,
/// with the safe reader, every rule and the pin — and builds one image from the verified bytes:
/// one gzip tar layer per bundle holding `<name>/…` (files 0444, directories 0555, owner 0,
/// time 0, sorted), annotated with the bundle's name, version and digest, and a standard image
/// config, so container runtimes and Kubernetes image volumes can mount it. The same bundles give
/// the same image digest on any machine; a bundle shared by two images is the same layer.
///
/// `--to REGISTRY/REPOSITORY[:TAG]` pushes it (blobs the registry lacks, then the manifest's exact
/// bytes); `--oci-layout DIR` writes it into an OCI image layout instead (created, or added to),
/// for an air-gapped transfer with standard tools. The last stdout line is the image pinned by
/// digest, `REGISTRY/REPOSITORY@sha256:…` (or `DIR@sha256:…`).
///
/// Exit status: 0 pushed; 1 the registry is down or failing, the image could not be written, or
/// a bundle could not be read (an I/O error); 2 a bundle that does not verify, refused
/// credentials, a bad descriptor (nothing pushed).
#[derive(Debug, Args)]
pub struct PushArgs {
    #[command(flatten)]
    config: ConfigArg,

    /// Push the image to this registry repository, e.g. `registry.example.com/platform/skills:v3`
    /// (HTTPS; credentials from SKILLFOLD_REGISTRY_AUTH=USER:PASSWORD or Docker's config.json).
    #[cfg(feature = "oci")]
    #[arg(long, value_name = "REGISTRY/REPOSITORY[:TAG]", required_unless_present = "oci_layout",
          conflicts_with = "oci_layout", value_parser = crate::distribution::registry::Destination::parse)]
    to: Option<crate::distribution::registry::Destination>,

    /// Speak HTTP to the registry instead of HTTPS (a registry on a trusted network or loopback).
    #[cfg(feature = "oci")]
    #[arg(long, requires = "to")]
    plain_http: bool,

    /// Write the image into this OCI image layout directory instead.
    #[arg(long, value_name = "DIR")]
    oci_layout: Option<PathBuf>,

    /// Name the image TAG in the layout's index (`org.opencontainers.image.ref.name`).
    #[arg(long, value_name = "TAG", requires = "oci_layout")]
    tag: Option<String>,

    /// Only this agent's skills (the defaults plus its extras).
    #[arg(long, value_name = "NAME")]
    agent: Option<String>,

    /// The platform recorded in the image config, OS/ARCH (the bundles are the same on every
    /// platform; some runtimes want the node's).
    #[arg(long, value_name = "OS/ARCH", default_value = "linux/amd64", value_parser = parse_platform)]
    platform: Platform,

    /// Sign the pushed image with this cosign private key, as `cosign sign --key FILE` does: the
    /// signature goes to the image's `sha256-<hex>.sig` tag (cosign's v2 layout, which every cosign
    /// verifies), appended to the signatures already there. FILE is what `cosign
    /// generate-key-pair` writes (an `ENCRYPTED SIGSTORE PRIVATE KEY`, or the older `ENCRYPTED
    /// COSIGN PRIVATE KEY`; its password from COSIGN_PASSWORD, which may be empty but must be
    /// set), or an unencrypted PKCS#8 `PRIVATE KEY`; ECDSA P-256 only. The key is read before
    /// anything is pushed; a key that cannot sign (a wrong password too) is `sign_key_refused`.
    /// Registry only (`--to`): with `--oci-layout` it is refused (`sign_key_refused`, nothing
    /// written), as a layout has no tag for the signature; sign it with cosign once it is copied
    /// to a registry.
    #[cfg(feature = "oci")]
    #[arg(long, value_name = "FILE")]
    sign_key: Option<PathBuf>,

    /// Print the report as JSON on stdout.
    #[arg(long)]
    json: bool,
}

// A String: clap's value parser shows it to the operator with the flag; nothing matches it.
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
    let target = match args.oci_layout {
        Some(dir) => PushTarget::Layout { dir, tag: args.tag },
        #[cfg(feature = "oci")]
        None => match args.to {
            Some(destination) => PushTarget::Registry {
                destination,
                plain_http: args.plain_http,
            },
            // The parser requires one of them; said and refused all the same.
            None => {
                let code = crate::codes::CommandCode::InvalidUsage;
                diag!("error: give --oci-layout DIR or --to REGISTRY/REPOSITORY [{code}]");
                return exit::of(code);
            }
        },
        #[cfg(not(feature = "oci"))]
        None => {
            let code = crate::source::oci::code::DistributionCode::OciDisabled;
            diag!(
                "error: this build has no registry client (built without the `oci` feature); give --oci-layout DIR [{code}]"
            );
            return exit::of(code);
        }
    };
    // Refused here, before the key is read (its password is not asked for nothing).
    #[cfg(feature = "oci")]
    if args.sign_key.is_some() && matches!(target, PushTarget::Layout { .. }) {
        let e = PushError::SignLayout;
        let code = e.code();
        diag!("error: {e}; nothing was written [{code}]");
        return exit::of(code);
    }
    #[cfg(feature = "oci")]
    let sign_key = match &args.sign_key {
        Some(path) => {
            use std::os::unix::ffi::OsStringExt;
            // As cosign reads it: set (even empty) is the password; unset is refused.
            let password = std::env::var_os("COSIGN_PASSWORD").map(OsStringExt::into_vec);
            match crate::trust::keys::signing_key::SigningKey::read(path, password.as_deref()) {
                Ok(key) => Some(std::sync::Arc::new(key)),
                Err(e) => {
                    let code = crate::source::oci::code::DistributionCode::SignKeyRefused;
                    diag!("error: {e}; nothing was pushed [{code}]");
                    return exit::of(code);
                }
            }
        }
        None => None,
    };
    let options = PushOptions {
        agent: args.agent,
        target,
        platform: args.platform,
        #[cfg(feature = "oci")]
        sign_key,
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
            #[cfg(feature = "oci")]
            if let Some(signature) = &report.signature {
                let state = if signature.already_signed {
                    "already signed by this key"
                } else {
                    "signature pushed"
                };
                diag!(
                    "ok: {state}: {} (key {})",
                    crate::support::escape::text(&signature.reference),
                    signature.key
                );
            }
            if args.json {
                crate::cli::output::print_json(&report)
            } else {
                let shown = crate::support::escape::text(&report.reference);
                crate::cli::output::print(&format!("{shown}\n"))
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
            if matches!(&e, PushError::Catalogue(CatalogueError::Conflict { .. }))
                && options.agent.is_none()
            {
                diag!(
                    "hint: agents may each pin their own bundle under one name; push one agent's set with `--agent NAME`"
                );
            }
            exit::of(code)
        }
    }
}
