//! An agent's effective selection, asked of the plan in one place for `install` and
//! `verify --installed`, and the agent a folder is for: the one its record remembers unless
//! another is asked for explicitly.

use crate::descriptor::plan::{Plan, Source};
use crate::runtime::code::RuntimeCode;
use crate::support::escape;

use super::code::InstallCode;
use super::error::InstallError;
use super::record::{RECORD_NAME, Record};

/// The sources `agent` sees (`None`: the defaults alone): the one place `install` and
/// `verify --installed` ask the plan for an agent's selection.
pub fn selection<'p>(plan: &'p Plan, agent: Option<&str>) -> Result<Vec<&'p Source>, InstallError> {
    let indices = plan
        .agent_indices(agent)
        .map_err(|e| InstallError::new(RuntimeCode::UnknownAgent, e.to_string()))?;
    Ok(indices.into_iter().map(|i| &plan.sources[i]).collect())
}

/// How the report shows `agent`: ``agent `NAME` `` or `the defaults`, escaped.
pub fn agent_shown(agent: Option<&str>) -> String {
    agent.map_or_else(
        || "the defaults".to_owned(),
        |a| format!("agent `{}`", escape::text(a)),
    )
}

/// What the command was asked about the agent.
#[derive(Debug, Clone, Copy, Default)]
pub struct AgentRequest<'a> {
    /// `--agent NAME` (`None`: not given).
    pub agent: Option<&'a str>,
    /// `install --switch-agent`: take `agent` (or the defaults) whatever the record says.
    pub switch: bool,
}

/// The agent whose selection the folder `shown` holds (`None`: the defaults), given what was
/// asked and the folder's record (`None`: the folder has none):
///
/// - with `--switch-agent`, or without a record: the agent asked for (the defaults without
///   `--agent`);
/// - without `--agent`: the agent the record remembers (a record of the defaults remembers
///   none);
/// - with `--agent` naming the recorded agent: that agent;
/// - with `--agent` naming another (or an agent where the record remembers the defaults): a
///   refusal, `install_agent_mismatch`, naming both. Installing another selection would remove
///   the recorded agent's extras; no command changes the agent silently.
pub fn agent_for(
    request: AgentRequest<'_>,
    record: Option<&Record>,
    shown_dir: &str,
    command: &str,
) -> Result<Option<String>, InstallError> {
    let asked = request.agent.map(str::to_owned);
    let Some(record) = record.filter(|_| !request.switch) else {
        return Ok(asked);
    };
    match request.agent {
        None => Ok(record.agent.clone()),
        Some(a) if record.agent.as_deref() == Some(a) => Ok(asked),
        Some(a) => {
            let how = if command == "install" {
                "pass `--switch-agent` to install its selection instead (the recorded selection's other bundles are then removed), or run without `--agent`"
            } else {
                "check it without `--agent` (the recorded agent is taken), or install the other selection with `install --switch-agent`"
            };
            Err(InstallError::new(
                InstallCode::InstallAgentMismatch,
                format!(
                    "`{shown_dir}` was installed for {} (its record `{RECORD_NAME}` says so), not for {}; nothing was changed: {how}",
                    agent_shown(record.agent.as_deref()),
                    agent_shown(Some(a)),
                ),
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{AgentRequest, agent_for};
    use crate::ops::install::record::Record;

    fn ask(
        agent: Option<&str>,
        switch: bool,
        record: Option<&Record>,
    ) -> Result<Option<String>, String> {
        agent_for(AgentRequest { agent, switch }, record, "d", "install")
            .map_err(|e| e.code.as_str().to_owned())
    }

    #[test]
    fn the_recorded_agent_is_the_default_and_another_needs_switch_agent() {
        let dev = Record::new(Some("dev"), Vec::new());
        let defaults = Record::new(None, Vec::new());
        assert_eq!(ask(None, false, None), Ok(None));
        assert_eq!(ask(Some("dev"), false, None), Ok(Some("dev".into())));
        assert_eq!(ask(None, false, Some(&dev)), Ok(Some("dev".into())));
        assert_eq!(ask(Some("dev"), false, Some(&dev)), Ok(Some("dev".into())));
        assert_eq!(ask(None, false, Some(&defaults)), Ok(None));
        let mismatch = Err("install_agent_mismatch".to_owned());
        assert_eq!(ask(Some("ops"), false, Some(&dev)), mismatch);
        assert_eq!(ask(Some("dev"), false, Some(&defaults)), mismatch);
        assert_eq!(ask(Some("ops"), true, Some(&dev)), Ok(Some("ops".into())));
        assert_eq!(ask(None, true, Some(&dev)), Ok(None));
    }
}
