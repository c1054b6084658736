//! A host built on [rig](https://docs.rs/rig-core) that hands one agent's verified skills to its
//! model.
//!
//! skillfold's tools are known only at run time: which of `load_skill`, `skill_run_script` and
//! `skill_read_reference` an agent gets, and the skill names their schemas enumerate, follow from
//! that agent's catalogue. So each one becomes a rig [`DynamicTool`] (rig's runtime-defined tool:
//! a name, a description, a JSON Schema and a callback) rather than a type implementing rig's
//! `Tool` trait with a fixed `NAME`. [`rig_tools`] makes them; [`with_skills`] puts them on a
//! rig-agent [`AgentBuilder`] together with the catalogue's system-prompt block.
//!
//! Every call is served by [`Catalogue::call_async`]. What the model gets back is text: the tool's
//! JSON output, or `{"error": {"code": ..., "message": ..., "valid": [...]}}` when skillfold
//! refuses the call. A refusal is an ordinary tool result, not a rig error, so the model reads why
//! and can correct its next call. The [`Record`] of each served call (skill, version, digest,
//! bytes and their SHA-256) is for the host's transcript only: it goes to a [`Transcript`] or a
//! callback and never into the conversation.

#![warn(missing_docs)]

use std::sync::{Arc, Mutex, PoisonError};

use rig_agent::AgentBuilder;
use rig_agent::agent::{NoToolConfig, WithBuilderTools};
use rig_core::message::ToolName;
use rig_core::tool::{DynamicTool, ToolOutput};
use serde_json::{Value, json};
use skillfold::{Catalogue, Record, ToolDefinition};

/// The host's side of the conversation: the [`Record`] of every call a catalogue served, in the
/// order served. Clones share one list, so the copy given to [`rig_tools_recorded`] and the one
/// the host keeps see the same records.
#[derive(Debug, Clone, Default)]
pub struct Transcript {
    records: Arc<Mutex<Vec<Record>>>,
}

impl Transcript {
    /// An empty transcript.
    pub fn new() -> Transcript {
        Transcript::default()
    }

    /// The records so far.
    pub fn records(&self) -> Vec<Record> {
        self.lock().clone()
    }

    /// Adds one record.
    pub fn push(&self, record: Record) {
        self.lock().push(record);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Record>> {
        // A panic while pushing cannot leave the list half-written; keep serving.
        self.records.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The host's hook for records: called once for each call the catalogue served.
pub type OnRecord = dyn Fn(Record) + Send + Sync;

/// The catalogue's tools as rig tools, with the records dropped.
pub fn rig_tools(catalogue: Catalogue) -> Vec<DynamicTool> {
    rig_tools_with(catalogue, |_record| {})
}

/// The catalogue's tools as rig tools, keeping each call's record in `transcript`.
pub fn rig_tools_recorded(catalogue: Catalogue, transcript: &Transcript) -> Vec<DynamicTool> {
    let transcript = transcript.clone();
    rig_tools_with(catalogue, move |record| transcript.push(record))
}

/// The catalogue's tools as rig tools, handing each call's record to `on_record`.
///
/// One rig tool per entry of [`Catalogue::tools`], in the same order, with skillfold's name,
/// description and input schema unchanged.
pub fn rig_tools_with(
    catalogue: Catalogue,
    on_record: impl Fn(Record) + Send + Sync + 'static,
) -> Vec<DynamicTool> {
    let on_record: Arc<OnRecord> = Arc::new(on_record);
    catalogue
        .tools()
        .into_iter()
        .filter_map(|definition| rig_tool(&catalogue, definition, &on_record))
        .collect()
}

/// One rig tool; `None` only for a nameless definition, which skillfold never produces and rig
/// cannot register.
fn rig_tool(
    catalogue: &Catalogue,
    definition: ToolDefinition,
    on_record: &Arc<OnRecord>,
) -> Option<DynamicTool> {
    let tool: &'static str = definition.name;
    let rig_name = ToolName::new(tool).ok()?;
    let catalogue = catalogue.clone();
    let on_record = Arc::clone(on_record);
    Some(DynamicTool::new(
        rig_name,
        definition.description,
        definition.input_schema,
        move |arguments: Value| {
            let catalogue = catalogue.clone();
            let on_record = Arc::clone(&on_record);
            Box::pin(async move {
                let answer = serve(&catalogue, tool, &arguments, &*on_record).await;
                Ok(ToolOutput::text(answer))
            })
        },
    ))
}

/// Serves one call and returns the text the model gets: the output JSON, or the refusal as
/// `{"error": {...}}`. The record of a served call goes to `on_record`, never into the text.
pub async fn serve(
    catalogue: &Catalogue,
    tool: &str,
    arguments: &Value,
    on_record: &OnRecord,
) -> String {
    match catalogue.call_async(tool, arguments).await {
        Ok((output, record)) => {
            on_record(record);
            output.to_string()
        }
        Err(refusal) => json!({ "error": refusal }).to_string(),
    }
}

/// Gives a rig agent one skillfold agent's skills: appends the catalogue's system-prompt block
/// (`<available_skills>` and how to load them) to the builder's preamble, and registers the
/// catalogue's tools, keeping their records in `transcript`. Set the host's own instructions with
/// [`AgentBuilder::preamble`] first: the block goes after them. An agent without skills gets
/// neither a prompt block nor tools.
pub fn with_skills(
    builder: AgentBuilder<NoToolConfig>,
    catalogue: Catalogue,
    transcript: &Transcript,
) -> AgentBuilder<WithBuilderTools> {
    let builder = match catalogue.prompt() {
        Some(block) => builder.append_preamble(&block),
        None => builder,
    };
    builder.dynamic_tools(rig_tools_recorded(catalogue, transcript))
}
