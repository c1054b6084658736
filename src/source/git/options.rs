//! The options every connection of a fetch runs under: a throwaway bare repository opened
//! isolated from the user's Git configuration except the credential helpers (and an askpass
//! program, when one is set), no object larger than [`MAX_OBJECT_BYTES`] inflated, and every
//! HTTP(S) request ending by the fetch's deadline ([`transport_options`]). [`Stops`] is what
//! ends a fetch early — a signal, that deadline, or an error the server reports on its
//! side-band ([`note_server_error`]) — and [`with_connection`] connects a
//! repository under all of it through [`super::transport`].

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::answer::AnswerRefusalSlot;
use super::transport;

/// The largest object (blob, tree, commit) a fetch accepts, inflated: 100 MiB, the largest
/// file GitHub accepts in a repository.
pub const MAX_OBJECT_BYTES: u64 = 100 * 1024 * 1024;

/// The instant `deadline` from now (far in the future if that cannot be represented).
pub(super) fn until(deadline: Duration) -> Instant {
    let now = Instant::now();
    now.checked_add(deadline)
        .unwrap_or_else(|| now + Duration::from_secs(100 * 365 * 24 * 3600))
}

/// What stops a fetch: a signal, or its deadline.
pub(super) struct Stops<'a> {
    /// Set by SIGINT/SIGTERM.
    pub(super) interrupt: &'a AtomicBool,
    /// When the deadline passes.
    pub(super) until: Instant,
    /// The deadline, as given.
    pub(super) deadline: Duration,
    /// The flag gix polls, set by the watcher when either happens.
    pub(super) stop: &'a AtomicBool,
    /// The first answer of the server refused for a bound, if any.
    pub(super) refused: AnswerRefusalSlot,
    /// The first error the server reported on its side-band (channel 3), if any.
    pub(super) server_error: ServerErrorSlot,
}

/// Where the first error a server reports on its side-band (channel 3) is kept. gix hands such
/// a message to the fetch's progress as a failure and reads on; [`note_server_error`] finds it
/// there, keeps it here and stops the fetch.
#[derive(Debug, Clone, Default)]
pub(super) struct ServerErrorSlot(Arc<Mutex<Option<String>>>);

/// Looks for an error the server reported among the messages of the fetch's progress `root`
/// (gix sends nothing else there as a failure): if there is one, keeps the first in `stops`
/// and sets the flag gix polls, so that the fetch stops. Whether there was one.
pub(super) fn note_server_error(
    root: &gix::progress::prodash::tree::Root,
    stops: &Stops<'_>,
) -> bool {
    use gix::progress::prodash::messages::MessageLevel;
    if stops.server_error().is_some() {
        return true;
    }
    let mut messages = Vec::new();
    root.copy_messages(&mut messages);
    let Some(first) = messages
        .into_iter()
        .find(|m| m.level == MessageLevel::Failure)
    else {
        return false;
    };
    let message = first.message.trim_end_matches(['\n', '\r']).to_owned();
    let mut slot = stops
        .server_error
        .0
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    slot.get_or_insert(message);
    stops.stop.store(true, Ordering::Relaxed);
    true
}

impl Stops<'_> {
    pub(super) fn past_deadline(&self) -> bool {
        Instant::now() >= self.until
    }

    /// The first error the server reported on its side-band, if any.
    pub(super) fn server_error(&self) -> Option<String> {
        self.server_error
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    pub(super) fn interrupted(&self) -> bool {
        self.interrupt.load(Ordering::Relaxed) || self.stop.load(Ordering::Relaxed)
    }
}

/// How often a wait looks at the signal flag (the fetch's watcher, the redirect follower).
pub(super) const POLL_EVERY: Duration = Duration::from_millis(50);

/// A new, minimal bare repository at `git_dir`, opened.
pub(super) fn scratch_repository(git_dir: &Path) -> gix::Result<gix::Repository> {
    init_bare(git_dir).map_err(gix::Error::from_error)?;
    gix::open_opts(git_dir, open_options()).map_err(gix::Error::from_error)
}

/// Connects `repo` to `url` for fetching with the refspecs `refspecs` (no tags), with this
/// crate's transport options (every HTTP(S) request ending by the deadline of `stops`, every
/// answer bounded: [`transport::connect`]), and hands the connection to `use_it`.
pub(super) fn with_connection<T>(
    repo: &gix::Repository,
    url: &str,
    refspecs: &[&str],
    stops: &Stops<'_>,
    use_it: impl FnOnce(transport::Connection<'_, '_>) -> gix::Result<T>,
) -> gix::Result<T> {
    use gix::remote::Direction;

    let remote = repo
        .remote_at(url)
        .map_err(gix::Error::from_error)?
        .with_fetch_tags(gix::remote::fetch::Tags::None)
        .with_refspecs(refspecs.iter().copied(), Direction::Fetch)
        .map_err(gix::Error::from_error)?;
    let mut connection = transport::connect(&remote, stops.until, &stops.refused)?;
    if let Some(options) = transport_options(repo, url, stops.until)? {
        connection.set_transport_options(options);
    }
    use_it(connection)
}

/// A bare repository with nothing but what Git needs to open it: `HEAD`, `config`, `objects/`
/// and `refs/`. `git_dir` must not exist; its parent must.
fn init_bare(git_dir: &Path) -> std::io::Result<()> {
    fs_err::create_dir(git_dir)?;
    for dir in ["objects", "objects/pack", "refs"] {
        fs_err::create_dir(git_dir.join(dir))?;
    }
    fs_err::write(git_dir.join("HEAD"), "ref: refs/heads/main\n")?;
    fs_err::write(
        git_dir.join("config"),
        "[core]\n\trepositoryformatversion = 0\n\tbare = true\n",
    )
}

/// The transport options for `url`: the repository's own, with every HTTP(S) request given a
/// timeout of what remains until `until` — reqwest applies it to the whole request, its body
/// included, which its idle timeouts never do — and a plain `http://` URL an HTTP client with
/// an empty set of certificate roots. Building the default client reads and parses every system
/// root certificate (milliseconds on each run) for a connection that never uses TLS. Because
/// every request is configured, gix follows no redirect of these connections: the callers
/// follow them with [`super::redirect::redirect_target`] (which loads the roots should a plain-HTTP server
/// redirect to `https://`).
pub(super) fn transport_options(
    repo: &gix::Repository,
    url: &str,
    until: Instant,
) -> gix::Result<Option<Box<dyn std::any::Any>>> {
    use gix::protocol::transport::client::blocking_io::http;

    let Some(mut options) = repo.transport_options(url, None)? else {
        return Ok(None);
    };
    if let Some(options) = options.downcast_mut::<http::Options>() {
        let mut client = http::reqwest::Options::default();
        if is_plain_http(url) {
            client.configure_client = Some(Box::new(|builder| Ok(builder.tls_certs_only([]))));
        }
        client.configure_request = Some(Box::new(move |request| {
            // Past the deadline a request still gets a moment, to fail as timed out.
            let left = until.saturating_duration_since(Instant::now());
            *request.timeout_mut() = Some(left.max(Duration::from_millis(1)));
            Ok(())
        }));
        options.backend = Some(std::sync::Arc::new(std::sync::Mutex::new(client)));
    }
    Ok(Some(options))
}

/// Isolated options plus exactly the authentication settings we carry over.
///
/// gix treats `GIT_ASKPASS` as a kind of prompt: with terminal prompts disabled it is not asked
/// either. So prompts stay enabled only when an askpass program is configured (it answers instead
/// of the terminal); otherwise they are disabled and a missing credential fails at once.
fn open_options() -> gix::open::Options {
    let mut overrides: Vec<String> =
        vec![format!("gitoxide.objects.allocLimit={MAX_OBJECT_BYTES}")];
    for helper in user_credential_helpers() {
        overrides.push(format!("credential.helper={helper}"));
    }
    match std::env::var_os("GIT_ASKPASS").or_else(|| std::env::var_os("SSH_ASKPASS")) {
        Some(askpass) if !askpass.is_empty() => {
            overrides.push(format!("core.askPass={}", askpass.to_string_lossy()));
        }
        _ => overrides.push("gitoxide.credentials.terminalPrompt=false".to_owned()),
    }
    gix::open::Options::isolated().config_overrides(overrides)
}

/// The `credential.helper` entries of the system, XDG and user Git configuration (honouring
/// `GIT_CONFIG_SYSTEM`, `GIT_CONFIG_NOSYSTEM` and `GIT_CONFIG_GLOBAL`), read directly from those
/// files — nothing else of them is used.
fn user_credential_helpers() -> Vec<String> {
    use gix::config::Source;
    let files = [Source::System, Source::Git, Source::User]
        .into_iter()
        .filter_map(|source| {
            let path = source.storage_location(&mut gix::path::env::var)?;
            if !path.is_file() {
                return None;
            }
            Some(gix::config::file::Metadata {
                path: Some(path),
                source,
                level: 0,
                trust: gix::sec::Trust::Full,
            })
        });
    gix::config::File::from_paths_metadata(files, Default::default())
        .ok()
        .flatten()
        .and_then(|config| config.strings("credential.helper"))
        .map(|helpers| helpers.iter().map(ToString::to_string).collect())
        .unwrap_or_default()
}

/// Whether `url` is a plain `http://` URL.
pub(super) fn is_plain_http(url: &str) -> bool {
    url.get(..7)
        .is_some_and(|s| s.eq_ignore_ascii_case("http://"))
}
