//! The catalogue being served: [`Served`] is one catalogue as the server offers it (its tools in
//! MCP's shape, its prompt, the Skills extension's index of its files), and [`Live`] holds the one
//! in service and swaps it on reload.
//!
//! [`Live`] keeps the catalogue behind an `Arc` in a std `RwLock`: each request clones the `Arc`
//! under a read lock held for a few nanoseconds (never across an `.await`), and a reload replaces
//! it under the write lock. A call in flight keeps the snapshot it started with; the old
//! catalogue is freed when the last such call ends. A tokio lock would add nothing here: nothing
//! waits while holding it.

use std::sync::{Arc, RwLock};

use rmcp::model::Tool;

use crate::runtime::catalogue::Catalogue;

use super::skills_extension::SkillIndex;
use super::tools::mcp_tool;

/// One catalogue as the server offers it: its tools, its prompt and its skill files.
#[derive(Debug)]
pub struct Served {
    catalogue: Catalogue,
    instructions: Option<String>,
    remote_instructions: Option<String>,
    tools: Vec<Tool>,
    index: SkillIndex,
    /// The sources that failed to load (`/readyz` names them).
    #[cfg(feature = "http")]
    missing: Vec<String>,
}

impl Served {
    /// Prepares `catalogue` for serving: its tools as MCP tools and the index of its files.
    pub fn new(catalogue: Catalogue) -> Served {
        let tools = catalogue.tools().into_iter().map(mcp_tool).collect();
        let index = SkillIndex::new(&catalogue);
        Served {
            instructions: catalogue.prompt(),
            remote_instructions: catalogue.remote_prompt(),
            catalogue,
            tools,
            index,
            #[cfg(feature = "http")]
            missing: Vec::new(),
        }
    }

    #[cfg(feature = "http")]
    /// The same, noting the approved bundles that failed to load and are not served (each
    /// described with its code).
    pub fn with_missing(mut self, missing: Vec<String>) -> Served {
        self.missing = missing;
        self
    }

    #[cfg(feature = "http")]
    /// The approved bundles that failed to load; empty when the catalogue is complete.
    pub fn missing(&self) -> &[String] {
        &self.missing
    }

    /// The catalogue.
    pub fn catalogue(&self) -> &Catalogue {
        &self.catalogue
    }

    /// The server's instructions: the catalogue prompt (rendered once; rmcp asks often).
    pub fn instructions(&self) -> Option<&str> {
        self.instructions.as_deref()
    }

    /// The instructions for a client on another machine: `skill://` locations, no paths.
    pub fn remote_instructions(&self) -> Option<&str> {
        self.remote_instructions.as_deref()
    }

    /// The Skills extension's index of its files.
    pub fn index(&self) -> &SkillIndex {
        &self.index
    }

    /// The MCP tools.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }
}

/// The catalogue being served, replaced atomically on reload.
#[derive(Debug)]
pub struct Live {
    current: RwLock<Arc<Served>>,
    changes: tokio::sync::watch::Sender<u64>,
}

impl Live {
    /// Starts serving `served`.
    pub fn new(served: Served) -> Arc<Live> {
        Arc::new(Live {
            current: RwLock::new(Arc::new(served)),
            changes: tokio::sync::watch::Sender::new(0),
        })
    }

    /// The catalogue a request starts with; it stays valid for that request whatever happens.
    pub fn current(&self) -> Arc<Served> {
        Arc::clone(&self.current.read().unwrap_or_else(|e| e.into_inner()))
    }

    /// Serves `served` from now on; requests already running finish on what they had.
    pub fn replace(&self, served: Served) {
        *self.current.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(served);
        self.changes.send_modify(|generation| *generation += 1);
    }

    /// Notified after each replacement.
    pub fn subscribe(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changes.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn live_swaps_while_held_catalogues_stay_valid() {
        let empty = Catalogue::new(None, Vec::new()).expect("empty catalogue");
        let live = Live::new(Served::new(empty.clone()));
        let changes = live.subscribe();
        let held = live.current();
        live.replace(Served::new(empty));
        assert!(changes.has_changed().unwrap());
        assert!(!Arc::ptr_eq(&held, &live.current()));
        assert_eq!(held.tools().len(), 0);
    }
}
