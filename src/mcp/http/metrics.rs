//! The metrics of `serve --listen`, served at `GET /metrics` in the Prometheus text format
//! (0.0.4): the `prometheus-client` crate's registry and encoding, with its OpenMetrics counter
//! families renamed after their `_total` samples and no `# EOF`, as `promtool check metrics`
//! requires.
//!
//! Counted as requests are answered ([`Metrics`] is an [`Observer`] of every endpoint's
//! handler, and the HTTP layer counts status codes): `skillfold_tool_calls_total{agent,tool,
//! outcome}`, `skillfold_tool_call_duration_seconds{agent,tool}`, `skillfold_served_bytes_total
//! {agent}`, `skillfold_resource_reads_total{agent,outcome}`, `skillfold_http_requests_total
//! {code}`, `skillfold_catalogue_reloads_total{outcome}`, and with `--oauth`
//! `skillfold_oauth_validations_total{outcome}` and `skillfold_oauth_jwks_refreshes_total{outcome}`; as connections come and go
//! ([`super::connections`]) `skillfold_connections{state}`,
//! `skillfold_connections_refused_total{reason}` and `skillfold_connections_evicted_total`. Read when scraped: `skillfold_sessions`,
//! `skillfold_catalogue_skills{agent}`, and `skillfold_build_info{version}`. Label values are
//! bounded: agents are the descriptor's, tools the catalogue's (others are `unknown`), codes
//! the server's own answers; no token, skill content or client-chosen text is a label.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use crate::mcp::observe::{Observer, ResourceRead, ToolCall};

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CallLabels {
    agent: String,
    tool: String,
    outcome: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ToolLabels {
    agent: String,
    tool: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct AgentLabels {
    agent: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReadLabels {
    agent: String,
    outcome: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CodeLabels {
    code: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabels {
    outcome: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StateLabels {
    state: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReasonLabels {
    reason: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct VersionLabels {
    version: String,
}

type Durations = Family<ToolLabels, Histogram, fn() -> Histogram>;

/// Every metric of the HTTP server.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    tool_calls: Family<CallLabels, Counter>,
    durations: Durations,
    served_bytes: Family<AgentLabels, Counter>,
    resource_reads: Family<ReadLabels, Counter>,
    http_requests: Family<CodeLabels, Counter>,
    sessions: Gauge<i64, std::sync::atomic::AtomicI64>,
    reloads: Family<OutcomeLabels, Counter>,
    skills: Family<AgentLabels, Gauge<i64, std::sync::atomic::AtomicI64>>,
    oauth_validations: Family<OutcomeLabels, Counter>,
    jwks_fetches: Family<OutcomeLabels, Counter>,
    connections: Family<StateLabels, Gauge<i64, std::sync::atomic::AtomicI64>>,
    connections_refused: Family<ReasonLabels, Counter>,
    connections_evicted: Counter,
}

/// The label of an endpoint's agent: its name, or `default` for `/mcp` (agent names may not
/// be empty, so the two cannot be confused with `""`; an agent named `default` is shown as
/// `agent:default`).
fn agent_label(agent: Option<&str>) -> String {
    match agent {
        None => "default".to_owned(),
        Some("default") => "agent:default".to_owned(),
        Some(name) => name.to_owned(),
    }
}

fn duration_histogram() -> Histogram {
    // 50 µs to about 6.6 s.
    Histogram::new(exponential_buckets(0.000_05, 2.0, 18))
}

impl Metrics {
    /// A registry with every metric, `skillfold_build_info` set.
    pub fn new() -> Metrics {
        let mut registry = Registry::default();
        let tool_calls = Family::<CallLabels, Counter>::default();
        registry.register(
            "skillfold_tool_calls",
            "Tool calls answered, by agent, tool and outcome (ok or refused)",
            tool_calls.clone(),
        );
        let durations: Durations = Family::new_with_constructor(duration_histogram);
        registry.register(
            "skillfold_tool_call_duration_seconds",
            "Time to answer a tool call, by agent and tool",
            durations.clone(),
        );
        let served_bytes = Family::<AgentLabels, Counter>::default();
        registry.register(
            "skillfold_served_bytes",
            "Bytes of skill content served (tool answers and resource reads), by agent",
            served_bytes.clone(),
        );
        let resource_reads = Family::<ReadLabels, Counter>::default();
        registry.register(
            "skillfold_resource_reads",
            "skill:// resource reads answered, by agent and outcome",
            resource_reads.clone(),
        );
        let http_requests = Family::<CodeLabels, Counter>::default();
        registry.register(
            "skillfold_http_requests",
            "HTTP requests answered, by status code",
            http_requests.clone(),
        );
        let sessions = Gauge::<i64, std::sync::atomic::AtomicI64>::default();
        registry.register("skillfold_sessions", "Live MCP sessions", sessions.clone());
        let reloads = Family::<OutcomeLabels, Counter>::default();
        registry.register(
            "skillfold_catalogue_reloads",
            "Catalogue reloads, by outcome (ok or failed)",
            reloads.clone(),
        );
        let skills = Family::<AgentLabels, Gauge<i64, std::sync::atomic::AtomicI64>>::default();
        registry.register(
            "skillfold_catalogue_skills",
            "Skills in each served catalogue, by agent",
            skills.clone(),
        );
        let oauth_validations = Family::<OutcomeLabels, Counter>::default();
        registry.register(
            "skillfold_oauth_validations",
            "Bearer tokens judged as OAuth access tokens (--oauth), by outcome (ok, no_rule, expired, bad_signature, wrong_audience, ...)",
            oauth_validations.clone(),
        );
        let jwks_fetches = Family::<OutcomeLabels, Counter>::default();
        registry.register(
            "skillfold_oauth_jwks_refreshes",
            "Fetches of the identity provider's key set (--oauth), by outcome (ok or failed)",
            jwks_fetches.clone(),
        );
        let connections =
            Family::<StateLabels, Gauge<i64, std::sync::atomic::AtomicI64>>::default();
        registry.register(
            "skillfold_connections",
            "Open connections, by state (unauthenticated, authenticated, probe, waiting)",
            connections.clone(),
        );
        let connections_refused = Family::<ReasonLabels, Counter>::default();
        registry.register(
            "skillfold_connections_refused",
            "Connections closed unserved, by the bound they met (client, token, server)",
            connections_refused.clone(),
        );
        let connections_evicted = Counter::default();
        registry.register(
            "skillfold_connections_evicted",
            "Idle unauthenticated connections closed to make room for a new one from their address",
            connections_evicted.clone(),
        );
        let build = Family::<VersionLabels, Gauge<i64, std::sync::atomic::AtomicI64>>::default();
        build
            .get_or_create(&VersionLabels {
                version: env!("CARGO_PKG_VERSION").to_owned(),
            })
            .set(1);
        registry.register("skillfold_build_info", "The running version", build);
        Metrics {
            registry,
            tool_calls,
            durations,
            served_bytes,
            resource_reads,
            http_requests,
            sessions,
            reloads,
            skills,
            oauth_validations,
            jwks_fetches,
            connections,
            connections_refused,
            connections_evicted,
        }
    }

    /// The connections open now, by state.
    pub fn connections(
        &self,
        unauthenticated: usize,
        authenticated: usize,
        probes: usize,
        waiting: usize,
    ) {
        for (state, count) in [
            ("unauthenticated", unauthenticated),
            ("authenticated", authenticated),
            ("probe", probes),
            ("waiting", waiting),
        ] {
            self.connections
                .get_or_create(&StateLabels {
                    state: state.to_owned(),
                })
                .set(i64::try_from(count).unwrap_or(i64::MAX));
        }
    }

    /// A connection closed unserved at the bound `reason` names (`client`, `token`, `server`).
    pub fn connection_refused(&self, reason: &'static str) {
        self.connections_refused
            .get_or_create(&ReasonLabels {
                reason: reason.to_owned(),
            })
            .inc();
    }

    /// An idle unauthenticated connection closed to make room.
    pub fn connection_evicted(&self) {
        self.connections_evicted.inc();
    }

    /// A bearer token judged as an OAuth access token; `outcome` is one of a fixed set.
    pub fn oauth_validation(&self, outcome: &'static str) {
        self.oauth_validations
            .get_or_create(&OutcomeLabels {
                outcome: outcome.to_owned(),
            })
            .inc();
    }

    /// A fetch of the identity provider's key set ended.
    pub fn jwks_fetch(&self, ok: bool) {
        let outcome = if ok { "ok" } else { "failed" };
        self.jwks_fetches
            .get_or_create(&OutcomeLabels {
                outcome: outcome.to_owned(),
            })
            .inc();
    }

    /// An HTTP answer with status `code`.
    pub fn http_request(&self, code: u16) {
        self.http_requests
            .get_or_create(&CodeLabels {
                code: code.to_string(),
            })
            .inc();
    }

    /// A reload ended.
    pub fn reload(&self, ok: bool) {
        let outcome = if ok { "ok" } else { "failed" };
        self.reloads
            .get_or_create(&OutcomeLabels {
                outcome: outcome.to_owned(),
            })
            .inc();
    }

    /// The text exposition, with the gauges read now: `sessions` live sessions, and the
    /// skills of each agent's catalogue.
    pub fn render(&self, sessions: usize, skills: &[(Option<&str>, usize)]) -> String {
        self.sessions
            .set(i64::try_from(sessions).unwrap_or(i64::MAX));
        for (agent, count) in skills {
            self.skills
                .get_or_create(&AgentLabels {
                    agent: agent_label(*agent),
                })
                .set(i64::try_from(*count).unwrap_or(i64::MAX));
        }
        let mut text = String::new();
        // Writing to a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut text, &self.registry);
        prometheus_text(&text)
    }
}

/// The content type of [`Metrics::render`]'s text.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// OpenMetrics text as the Prometheus text format (0.0.4), which every scraper and `promtool`
/// read: a counter's family is named after its samples (`…_total`), and there is no `# EOF`.
fn prometheus_text(openmetrics: &str) -> String {
    let counters: Vec<&str> = openmetrics
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.strip_suffix(" counter"))
        .collect();
    let mut out = String::with_capacity(openmetrics.len());
    for line in openmetrics.lines() {
        if line == "# EOF" {
            continue;
        }
        let renamed = ["# HELP ", "# TYPE "].iter().find_map(|prefix| {
            let rest = line.strip_prefix(prefix)?;
            let (name, tail) = rest.split_once(' ')?;
            counters
                .contains(&name)
                .then(|| format!("{prefix}{name}_total {tail}"))
        });
        out.push_str(renamed.as_deref().unwrap_or(line));
        out.push('\n');
    }
    out
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Observer for Metrics {
    fn tool_call(&self, call: &ToolCall<'_>) {
        let agent = agent_label(call.agent);
        self.tool_calls
            .get_or_create(&CallLabels {
                agent: agent.clone(),
                tool: call.tool.to_owned(),
                outcome: call.outcome.as_str().to_owned(),
            })
            .inc();
        self.durations
            .get_or_create(&ToolLabels {
                agent: agent.clone(),
                tool: call.tool.to_owned(),
            })
            .observe(call.duration.as_secs_f64());
        self.served_bytes
            .get_or_create(&AgentLabels { agent })
            .inc_by(call.bytes as u64);
    }

    fn resource_read(&self, read: &ResourceRead<'_>) {
        let agent = agent_label(read.agent);
        self.resource_reads
            .get_or_create(&ReadLabels {
                agent: agent.clone(),
                outcome: read.outcome.as_str().to_owned(),
            })
            .inc();
        self.served_bytes
            .get_or_create(&AgentLabels { agent })
            .inc_by(read.bytes as u64);
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::mcp::observe::Outcome;

    #[test]
    fn every_required_metric_is_exposed_with_bounded_labels() {
        let metrics = Metrics::new();
        metrics.tool_call(&ToolCall {
            agent: Some("writer"),
            session: None,
            caller: None,
            trace: None,
            request_id: None,
            record: None,
            asked: None,
            code: None,
            tool: "load_skill",
            outcome: Outcome::Ok,
            duration: Duration::from_micros(300),
            bytes: 1_000,
        });
        metrics.resource_read(&ResourceRead {
            agent: None,
            session: None,
            caller: None,
            trace: None,
            request_id: None,
            uri: "skill://nope/SKILL.md",
            contents: None,
            pin: None,
            code: Some("resource_not_found"),
            outcome: Outcome::Refused,
            bytes: 0,
        });
        metrics.http_request(200);
        metrics.reload(false);
        let text = metrics.render(3, &[(None, 2), (Some("writer"), 3)]);
        for expected in [
            r#"skillfold_tool_calls_total{agent="writer",tool="load_skill",outcome="ok"} 1"#,
            r#"skillfold_tool_call_duration_seconds_count{agent="writer",tool="load_skill"} 1"#,
            r#"skillfold_served_bytes_total{agent="writer"} 1000"#,
            r#"skillfold_resource_reads_total{agent="default",outcome="refused"} 1"#,
            r#"skillfold_http_requests_total{code="200"} 1"#,
            "skillfold_sessions 3",
            r#"skillfold_catalogue_reloads_total{outcome="failed"} 1"#,
            r#"skillfold_catalogue_skills{agent="writer"} 3"#,
            r#"skillfold_build_info{version=""#,
            "# TYPE skillfold_tool_calls_total counter",
            "# HELP skillfold_http_requests_total HTTP requests",
            "# TYPE skillfold_tool_call_duration_seconds histogram",
        ] {
            assert!(text.contains(expected), "{expected} in:\n{text}");
        }
        assert!(!text.contains("# EOF"), "{text}");
        assert_eq!(agent_label(Some("default")), "agent:default");
    }
}
