//! The session table of `serve --listen`: every session rmcp opens is bound to the endpoint and
//! the token (or access token's subject) that opened it, and counted within `--max-sessions`
//! when it opens ([`Server::admit`]); a binding whose session rmcp has closed (deleted) is
//! forgotten at the next admission. The route checks a request's session id against its binding
//! and notes the time ([`Server::session`]); a session that has been asked nothing for
//! `--session-idle` is closed here ([`expire_idle`]) — rmcp does not see the calls the direct
//! lane answers ([`super::direct`]), so its own idle clock would close sessions in use. A session
//! is *ready* once the client has said `notifications/initialized` and rmcp has taken it.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::transport::streamable_http_server::session::SessionManager as _;

use super::state::{Binding, Endpoint, Server, Session};

/// What the route finds for a request's session id.
pub(super) enum Found {
    /// Bound as the request is: whether it is ready.
    Bound { ready: bool },
    /// Bound to another endpoint or token.
    Foreign,
    /// No such session (never, or no longer).
    Unknown,
}

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
            let mut sessions = self.sessions();
            sessions.retain(|id, _| live.contains(id));
            if sessions.len() < self.max_sessions {
                sessions.insert(
                    id.clone(),
                    Session {
                        binding,
                        ready: false,
                        last_request: Instant::now(),
                    },
                );
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

    /// The session `id` for a request that came as `binding`, its last request now.
    pub(super) fn session(&self, id: &str, binding: Binding) -> Found {
        match self.sessions().get_mut(id) {
            Some(session) if session.binding == binding => {
                session.last_request = Instant::now();
                Found::Bound {
                    ready: session.ready,
                }
            }
            Some(_) => Found::Foreign,
            None => Found::Unknown,
        }
    }

    /// The client of session `id` has said `notifications/initialized`, and rmcp took it.
    pub(super) fn session_ready(&self, id: &str) {
        if let Some(session) = self.sessions().get_mut(id) {
            session.ready = true;
        }
    }

    /// The session `id` is closed: forgotten.
    pub(super) fn forget_session(&self, id: &str) {
        self.sessions().remove(id);
    }

    /// The live sessions, by id.
    fn sessions(&self) -> std::sync::MutexGuard<'_, HashMap<String, Session>> {
        self.sessions.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// How many sessions are open at every endpoint.
    pub(super) async fn live_sessions(&self) -> usize {
        let mut count = 0;
        for endpoint in &self.endpoints {
            count += endpoint.sessions.sessions.read().await.len();
        }
        count
    }

    /// The sessions asked nothing since `before`, forgotten here: their endpoints and ids.
    fn take_idle(&self, before: Instant) -> Vec<(usize, String)> {
        let mut sessions = self.sessions();
        let idle: Vec<(usize, String)> = sessions
            .iter()
            .filter(|(_, s)| s.last_request < before)
            .map(|(id, s)| (s.binding.endpoint, id.clone()))
            .collect();
        for (_, id) in &idle {
            sessions.remove(id);
        }
        idle
    }
}

/// How often idle sessions are looked for: a quarter of the idle time, between 50 ms and 30 s.
fn sweep_period(idle: Duration) -> Duration {
    (idle / 4).clamp(Duration::from_millis(50), Duration::from_secs(30))
}

/// Closes every session asked nothing for `idle`, until the server ends (a task of its own).
pub(super) async fn expire_idle(server: Arc<Server>, idle: Duration) {
    let mut sweep = tokio::time::interval(sweep_period(idle));
    sweep.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        sweep.tick().await;
        let Some(before) = Instant::now().checked_sub(idle) else {
            continue;
        };
        for (endpoint, id) in server.take_idle(before) {
            if let Some(endpoint) = server.endpoints.get(endpoint) {
                let _ = endpoint.sessions.close_session(&id.into()).await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_sessions_are_looked_for_often_enough_and_not_too_often() {
        assert_eq!(
            sweep_period(Duration::from_secs(1)),
            Duration::from_millis(250)
        );
        assert_eq!(
            sweep_period(Duration::from_millis(10)),
            Duration::from_millis(50)
        );
        assert_eq!(
            sweep_period(Duration::from_secs(30 * 60)),
            Duration::from_secs(30)
        );
    }
}
