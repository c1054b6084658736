//! Issue 37 §1: a name is unique per agent's effective selection, not per descriptor. Two agents
//! pin different bundles under one name and each is served its own bytes — by `load`, over stdio
//! (`serve --agent`) and per HTTP endpoint, in its prompt, its tools and its `skill://`
//! resources, with audit lines naming the agent and the pin. The public `skill-creator` that two
//! repositories both ship prepares and serves once per agent, as do two roots of one commit (one
//! fetch, two corpora), and `outdated` says which source of the name moved. A conflict inside one
//! selection is still refused naming both entries; `push` of the whole descriptor refuses what one
//! image cannot hold, and `push --agent` pushes that agent's bytes.

use std::time::Duration;

use serde_json::{Value, json};

use super::http_raw::post;
use super::mcp_client::{Listening, audit_lines};
use super::mcp_framing::Server;
use super::serve_http_rpc::{message_of, open_session_at};
use super::support::bin::{stderr, stdout};
use super::support::git::{Repo, prepare_json};
use super::support::world::{World, local_entry, sha256};

const WAIT: Duration = Duration::from_secs(30);

/// `common` for every agent; `alpha` and `beta` each get their own `pdf` (other text, other
/// version, other digest). Returns the world and each agent's `pdf` digest.
fn two_pdfs() -> (World, String, String) {
    let world = World::new();
    let common = world.bundle(
        "common",
        "---\nname: common\ndescription: Shared by all.\n---\n# common\n",
        &[],
    );
    let pdf = |dir: &str, team: &str| {
        world.bundle(
            dir,
            &format!(
                "---\nname: pdf\ndescription: The PDF skill of team {team}.\n---\n# {team} pdf\n"
            ),
            &[("references/guide.md", &format!("{team} guide\n"))],
        )
    };
    let (a, b) = (pdf("alpha/pdf", "alpha"), pdf("beta/pdf", "beta"));
    world.descriptor(&format!(
        "skills:\n{}agents:\n  alpha:\n    skills:\n  {}  beta:\n    skills:\n  {}",
        local_entry("common", "'1'", "common", &common),
        local_entry("pdf", "'1.0'", "alpha/pdf", &a),
        local_entry("pdf", "'2.0'", "beta/pdf", &b),
    ));
    (world, a, b)
}

fn load_pdf(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "load_skill", "arguments": {"name": "pdf", "reference": null}}})
}

fn read(id: u64, uri: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "resources/read", "params": {"uri": uri}})
}

/// What a `load_skill` answer served, and the text of a `resources/read` answer.
fn served(call: &Value, resource: &Value) -> (String, String, String) {
    let output = &call["result"]["structuredContent"];
    (
        output["content"].as_str().unwrap_or_default().to_owned(),
        output["hash"].as_str().unwrap_or_default().to_owned(),
        resource["result"]["contents"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
    )
}

#[test]
fn two_agents_get_their_own_bytes_under_one_name_over_stdio_and_http() {
    let (world, a, b) = two_pdfs();
    let check = world.run(&["check", "-c", "skillfold.yaml"]);
    assert!(check.status.success(), "{}", stderr(&check));
    let file = |agent: &str, rel: &str| {
        fs_err::read_to_string(world.path(&format!("{agent}/pdf/{rel}"))).expect("read")
    };
    let body = |agent: &str| format!("# {agent} pdf\n");

    // `load`: each agent's text; the defaults have no `pdf`.
    for agent in ["alpha", "beta"] {
        let out = world.run(&["load", "-c", "skillfold.yaml", "--agent", agent, "pdf"]);
        assert!(out.status.success(), "{}", stderr(&out));
        let output: Value = serde_json::from_str(&stdout(&out)).expect("json");
        assert_eq!(output["content"], body(agent));
    }
    let none = world.run(&["load", "-c", "skillfold.yaml", "pdf"]);
    assert_eq!(none.status.code(), Some(2), "{}", stdout(&none));

    // Over stdio: the prompt, the tool and the resource of each agent are its own.
    for (agent, digest) in [("alpha", &a), ("beta", &b)] {
        let mut server = Server::start_with(&world, &["--agent", agent]);
        let hello = server.initialize("2025-06-18");
        let prompt = hello["result"]["instructions"].as_str().unwrap_or_default();
        assert!(
            prompt.contains(&format!("The PDF skill of team {agent}.")),
            "{prompt}"
        );
        server.line(&load_pdf(2).to_string());
        let call = server.next(WAIT).expect("an answer");
        server.line(&read(3, "skill://pdf/references/guide.md").to_string());
        let resource = server.next(WAIT).expect("an answer");
        let (content, hash, text) = served(&call, &resource);
        assert_eq!(
            (content, &hash, text),
            (body(agent), digest, file(agent, "references/guide.md"))
        );
        let (status, _) = server.close();
        assert_eq!(status, Some(0));
    }

    // Over HTTP: each endpoint serves its agent's bytes; `/mcp` (the defaults) has no `pdf`.
    let log = world.path("audit.jsonl");
    let http = Listening::start(
        &world.config,
        &["--audit-log", log.to_str().expect("utf8")],
        &[],
    );
    for (agent, digest) in [("alpha", &a), ("beta", &b)] {
        let path = format!("/agents/{agent}/mcp");
        let headers = open_session_at(http.port, &path);
        let headers: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
        let ask = |request: Value| {
            message_of(&post(
                http.port,
                &path,
                None,
                &headers,
                &request.to_string(),
            ))
        };
        let call = ask(load_pdf(2));
        let resource = ask(read(3, "skill://pdf/SKILL.md"));
        let (content, hash, text) = served(&call, &resource);
        assert_eq!(
            (content, &hash, &text),
            (body(agent), digest, &file(agent, "SKILL.md"))
        );
        let listed = ask(json!({"jsonrpc": "2.0", "id": 4, "method": "resources/list"}));
        let pdf_md = listed["result"]["resources"]
            .as_array()
            .and_then(|all| all.iter().find(|r| r["uri"] == "skill://pdf/SKILL.md"))
            .cloned()
            .unwrap_or_default();
        assert_eq!(pdf_md["size"], text.len(), "{listed}");
    }
    let headers = open_session_at(http.port, "/mcp");
    let headers: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
    let defaults = message_of(&post(
        http.port,
        "/mcp",
        None,
        &headers,
        &load_pdf(2).to_string(),
    ));
    assert_eq!(defaults["result"]["isError"], true, "{defaults}");

    // The audit log names the agent and the pin each call was served from.
    let lines: Vec<Value> = audit_lines(&log, 5);
    for (agent, version, digest) in [("alpha", "1.0", &a), ("beta", "2.0", &b)] {
        let of_agent: Vec<&Value> = lines.iter().filter(|l| l["agent"] == agent).collect();
        assert_eq!(of_agent.len(), 2, "{lines:#?}");
        for line in of_agent {
            assert_eq!(
                (&line["skill"], &line["version"], &line["hash"]),
                (&json!("pdf"), &json!(version), &json!(digest)),
                "{line}"
            );
        }
        let md = file(agent, "SKILL.md");
        assert!(
            lines
                .iter()
                .any(|l| l["agent"] == agent && l["sha256"] == sha256(md.as_bytes()))
        );
    }
}

#[test]
fn skill_creator_from_two_repositories_prepares_and_serves_per_agent() {
    let (anthropic, openai) = (Repo::new(), Repo::new());
    anthropic.bundle("skill-creator", " (anthropic)");
    openai.bundle("skill-creator", " (openai)");
    let commits = [anthropic.commit("skills"), openai.commit("skills")];
    let world = World::new();
    let mut yaml = String::from("agents:\n");
    for ((agent, repo), commit) in [("claude", &anthropic), ("codex", &openai)]
        .iter()
        .zip(&commits)
    {
        yaml.push_str(&format!(
            "  {agent}:\n    skills:\n      - git:\n          source: {}\n          revision: {commit}\n          \
             directory: corpus-{agent}\n          root: skills\n          track: main\n          approved:\n            \
             - {{ name: skill-creator, version: '1.0.0', hash: {} }}\n",
            repo.file_url(),
            repo.digest("skill-creator"),
        ));
    }
    world.descriptor(&yaml);
    let (out, report) = prepare_json(world.tmp.path());
    assert!(out.status.success(), "{}\n{report}", stderr(&out));
    assert_eq!(report["fetches"], 2, "{report}");
    for (agent, from) in [("claude", "anthropic"), ("codex", "openai")] {
        let published = world.path(&format!("corpus-{agent}/current/skill-creator/SKILL.md"));
        let text = fs_err::read_to_string(&published).expect("published");
        assert!(text.contains(&format!("({from})")), "{text}");
        let out = world.run(&["prompt", "-c", "skillfold.yaml", "--agent", agent]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(stdout(&out).contains(&format!("The skill-creator skill ({from}).")));
        let mut server = Server::start_with(&world, &["--agent", agent]);
        server.initialize("2025-06-18");
        server.line(&read(2, "skill://skill-creator/SKILL.md").to_string());
        let answer = server.next(WAIT).expect("an answer");
        assert_eq!(
            answer["result"]["contents"][0]["text"],
            text.as_str(),
            "{answer}"
        );
        server.close();
    }
    let verify = world.run(&["verify", "-c", "skillfold.yaml"]);
    assert!(verify.status.success(), "{}", stderr(&verify));

    // `outdated` says which source of the name moved: openai's changes, anthropic's does not.
    openai.bundle("skill-creator", " (openai, revised)");
    openai.commit("revise");
    let out = world.run(&["outdated", "-c", "skillfold.yaml", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let report: Value = serde_json::from_str(&stdout(&out)).expect("json");
    let status = |location: &str| {
        report["sources"]
            .as_array()
            .and_then(|all| all.iter().find(|s| s["location"] == location))
            .map(|s| {
                (
                    s["url"].clone(),
                    s["bundles"][0]["name"].clone(),
                    s["bundles"][0]["status"].clone(),
                )
            })
            .unwrap_or_default()
    };
    assert_eq!(
        status("agents.claude.skills[0].git"),
        (
            json!(anthropic.file_url()),
            json!("skill-creator"),
            json!("unchanged")
        ),
        "{report}"
    );
    assert_eq!(
        status("agents.codex.skills[0].git"),
        (
            json!(openai.file_url()),
            json!("skill-creator"),
            json!("changed")
        ),
        "{report}"
    );
}

#[test]
fn two_roots_of_one_commit_give_two_agents_their_own_bundle_from_one_fetch() {
    let repo = Repo::new();
    for team in ["team-a", "team-b"] {
        repo.write(
            &format!("skills/{team}/pdf/SKILL.md"),
            format!("---\nname: pdf\ndescription: The PDF skill of {team}.\n---\n# {team}\n")
                .as_bytes(),
        );
    }
    let commit = repo.commit("two teams");
    let world = World::new();
    let mut yaml = String::from("agents:\n");
    for team in ["team-a", "team-b"] {
        yaml.push_str(&format!(
            "  {team}:\n    skills:\n      - git:\n          source: {}\n          revision: {commit}\n          \
             directory: corpus-{team}\n          root: skills/{team}\n          approved:\n            \
             - {{ name: pdf, version: '1', hash: {} }}\n",
            repo.file_url(),
            repo.digest(&format!("{team}/pdf")),
        ));
    }
    world.descriptor(&yaml);
    let (out, report) = prepare_json(world.tmp.path());
    assert!(out.status.success(), "{}\n{report}", stderr(&out));
    assert_eq!(
        report["fetches"], 1,
        "one (URL, commit), one fetch: {report}"
    );
    for team in ["team-a", "team-b"] {
        let out = world.run(&["load", "-c", "skillfold.yaml", "--agent", team, "pdf"]);
        assert!(out.status.success(), "{}", stderr(&out));
        let output: Value = serde_json::from_str(&stdout(&out)).expect("json");
        assert_eq!(output["content"], format!("# {team}\n"));
    }
    let verify = world.run(&["verify", "-c", "skillfold.yaml"]);
    assert!(verify.status.success(), "{}", stderr(&verify));
}

#[test]
fn conflicts_within_one_selection_are_refused_naming_both_entries() {
    let (world, a, b) = two_pdfs();
    let common = fs_err::read_to_string(&world.config).expect("read");
    let common = common
        .lines()
        .nth(1)
        .expect("the defaults' entry")
        .to_owned();
    let extra = |dir: &str, hash: &str, version: &str| local_entry("pdf", version, dir, hash);
    let cases = [
        // Two extras of one agent.
        (
            format!(
                "skills:\n{common}\nagents:\n  alpha:\n    skills:\n  {}  {}",
                extra("alpha/pdf", &a, "'1.0'"),
                extra("beta/pdf", &b, "'2.0'")
            ),
            "agents.alpha.skills[1].local",
            "agents.alpha.skills[0].local",
        ),
        // An extra against a default.
        (
            format!(
                "skills:\n{common}\n{}agents:\n  beta:\n    skills:\n  {}",
                extra("alpha/pdf", &a, "'1.0'"),
                extra("beta/pdf", &b, "'2.0'")
            ),
            "agents.beta.skills[0].local",
            "skills[1].local",
        ),
    ];
    for (yaml, here, there) in cases {
        world.descriptor(&yaml);
        let out = world.run(&["check", "-c", "skillfold.yaml"]);
        assert_eq!(out.status.code(), Some(2), "{yaml}");
        let err = stderr(&out);
        let line = err
            .lines()
            .find(|l| l.contains("[conflicting_pins]"))
            .unwrap_or_else(|| panic!("{err}"));
        assert!(
            line.contains(&format!("skillfold.yaml: {here}: ")) && line.contains(there),
            "{line}"
        );
    }
    // The same pin twice (a default and an extra, from two directories) counts once.
    world.descriptor(&format!(
        "skills:\n{common}\n{}agents:\n  alpha:\n    skills:\n  {}",
        extra("alpha/pdf", &a, "'1.0'"),
        extra("alpha/pdf", &a, "'1.0'")
    ));
    let out = world.run(&["prompt", "-c", "skillfold.yaml", "--agent", "alpha"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out).matches("<name>\npdf\n</name>").count(),
        1,
        "{}",
        stdout(&out)
    );
}

#[test]
fn push_of_the_whole_descriptor_refuses_two_bundles_under_one_name_and_push_agent_pushes_its_own() {
    let (world, a, _) = two_pdfs();
    let out = world.path("image");
    let refused = world.run(&[
        "push",
        "-c",
        "skillfold.yaml",
        "--oci-layout",
        out.to_str().expect("utf8"),
    ]);
    assert_eq!(refused.status.code(), Some(2));
    let err = stderr(&refused);
    assert!(
        err.contains("[conflicting_skills]") && err.contains("agents.alpha.skills[0].local"),
        "{err}"
    );
    assert!(err.contains("hint:") && err.contains("--agent"), "{err}");
    assert!(!out.exists(), "nothing may be written");
    let pushed = world.run(&[
        "push",
        "-c",
        "skillfold.yaml",
        "--oci-layout",
        out.to_str().expect("utf8"),
        "--agent",
        "alpha",
        "--json",
    ]);
    assert!(pushed.status.success(), "{}", stderr(&pushed));
    let report: Value = serde_json::from_str(&stdout(&pushed)).expect("json");
    let pdf = report["bundles"]
        .as_array()
        .and_then(|all| all.iter().find(|b| b["name"] == "pdf"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        (&pdf["version"], &pdf["hash"]),
        (&json!("1.0"), &json!(a)),
        "{report}"
    );
}

#[test]
fn the_host_api_serves_each_agent_its_own_bundle() {
    let (world, a, b) = two_pdfs();
    let built = skillfold::Runtime::builder()
        .agent("alpha", |x| {
            x.local("pdf", "1.0", world.path("alpha/pdf"), a.as_str())
        })
        .agent("beta", |x| {
            x.local("pdf", "2.0", world.path("beta/pdf"), b.as_str())
        })
        .build()
        .expect("two agents may pin one name differently");
    assert!(built.refused.is_empty(), "{:?}", built.refused);
    for (agent, digest) in [("alpha", &a), ("beta", &b)] {
        let catalogue = built.runtime.catalogue(Some(agent)).expect("catalogue");
        let input = json!({"name": "pdf", "reference": "references/guide.md"});
        let (output, record) = catalogue.call("load_skill", &input).expect("served");
        assert_eq!(output["content"], format!("{agent} guide\n"));
        assert_eq!(record.hash.as_deref(), Some(digest.as_str()));
    }
    let refused = skillfold::Runtime::builder()
        .agent("alpha", |x| {
            x.local("pdf", "1.0", world.path("alpha/pdf"), a.as_str())
                .local("pdf", "2.0", world.path("beta/pdf"), b.as_str())
        })
        .build()
        .unwrap_err();
    assert_eq!(refused.code().to_string(), "conflicting_pins");
    assert_eq!(refused.problems[0].location, "agents.alpha.skills[1].local");
}
