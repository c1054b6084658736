//! An agent's effective selection, asked of the plan in one place for `install` and
//! `verify --installed`.

use crate::descriptor::plan::{Plan, Source};
use crate::runtime::code::RuntimeCode;

use super::error::InstallError;

/// The sources `agent` sees (`None`: the defaults alone): the one place `install` and
/// `verify --installed` ask the plan for an agent's selection.
pub fn selection<'p>(plan: &'p Plan, agent: Option<&str>) -> Result<Vec<&'p Source>, InstallError> {
    let indices = plan
        .agent_indices(agent)
        .map_err(|e| InstallError::new(RuntimeCode::UnknownAgent, e.to_string()))?;
    Ok(indices.into_iter().map(|i| &plan.sources[i]).collect())
}
