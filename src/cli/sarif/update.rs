//! The SARIF log of `update --format sarif`: a descriptor that cannot be used, a source that
//! fails (at the descriptor, where the source is written), and each approved bundle's findings
//! and refusals at its folder in the target commit or image, one base per source (`REPOROOT`, or
//! `REPOROOT1`, `REPOROOT2`, … for several).

use std::path::Path;

use crate::format::sarif::{Entry, Log, Place};
use crate::ops::update::{UpdateError, UpdateReport};
use crate::support::error_code::Coded as _;
use crate::support::escape;

use super::{REPO_ROOT, check_error, descriptor, level, line_entry, repository};

/// The log of an update that could not start (`config`: the descriptor's path).
pub fn failed(config: &Path, e: &UpdateError) -> Log {
    let mut log = Log::new();
    match e {
        UpdateError::Check(e) => check_error(&mut log, config, e),
        other => {
            let place = descriptor(&mut log, config);
            for line in other.lines() {
                log.push(line_entry(&line, other.error_code()).at(place.clone()));
            }
        }
    }
    log
}

/// The log of an update's review.
pub fn reviewed(config: &Path, report: &UpdateReport) -> Log {
    let mut log = Log::new();
    let at_descriptor = descriptor(&mut log, config);
    let several = report.sources.len() > 1;
    for (n, source) in report.sources.iter().enumerate() {
        let base = if several {
            format!("{REPO_ROOT}{}", n + 1)
        } else {
            REPO_ROOT.to_owned()
        };
        let target = source.to.as_deref().unwrap_or(&source.target);
        repository(&mut log, &base, &source.id.url, target);
        let at = escape::text(&source.id.location).to_string();
        if let Some(error) = &source.error {
            let message = format!("{at}: {}: {}", escape::text(&source.id.url), error.message);
            let entry = Entry::new(error.code, level(error.code), message);
            log.push(entry.at(at_descriptor.clone()));
        }
        for bundle in &source.bundles {
            // The bundle rules' own problems carry their places; the other refusals (a folder
            // that is gone, a version, the pin check) are at the bundle's folder.
            if !bundle.found.iter().any(|p| p.is_error()) {
                let place = Place::file(&base, format!("{}/", bundle.folder));
                let fallback = crate::source::code::PrepareCode::VerificationFailed.into();
                for line in &bundle.problems {
                    log.push(line_entry(line, fallback).at(place.clone()));
                }
            }
            log.problems(&bundle.found, &base, &bundle.folder);
        }
    }
    if let Some(error) = &report.rewrite_error {
        let entry = Entry::new(error.code, level(error.code), error.message.clone());
        log.push(entry.at(at_descriptor));
    }
    log
}
