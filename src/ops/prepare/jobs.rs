//! The jobs of `prepare`: one per local source, per distinct (URL, commit) of the Git sources and
//! per distinct image of the OCI sources, run up to `concurrency` at a time; their reports, put
//! back in descriptor order, make the [`PrepareReport`].

use std::collections::HashMap;
use std::sync::atomic::AtomicUsize;
use std::time::Instant;

use crate::descriptor::plan::{GitSource, LocalSource, OciSource, Plan, Source};

use super::{Options, PrepareReport, SourceReport, git, oci, verify_local};

/// Prepares every source of `plan`: each local source, and each distinct (URL, commit) of the
/// Git sources, is one job; up to `concurrency` jobs run at once. Sources whose corpus
/// directories are one folder on disk are not prepared: each fails with `shared_directory`
/// ([`super::shared_directories`]).
pub fn prepare(plan: &Plan, options: &Options<'_>) -> PrepareReport {
    let started = Instant::now();
    let fetches = AtomicUsize::new(0);
    let refused = super::shared_directories(plan, true);
    let jobs = jobs(&plan.sources, |index| refused.contains_key(&index));
    let done = crate::support::parallel::map(&jobs, options.concurrency, |job| match job {
        Job::Local(index, local) => vec![(*index, verify_local(local, options))],
        Job::Commit(sources) => git::prepare_commit(sources, options, &fetches),
        Job::Image(sources) => oci::prepare_image(sources, options, &fetches),
    });
    let mut sources: Vec<(usize, SourceReport)> = done.into_iter().flatten().collect();
    for (index, failure) in refused {
        let mut report = match &plan.sources[index] {
            Source::Git(git) => SourceReport::git(git),
            Source::Oci(oci) => SourceReport::oci(oci),
            // Only corpus sources are compared.
            Source::Local(_) => continue,
        };
        report.fail(failure, options);
        sources.push((index, report));
    }
    sources.sort_by_key(|(index, _)| *index);
    PrepareReport {
        sources: sources.into_iter().map(|(_, report)| report).collect(),
        fetches: fetches.into_inner(),
        duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
    }
}

/// A unit of work of `prepare`, with the descriptor index of each source it reports on.
enum Job<'a> {
    /// One local source.
    Local(usize, &'a LocalSource),
    /// Every Git source that pins one (URL, commit).
    Commit(Vec<(usize, &'a GitSource)>),
    /// Every OCI source that pins one image (repository, digest, transport).
    Image(Vec<(usize, &'a OciSource)>),
}

/// One job per local source, per distinct (URL, commit) and per distinct image, in order of
/// first appearance; the sources `skipped` says are left out.
fn jobs(sources: &[Source], skipped: impl Fn(usize) -> bool) -> Vec<Job<'_>> {
    let mut jobs: Vec<Job<'_>> = Vec::new();
    let mut by_commit: HashMap<(&str, &str, crate::descriptor::Links), usize> = HashMap::new();
    let mut by_image: HashMap<(String, String, bool), usize> = HashMap::new();
    for (index, source) in sources.iter().enumerate().filter(|(i, _)| !skipped(*i)) {
        match source {
            Source::Local(local) => jobs.push(Job::Local(index, local)),
            Source::Oci(oci) => {
                let key = (
                    oci.repository(),
                    oci.reference.digest.clone(),
                    oci.plain_http,
                );
                match by_image.get(&key) {
                    Some(&job) => {
                        if let Job::Image(sources) = &mut jobs[job] {
                            sources.push((index, oci));
                        }
                    }
                    None => {
                        by_image.insert(key, jobs.len());
                        jobs.push(Job::Image(vec![(index, oci)]));
                    }
                }
            }
            Source::Git(git) => {
                // Sources under different links policies never share a fetch: the policy
                // decides what the fetch refuses.
                let key = (git.url.as_str(), git.revision.as_str(), git.links);
                match by_commit.get(&key) {
                    Some(&job) => {
                        if let Job::Commit(sources) = &mut jobs[job] {
                            sources.push((index, git));
                        }
                    }
                    None => {
                        by_commit.insert(key, jobs.len());
                        jobs.push(Job::Commit(vec![(index, git)]));
                    }
                }
            }
        }
    }
    jobs
}
