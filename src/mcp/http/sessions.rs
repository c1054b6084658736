//! The session table of `serve --listen`: every session rmcp opens is bound to the endpoint and
//! the token (or access token's subject) that opened it, and counted within `--max-sessions`
//! when it opens ([`Server::admit`]); a binding whose session rmcp has closed (idle, deleted) is
//! forgotten at the next admission. The route checks a request's session id against its binding.

use std::collections::HashMap;

use rmcp::transport::streamable_http_server::session::SessionManager as _;

use super::state::{Binding, Endpoint, Server};

impl Server {
    /// Counts and binds a session rmcp has just opened, or closes it when `--max-sessions`
    /// are live already.
    pub(super) async fn admit(&self, endpoint: &Endpoint, id: String, binding: Binding) -> bool {
        let _admission = self.admission.lock().await;
        let mut live = std::collections::HashSet::new();
        for endpoint in &self.endpoints {
            live.extend(
                endpoint
                    .sessions
                    .sessions
                    .read()
                    .await
                    .keys()
                    .map(|k| k.to_string()),
            );
        }
        let admitted = {
            let mut bindings = self.bindings();
            bindings.retain(|id, _| live.contains(id));
            if bindings.len() < self.max_sessions {
                bindings.insert(id.clone(), binding);
                true
            } else {
                false
            }
        };
        if !admitted {
            let _ = endpoint.sessions.close_session(&id.into()).await;
        }
        admitted
    }

    /// The bindings of the live sessions, by session id.
    pub(super) fn bindings(&self) -> std::sync::MutexGuard<'_, HashMap<String, Binding>> {
        self.bindings.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// How many sessions are open at every endpoint.
    pub(super) async fn live_sessions(&self) -> usize {
        let mut count = 0;
        for endpoint in &self.endpoints {
            count += endpoint.sessions.sessions.read().await.len();
        }
        count
    }
}
