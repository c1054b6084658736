//! `pin --write`: the reviewed entry appended to the descriptor, in place.
//!
//! The entry goes to the defaults' `skills`, or to an agent's (`--agent`; the agent, its
//! `skills` and `agents:` are made when missing). When the list already holds a Git source of
//! the same URL, commit and root, checked under the same limits and links policy, the bundles are
//! added to its `approved` list instead of a second source. A bundle already approved there (or
//! in the defaults, for an agent) with the same hash is left as it is; a name approved with
//! another hash in a selection the entry would join is refused (`conflicting_pins`), as `check`
//! would refuse the result. A new source's default corpus directory gets a suffix (`-2`, `-3`)
//! when another source already uses it.
//!
//! Only new lines are inserted ([`crate::descriptor::edit::append_source`],
//! [`crate::descriptor::edit::append_approved`]); every other byte of the file stays. Before
//! anything is written the new text is read back: it must mean exactly the old descriptor with
//! the new entries, and pass `check` (`pin`'s `"<version>"` placeholders aside, which `check`
//! refuses on its own). The file is then replaced as `update --write` replaces it (a new file
//! beside it with its owner, group and mode, fsynced, renamed over it), or made when there is
//! none yet.

use std::path::Path;

use crate::descriptor::edit::{self, EditError, Scope};
use crate::descriptor::{self, Descriptor, PinSpec, SkillSource};
use crate::format::skill_name::SkillName;
use crate::ops::check::CheckError;
use crate::ops::update::rewrite::{self, RewriteError};
use crate::support::error_code::{Coded as _, ErrorCode};
use crate::support::escape;

use super::PinnedBundle;
use super::entry::{self, Entry};

/// What to write, and where.
#[derive(Debug, Clone, Copy)]
pub struct WriteRequest<'a> {
    /// The descriptor (made when it does not exist).
    pub path: &'a Path,
    /// The agent whose extras get the entry; the defaults when `None`.
    pub agent: Option<&'a str>,
    /// The entry, its directory the one to use for a new source.
    pub entry: Entry<'a>,
    /// Whether the directory was given (`--directory`): it is then used as it is, never
    /// suffixed.
    pub directory_given: bool,
    /// The checked bundles.
    pub bundles: &'a [PinnedBundle],
}

/// What `pin --write` did.
#[derive(Debug, Clone, Default)]
pub struct Written {
    /// The source written to, as `check` names it (`skills[1].git`).
    pub location: String,
    /// Whether that source is new (else the bundles were added to it).
    pub new_source: bool,
    /// The corpus directory of a new source.
    pub directory: Option<String>,
    /// The bundles added.
    pub added: Vec<SkillName>,
    /// The bundles already approved with the same hash, and where.
    pub already: Vec<(SkillName, String)>,
    /// Whether the file was written (nothing is when every bundle was already approved).
    pub written: bool,
}

/// Why the entry was not written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WriteError {
    /// The descriptor cannot be read, or the new one would not pass `check`.
    #[error("{}", .0.lines().join("; "))]
    Check(#[from] CheckError),
    /// A name the entry approves is approved with another hash where it would meet it.
    #[error(
        "`{}`: `{name}` is already approved at {location} with hash {there}, not the reviewed \
         {here}; nothing was written: remove or update that entry first, or write this one for \
         another agent (`--agent`)",
        escape::path(.path)
    )]
    Conflict {
        /// The descriptor.
        path: std::path::PathBuf,
        /// The bundle.
        name: String,
        /// Where the other approval is written.
        location: String,
        /// Its hash (escaped).
        there: String,
        /// The reviewed hash.
        here: String,
    },
    /// The descriptor cannot be appended to in place.
    #[error("`{}`: {error}; nothing was written", escape::path(.path))]
    Edit {
        /// The descriptor.
        path: std::path::PathBuf,
        /// Where and why.
        error: EditError,
    },
    /// The appended text would not read back as the old descriptor with the new entries.
    #[error("`{}`: the descriptor with the entry would not read back as intended ({detail}); nothing was written", escape::path(.path))]
    ReadBack {
        /// The descriptor.
        path: std::path::PathBuf,
        /// What differed.
        detail: String,
    },
    /// The file could not be replaced.
    #[error(transparent)]
    Write(#[from] RewriteError),
    /// The new descriptor could not be made.
    #[error("cannot make `{}`: {}", escape::path(.path), escape::text(&.source.to_string()))]
    Create {
        /// The descriptor.
        path: std::path::PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

impl WriteError {
    /// Stable error code.
    pub fn code(&self) -> ErrorCode {
        match self {
            WriteError::Check(e) => e.error_code(),
            WriteError::Conflict { .. } => descriptor::code::DescriptorCode::ConflictingPins.into(),
            WriteError::Edit { .. } | WriteError::ReadBack { .. } => {
                descriptor::code::DescriptorCode::NotRewritable.into()
            }
            WriteError::Write(e) => e.code(),
            WriteError::Create { .. } => crate::source::code::PrepareCode::IoError.into(),
        }
    }
}

crate::support::error_code::coded_by_code!(WriteError);

/// Appends the entry of `request` to its descriptor (see the module).
pub fn write(request: &WriteRequest<'_>) -> Result<Written, WriteError> {
    let path = request.path;
    let exists = fs_err::symlink_metadata(path).is_ok();
    let text = if exists {
        descriptor::read_text(path).map_err(CheckError::from)?
    } else {
        String::new()
    };
    let old = read(path, &text)?;
    let scope = match request.agent {
        Some(agent) => Scope::Agent(agent),
        None => Scope::Defaults,
    };
    let prefix = match request.agent {
        Some(agent) => format!("agents.{agent}.skills"),
        None => "skills".to_owned(),
    };
    let list = sources(&old, request.agent);
    let matched = list.iter().position(|s| same_source(s, &request.entry));
    let mut written = Written {
        location: format!("{prefix}[{}].git", matched.unwrap_or(list.len())),
        new_source: matched.is_none(),
        ..Written::default()
    };
    let mut adding = Vec::new();
    for bundle in request.bundles {
        let here = bundle.digest().to_string();
        match approvals(&old, request.agent, bundle.name(), &here) {
            Approvals {
                conflict: Some((location, there)),
                ..
            } => {
                return Err(WriteError::Conflict {
                    path: path.to_owned(),
                    name: bundle.name().to_string(),
                    location,
                    there: escape::text(&there).to_string(),
                    here,
                });
            }
            Approvals {
                same: Some(location),
                ..
            } => written.already.push((bundle.name().clone(), location)),
            _ if adding
                .iter()
                .any(|b: &PinnedBundle| b.name() == bundle.name()) => {}
            _ => adding.push(bundle.clone()),
        }
    }
    written.added = adding.iter().map(|b| b.name().clone()).collect();
    if adding.is_empty() {
        return Ok(written);
    }
    let edit_error = |error| WriteError::Edit {
        path: path.to_owned(),
        error,
    };
    let directory;
    let edits = match matched {
        Some(_) => {
            let items = entry::approved_items(request.entry.version, &adding, "");
            edit::append_approved(&text, &written.location, &items).map_err(edit_error)?
        }
        None => {
            directory = if request.directory_given {
                request.entry.directory.to_owned()
            } else {
                free_directory(&old, request.entry.directory)
            };
            let entry = Entry {
                directory: &directory,
                ..request.entry
            };
            written.directory = Some(directory.clone());
            edit::append_source(&text, scope, &entry::source_item(&entry, &adding))
                .map_err(edit_error)?
        }
    };
    let new_text = edit::apply(&text, edits).map_err(edit_error)?;
    let new = read(path, &new_text)?;
    read_back(&old, &new, request, &written, &adding).map_err(|detail| WriteError::ReadBack {
        path: path.to_owned(),
        detail,
    })?;
    crate::ops::check::check_loaded(new)?;
    if exists {
        rewrite::write(path, &text, &new_text)?;
    } else {
        create(path, &new_text).map_err(|source| WriteError::Create {
            path: path.to_owned(),
            source,
        })?;
    }
    written.written = true;
    Ok(written)
}

/// Makes the descriptor `path`, which did not exist, holding `text`: a new file beside it
/// (`rw-r--r--`), written and fsynced, then linked at `path` only if nothing is there yet.
fn create(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::PermissionsExt as _;
    let folder = match path.parent() {
        Some(folder) if !folder.as_os_str().is_empty() => folder,
        _ => Path::new("."),
    };
    let mut file = tempfile::Builder::new()
        .prefix(".skillfold-pin-")
        .tempfile_in(folder)?;
    file.write_all(text.as_bytes())?;
    file.as_file()
        .set_permissions(std::fs::Permissions::from_mode(0o644))?;
    file.as_file().sync_all()?;
    file.persist_noclobber(path).map_err(|e| e.error)?;
    fs_err::File::open(folder)?.sync_all()
}

/// `text` as the descriptor at `path`, each `"<version>"` placeholder standing in as a label.
fn read(path: &Path, text: &str) -> Result<descriptor::Loaded, CheckError> {
    let (stood_in, _) = rewrite::stand_in(text);
    Ok(descriptor::from_text(path, &stood_in)?)
}

/// The sources of the defaults, or of `agent` (none when it is not written).
fn sources<'d>(loaded: &'d descriptor::Loaded, agent: Option<&str>) -> &'d [SkillSource] {
    match agent {
        None => &loaded.descriptor.skills,
        Some(agent) => loaded
            .descriptor
            .agents
            .get(agent)
            .map_or(&[][..], |a| &a.skills),
    }
}

/// Whether `source` is a Git source of the entry's URL, commit and root, checked under its limits
/// and links policy.
fn same_source(source: &SkillSource, entry: &Entry<'_>) -> bool {
    let SkillSource::Git(git) = source else {
        return false;
    };
    let root = git.root.as_deref().map(|r| r.trim_end_matches('/'));
    git.source == entry.url
        && git.revision == entry.revision.commit.as_str()
        && root == entry.root.map(|r| r.as_str())
        && git.links.unwrap_or_default() == entry.links
        && git
            .limits
            .as_ref()
            .map_or(Ok(crate::format::limits::CHAMVI), |l| l.resolve())
            .is_ok_and(|limits| limits == entry.limits)
}

/// Where a name is approved in the selections an entry joins.
#[derive(Default)]
struct Approvals {
    /// An approval with the same hash in a list the entry's selection already holds (the
    /// defaults, the agent's own): nothing to add.
    same: Option<String>,
    /// An approval with another hash that would meet the entry: where, and its hash.
    conflict: Option<(String, String)>,
}

/// Where `name` is approved in the lists an entry for `agent` (the defaults when `None`) meets:
/// the defaults and the agent's own list; for the defaults, every agent's too (where only
/// another hash matters: the same pin twice counts once).
fn approvals(
    loaded: &descriptor::Loaded,
    agent: Option<&str>,
    name: &SkillName,
    hash: &str,
) -> Approvals {
    let d = &loaded.descriptor;
    let mut lists: Vec<(String, &[SkillSource], bool)> =
        vec![("skills".to_owned(), &d.skills, true)];
    for (other, spec) in &d.agents {
        let own = agent == Some(other.as_str());
        if agent.is_none() || own {
            lists.push((format!("agents.{other}.skills"), &spec.skills, own));
        }
    }
    let mut found = Approvals::default();
    for (prefix, list, holds) in lists {
        for (i, source) in list.iter().enumerate() {
            for (at, (pinned, pinned_hash)) in pins(source) {
                if pinned != name.as_str() {
                    continue;
                }
                let location = format!("{prefix}[{i}]{at}");
                if pinned_hash != hash {
                    found
                        .conflict
                        .get_or_insert((location, pinned_hash.to_owned()));
                } else if holds {
                    found.same.get_or_insert(location);
                }
            }
        }
    }
    found
}

/// The name and hash of each approved entry of `source`, with its location under the source.
fn pins(source: &SkillSource) -> Vec<(String, (&str, &str))> {
    match source {
        SkillSource::Git(git) => approved(".git", &git.approved),
        SkillSource::Oci(oci) => approved(".oci", &oci.approved),
        SkillSource::Local(local) => vec![(
            ".local".to_owned(),
            (local.name.as_str(), local.hash.as_str()),
        )],
    }
}

fn approved<'p>(kind: &str, pins: &'p [PinSpec]) -> Vec<(String, (&'p str, &'p str))> {
    pins.iter()
        .enumerate()
        .map(|(i, pin)| {
            let at = format!("{kind}.approved[{i}]");
            (at, (pin.name.as_str(), pin.hash.as_str()))
        })
        .collect()
}

/// `wanted`, or `wanted-2`, `wanted-3`, … : the first no source of the descriptor uses, nests
/// in, or holds.
fn free_directory(loaded: &descriptor::Loaded, wanted: &str) -> String {
    let d = &loaded.descriptor;
    let used: Vec<&Path> = d
        .skills
        .iter()
        .chain(d.agents.values().flat_map(|a| &a.skills))
        .map(|s| match s {
            SkillSource::Git(git) => git.directory.as_path(),
            SkillSource::Oci(oci) => oci.directory.as_path(),
            SkillSource::Local(local) => local.directory.as_path(),
        })
        .collect();
    let taken = |dir: &str| {
        let dir = Path::new(dir);
        used.iter()
            .any(|u| u.starts_with(dir) || dir.starts_with(u))
    };
    let mut candidate = wanted.to_owned();
    let mut n = 1;
    while taken(&candidate) {
        n += 1;
        candidate = format!("{wanted}-{n}");
    }
    candidate
}

/// Whether `new` is `old` with the entry of `request` written as `written` says (`added` the
/// bundles), and nothing else; what differs otherwise.
// A String: the detail of a `ReadBack` refusal, only shown.
fn read_back(
    old: &descriptor::Loaded,
    new: &descriptor::Loaded,
    request: &WriteRequest<'_>,
    written: &Written,
    added: &[PinnedBundle],
) -> Result<(), String> {
    let mut rest: Descriptor = new.descriptor.clone();
    let list = match request.agent {
        None => &mut rest.skills,
        Some(agent) => match rest.agents.get_mut(agent) {
            Some(spec) => &mut spec.skills,
            None => return Err(format!("no agent `{}`", escape::text(agent))),
        },
    };
    let appended: Vec<PinSpec> = if written.new_source {
        match list.pop() {
            Some(SkillSource::Git(git)) => {
                let directory = written.directory.as_deref().unwrap_or_default();
                let spec = Entry {
                    directory,
                    ..request.entry
                };
                if !same_source(&SkillSource::Git(git.clone()), &spec)
                    || git.directory != Path::new(directory)
                {
                    return Err("the new source is not the one reviewed".to_owned());
                }
                git.approved
            }
            _ => return Err("no new source at the end of the list".to_owned()),
        }
    } else {
        let index = written
            .location
            .rsplit_once('[')
            .and_then(|(_, i)| i.trim_end_matches("].git").parse::<usize>().ok());
        match index.and_then(|i| list.get_mut(i)) {
            Some(SkillSource::Git(git)) if git.approved.len() >= added.len() => {
                let keep = git.approved.len() - added.len();
                git.approved.split_off(keep)
            }
            _ => return Err(format!("no source at {}", written.location)),
        }
    };
    if let Some(agent) = request.agent
        && !old.descriptor.agents.contains_key(agent)
        && rest.agents.get(agent).is_some_and(|a| a.skills.is_empty())
    {
        rest.agents.remove(agent);
    }
    let expected = added
        .iter()
        .map(|b| (b.name().as_str(), b.digest().to_string()));
    let same_pins = appended.len() == added.len()
        && appended.iter().zip(expected).all(|(pin, (name, hash))| {
            pin.name == name
                && pin.hash == hash
                && added
                    .iter()
                    .any(|b| b.name().as_str() == name && b.scans() == pin.scans)
                && request
                    .entry
                    .version
                    .is_none_or(|v| pin.version == v.as_str())
        });
    if !same_pins {
        return Err("the approved entries are not the reviewed ones".to_owned());
    }
    if rest != old.descriptor {
        return Err("a value other than the new entry would change".to_owned());
    }
    Ok(())
}
