//! `skillfold serve` driven by the official MCP Python SDK client: the session (instructions,
//! tools and every call compared with the library's own answers, the Skills extension with every
//! file read back and checked against its listed digest and size), hot reload, and the command's
//! exits — over stdio and over Streamable HTTP (`serve --listen`), where the official TypeScript
//! SDK client runs a session through a reload too.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::{Value, json};
use skillfold::Catalogue;

use super::mcp_client::{Listening, Report, scenario};
use super::support::bin::{BIN, skillfold_in, stderr, stdout};
use super::support::git::Repo;
use super::support::world::{World as TempWorld, sha256};

/// Git bundles `alpha` (rich frontmatter, a reference whose name needs percent-encoding, a
/// helper script) and `beta` as defaults; a local bundle `gamma` for agent `ops`.
struct World {
    _repo: Repo,
    world: TempWorld,
}

/// A wrapper, not a [`TempWorld`]: the Git repository (the source its descriptor pins) must live
/// as long as the world, and the SDK sessions on it are this file's.
impl std::ops::Deref for World {
    type Target = TempWorld;

    fn deref(&self) -> &TempWorld {
        &self.world
    }
}

impl World {
    fn new() -> World {
        let repo = Repo::new();
        repo.write(
            "skills/alpha/SKILL.md",
            b"---\nname: alpha\ndescription: The alpha skill.\nlicense: MIT\nmetadata:\n  author: Fixture\n  version: \"1.0.0\"\n---\n# alpha\n\nSee references/guide.md.\n",
        );
        repo.write("skills/alpha/references/guide.md", b"# Guide for alpha\n");
        repo.write("skills/alpha/references/a b#1.md", b"odd name\n");
        repo.write(
            "skills/alpha/scripts/hello.py",
            b"import sys\nprint('hello', *sys.argv[1:])\n",
        );
        repo.bundle("beta", "");
        let commit = repo.commit("bundles");
        let world = TempWorld::new();
        let gamma_hash = world.bundle(
            "gamma",
            "---\nname: gamma\ndescription: The gamma skill.\n---\n# gamma\n",
            &[],
        );
        world.descriptor(&format!(
            "skills:\n  - git:\n      source: {url}\n      revision: {commit}\n      directory: corpus\n      root: skills\n      approved:\n        - {{ name: alpha, version: \"1.0.0\", hash: {a} }}\n        - {{ name: beta, version: \"1.0.0\", hash: {b} }}\nagents:\n  ops:\n    skills:\n      - local: {{ name: gamma, version: \"1\", directory: gamma, hash: {gamma_hash} }}\n",
            url = repo.file_url(),
            a = repo.digest("alpha"),
            b = repo.digest("beta"),
        ));
        let out = world.run(&["prepare", "-c", "skillfold.yaml"]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        World { _repo: repo, world }
    }

    fn serve(&self, extra: &[&str]) -> Vec<String> {
        let mut args = vec![BIN, "serve", "-c", self.config.to_str().expect("utf8")];
        args.extend_from_slice(extra);
        args.into_iter().map(str::to_owned).collect()
    }

    fn session(&self, mode: &str) -> Report {
        let server = self.serve(&["--agent", "ops"]);
        let server: Vec<&str> = server.iter().map(String::as_str).collect();
        scenario(&["session", mode], &server, &[])
    }
}

/// The URI the Skills extension lists a file of skill `name` under (docs/mcp.md): `skill://`, the
/// name, then each segment of `path` percent-encoded but for what RFC 3986 lets a path segment
/// hold as it is (unreserved characters, sub-delimiters, `:` and `@`).
fn file_uri(name: &str, path: &str) -> String {
    let segments: Vec<String> = path
        .split('/')
        .map(|segment| {
            segment
                .bytes()
                .map(|byte| {
                    if byte.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@".contains(&byte) {
                        char::from(byte).to_string()
                    } else {
                        format!("%{byte:02X}")
                    }
                })
                .collect()
        })
        .collect();
    format!("skill://{name}/{}", segments.join("/"))
}

/// The tool call result the library gives for `tool(input)`, as the MCP result must carry it.
fn expected_call(catalogue: &Catalogue, tool: &str, input: &Value) -> (bool, Value, Option<Value>) {
    match catalogue.call(tool, input) {
        Ok((output, record)) => (false, output, Some(serde_json::to_value(record).unwrap())),
        Err(e) => (true, e.to_json(), None),
    }
}

/// Checks one SDK session's report against the library, aspect by aspect.
fn check_session(report: &Report, mode: &str, world: &World, remote: bool) {
    let r = &report.json;
    let catalogue = world.catalogue(Some("ops"));
    check_handshake(report, mode);
    check_instructions(r, world, &catalogue, remote);
    check_tools(r, &catalogue);
    check_calls(r, &catalogue);
    check_output_schema(report);
    let total_files = check_skills_list(r, &catalogue);
    check_reads(r, total_files);
    check_get(r, mode);
    check_resources_list(r, total_files);
    check_directory(r);
}

/// The handshake: the negotiated revision, the Skills extension, resources and tools.
fn check_handshake(report: &Report, mode: &str) {
    let r = &report.json;
    let version = if mode == "legacy" {
        "2025-11-25"
    } else {
        "2026-07-28"
    };
    assert_eq!(r["protocol_version"], version, "{}", report.stderr);
    assert_eq!(
        r["capabilities"]["extensions"]["io.modelcontextprotocol/skills"],
        json!({"directoryRead": true})
    );
    assert!(r["capabilities"]["resources"].is_object());
    assert!(r["capabilities"]["tools"].is_object());
}

/// Instructions: the agent's catalogue prompt, exactly what `skillfold prompt` prints.
fn check_instructions(r: &Value, world: &World, catalogue: &Catalogue, remote: bool) {
    let prompt = skillfold_in(
        world.tmp.path(),
        &["prompt", "-c", "skillfold.yaml", "--agent", "ops"],
    );
    // Over HTTP the locations are `skill://` URIs, not the server's paths.
    if remote {
        assert_eq!(r["instructions"], catalogue.remote_prompt().unwrap());
        assert!(r["instructions"].as_str().unwrap().contains("skill://"));
    } else {
        assert_eq!(r["instructions"], stdout(&prompt));
        assert_eq!(r["instructions"], catalogue.prompt().unwrap());
    }
}

/// Tools: exactly the catalogue's — name, description, schema and hints — whatever they are.
fn check_tools(r: &Value, catalogue: &Catalogue) {
    let tools = r["tools"].as_array().unwrap();
    let expected = catalogue.tools();
    assert_eq!(tools.len(), expected.len());
    for (tool, def) in tools.iter().zip(&expected) {
        assert_eq!(tool["name"], def.name);
        assert_eq!(tool["description"], def.description);
        assert_eq!(tool["inputSchema"], def.input_schema);
        assert_eq!(tool["outputSchema"], def.output_schema);
        let hints = serde_json::to_value(def.annotations).unwrap();
        for hint in ["readOnlyHint", "idempotentHint", "openWorldHint"] {
            assert_eq!(
                tool["annotations"][hint], hints[hint],
                "{} {hint}",
                def.name
            );
        }
    }
    let load_skill = &tools[0];
    assert_eq!(load_skill["name"], "load_skill");
    assert_eq!(load_skill["annotations"]["readOnlyHint"], true);
    assert_eq!(load_skill["annotations"]["idempotentHint"], true);
}

/// Every call: the library's own result, as structured content and as text; errors are tool
/// errors carrying the JSON error object as text only (structured content is for results that
/// match the output schema); successes carry the record in `_meta`.
fn check_calls(r: &Value, catalogue: &Catalogue) {
    let inputs = [
        (
            "body",
            "load_skill",
            json!({"name": "alpha", "reference": null}),
        ),
        (
            "reference",
            "load_skill",
            json!({"name": "alpha", "reference": "references/guide.md"}),
        ),
        (
            "refused_reference",
            "load_skill",
            json!({"name": "alpha", "reference": "../secrets"}),
        ),
        (
            "unknown_skill",
            "load_skill",
            json!({"name": "nope", "reference": null}),
        ),
        (
            "bad_input",
            "load_skill",
            json!({"name": "alpha", "extra": 1}),
        ),
        ("omitted_reference", "load_skill", json!({"name": "alpha"})),
        ("unknown_tool", "no_such_tool", json!({})),
    ];
    for (key, tool, input) in inputs {
        let call = &r["calls"][key];
        let (is_error, structured, record) = expected_call(catalogue, tool, &input);
        assert_eq!(
            call["isError"].as_bool().unwrap_or(false),
            is_error,
            "{key}: {call}"
        );
        let text: Value =
            serde_json::from_str(call["content"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(text, structured, "{key}");
        if is_error {
            assert!(call.get("structuredContent").is_none(), "{key}: {call}");
        } else {
            assert_eq!(call["structuredContent"], structured, "{key}");
        }
        assert_eq!(
            call["_meta"].get("skillfold/record").cloned(),
            record,
            "{key}"
        );
    }
    assert_eq!(
        r["calls"]["body"]["structuredContent"]["content"],
        "# alpha\n\nSee references/guide.md.\n"
    );
    let error_code = |key: &str| {
        let text = r["calls"][key]["content"][0]["text"].as_str().unwrap();
        serde_json::from_str::<Value>(text).unwrap()["error"]["code"].clone()
    };
    assert_eq!(error_code("refused_reference"), "validation_error");
    assert_eq!(error_code("unknown_tool"), "unknown_tool");
    // An omitted nullable argument reads as null: the body, as the explicit `null` gives it.
    assert_eq!(
        r["calls"]["omitted_reference"]["structuredContent"],
        r["calls"]["body"]["structuredContent"]
    );
}

/// The SDK validated every successful result against the advertised output schema, and does
/// refuse one that does not match it.
fn check_output_schema(report: &Report) {
    let r = &report.json;
    assert_eq!(
        r["output_schema_checks"],
        json!({"listed": true, "tampered_refused": true}),
        "{}",
        report.stderr
    );
}

/// skills/list: one entry per skill; every file listed once with the digest and size of its
/// exact bytes; the frontmatter verbatim; provenance in `_meta`. Returns the number of files.
fn check_skills_list(r: &Value, catalogue: &Catalogue) -> usize {
    let skills = r["skills"].as_array().unwrap();
    let names: Vec<&str> = skills
        .iter()
        .map(|s| s["frontmatter"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["alpha", "beta", "gamma"]);
    let mut total_files = 0;
    for (entry, snapshot) in skills.iter().zip(catalogue.skills()) {
        let name = snapshot.pin().name.as_str();
        assert_eq!(entry["uri"], format!("skill://{name}/SKILL.md"));
        let listed: Vec<(String, String, u64)> = entry["resources"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                (
                    f["uri"].as_str().unwrap().to_owned(),
                    f["digest"].as_str().unwrap().to_owned(),
                    f["size"].as_u64().unwrap(),
                )
            })
            .collect();
        let expected: Vec<(String, String, u64)> = snapshot
            .files()
            .iter()
            .map(|file| {
                let bytes = snapshot.read(file).expect("verified bytes");
                (
                    file_uri(name, file.path()),
                    format!("sha256:{}", sha256(&bytes)),
                    bytes.len() as u64,
                )
            })
            .collect();
        assert_eq!(listed, expected, "{name}");
        let unique: BTreeSet<&String> = listed.iter().map(|(u, _, _)| u).collect();
        assert_eq!(unique.len(), listed.len(), "{name}: each file once");
        total_files += listed.len();
        assert_eq!(
            entry["_meta"]["skillfold/pin"]["hash"],
            snapshot.pin().hash.to_string()
        );
    }
    assert_eq!(
        skills[0]["frontmatter"],
        json!({"name": "alpha", "description": "The alpha skill.", "license": "MIT",
               "metadata": {"author": "Fixture", "version": "1.0.0"}})
    );
    assert!(
        skills[0]["resources"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["uri"] == "skill://alpha/references/a%20b%231.md"),
        "a path is percent-encoded where a URI needs it"
    );
    assert_eq!(skills[0]["_meta"]["skillfold/origin"]["kind"], "git");
    assert_eq!(skills[2]["_meta"]["skillfold/origin"]["kind"], "local");
    total_files
}

/// Every listed file read back through resources/read verifies against the listing.
fn check_reads(r: &Value, total_files: usize) {
    let reads = r["reads"].as_array().unwrap();
    assert_eq!(reads.len(), total_files);
    for read in reads {
        assert_eq!(read["digest"], read["listed_digest"], "{read}");
        assert_eq!(read["size"], read["listed_size"], "{read}");
    }
    let mime = |uri: &str| {
        reads
            .iter()
            .find(|r| r["uri"] == uri)
            .map(|r| r["mime_type"].clone())
    };
    assert_eq!(mime("skill://alpha/SKILL.md"), Some(json!("text/markdown")));
    assert_eq!(
        mime("skill://alpha/scripts/hello.py"),
        Some(json!("text/x-python"))
    );
}

/// skills/get returns the same entry; unknown skills, files and directories are -32602
/// (a 2025 session keeps rmcp's resource-not-found code for resources/read).
fn check_get(r: &Value, mode: &str) {
    let skills = r["skills"].as_array().unwrap();
    assert_eq!(r["get"], skills[0]);
    assert_eq!(r["get_unknown"]["code"], -32602);
    let not_found = if mode == "legacy" { -32002 } else { -32602 };
    assert_eq!(r["read_unknown"]["code"], not_found);
    assert_eq!(r["directory_of_file"]["code"], -32602);
}

/// resources/list: every file once; SKILL.md named after its skill, with its description.
fn check_resources_list(r: &Value, total_files: usize) {
    let resources = r["resources"].as_array().unwrap();
    assert_eq!(resources.len(), total_files);
    let skill_md = resources
        .iter()
        .find(|x| x["uri"] == "skill://alpha/SKILL.md")
        .unwrap();
    assert_eq!(skill_md["name"], "alpha");
    assert_eq!(skill_md["description"], "The alpha skill.");
    assert_eq!(skill_md["mimeType"], "text/markdown");
}

/// resources/directory/read of the skill root: its direct children.
fn check_directory(r: &Value) {
    let children: Vec<(&str, &str)> = r["directory"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["uri"].as_str().unwrap(), c["mimeType"].as_str().unwrap()))
        .collect();
    assert_eq!(
        children,
        [
            ("skill://alpha/references", "inode/directory"),
            ("skill://alpha/scripts", "inode/directory"),
            ("skill://alpha/SKILL.md", "text/markdown"),
        ]
    );
}

#[test]
fn python_sdk_session_over_the_initialize_handshake() {
    let world = World::new();
    let report = world.session("legacy");
    check_session(&report, "legacy", &world, false);
}

#[test]
fn python_sdk_session_over_2026_07_28_discovery() {
    let world = World::new();
    let report = world.session("auto");
    check_session(&report, "auto", &world, false);
}

/// `skill_run_script` through MCP for an approved helper: offered with its open-world hint, and
/// the same result as the library gives.
#[test]
fn python_sdk_runs_an_approved_helper_script() {
    let world = World::new();
    approve_hello(&world);
    let server = world.serve(&["--agent", "ops"]);
    let server: Vec<&str> = server.iter().map(String::as_str).collect();
    let input = json!({"skill": "alpha", "script": "scripts/hello.py", "args": ["world"]});
    let report = scenario(
        &["session", "legacy"],
        &server,
        &[("MCP_RUN_SCRIPT", &input.to_string())],
    );
    let tool = report.json["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "skill_run_script")
        .expect("skill_run_script is offered")
        .clone();
    assert_eq!(tool["annotations"]["openWorldHint"], true);
    let call = &report.json["calls"]["run_script"];
    assert_ne!(call["isError"], true, "{call}");
    let catalogue = world.catalogue(Some("ops"));
    let (_, expected, _) = expected_call(&catalogue, "skill_run_script", &input);
    assert_eq!(call["structuredContent"]["stdout"], expected["stdout"]);
    assert!(
        call["structuredContent"]
            .to_string()
            .contains("hello world"),
        "{call}"
    );
}

/// Approves `alpha/scripts/hello.py` by the SHA-256 of its bytes, in the descriptor.
/// The bearer tokens of `ops` and of the defaults, and the tokens file listing their hashes.
fn tokens_file(world: &World) -> PathBuf {
    let path = world.tmp.path().join("tokens.json");
    fs_err::write(
        &path,
        json!([
            {"agent": "ops", "sha256": sha256(b"ops-token")},
            {"agent": null, "sha256": sha256(b"default-token")},
        ])
        .to_string(),
    )
    .expect("write");
    path
}

#[test]
fn python_sdk_session_over_streamable_http_with_a_token() {
    let world = World::new();
    let tokens = tokens_file(&world);
    let server = Listening::start(
        &world.config,
        &["--tokens", tokens.to_str().expect("utf8")],
        &[],
    );
    for mode in ["legacy", "auto"] {
        let report = scenario(
            &["session", mode],
            &[&server.url("/agents/ops/mcp")],
            &[("MCP_BEARER_TOKEN", "ops-token")],
        );
        check_session(&report, mode, &world, true);
    }
    // The defaults' endpoint serves the defaults alone.
    let report = scenario(
        &["session", "legacy"],
        &[&server.url("/mcp")],
        &[("MCP_BEARER_TOKEN", "default-token")],
    );
    let names: Vec<&str> = report.json["skills"]
        .as_array()
        .expect("skills")
        .iter()
        .map(|s| s["frontmatter"]["name"].as_str().expect("name"))
        .collect();
    assert_eq!(names, ["alpha", "beta"], "{}", server.log());
}

fn approve_hello(world: &World) {
    let script = world
        .tmp
        .path()
        .join("corpus/current/alpha/scripts/hello.py");
    let bytes = fs_err::read(&script).expect("the prepared helper");
    let mut descriptor = fs_err::read_to_string(&world.config).expect("read");
    descriptor.push_str(&format!(
        "scripts:\n  allowlist:\n    - {{ skill: alpha, script: scripts/hello.py, sha256: {} }}\n",
        sha256(&bytes)
    ));
    fs_err::write(&world.config, descriptor).expect("write the allowlist");
}

/// A repository whose second commit adds `beta`, and the descriptors of both commits.
pub(super) struct ReloadWorld {
    _repo: Repo,
    world: TempWorld,
}

/// A wrapper for the same reason as [`World`]: the repository outlives the world.
impl std::ops::Deref for ReloadWorld {
    type Target = TempWorld;

    fn deref(&self) -> &TempWorld {
        &self.world
    }
}

fn git_descriptor(repo: &Repo, commit: &str, names: &[&str]) -> String {
    let approved: String = names
        .iter()
        .map(|n| {
            format!(
                "        - {{ name: {n}, version: \"1.0.0\", hash: {} }}\n",
                repo.digest(n)
            )
        })
        .collect();
    format!(
        "skills:\n  - git:\n      source: {}\n      revision: {commit}\n      directory: corpus\n      root: skills\n      approved:\n{approved}",
        repo.file_url()
    )
}

impl ReloadWorld {
    pub(super) fn new() -> ReloadWorld {
        let repo = Repo::new();
        repo.bundle("alpha", "");
        let first = repo.commit("alpha");
        let v1 = git_descriptor(&repo, &first, &["alpha"]);
        repo.bundle("beta", "");
        let second = repo.commit("beta");
        let v2 = git_descriptor(&repo, &second, &["alpha", "beta"]);
        let world = TempWorld::new();
        let write = |name: &str, text: &str| {
            fs_err::write(world.path(name), text).expect("write");
        };
        write("skillfold.yaml", &v1);
        write("v2.yaml", &v2);
        write("broken.yaml", "skills: [\n");
        write("v1.yaml", &v1);
        let out = world.run(&["prepare", "-c", "skillfold.yaml"]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        ReloadWorld { _repo: repo, world }
    }

    /// `name` inside the world, as an argument.
    pub(super) fn path(&self, name: &str) -> String {
        self.tmp.path().join(name).display().to_string()
    }

    /// Replaces the served descriptor with the prepared `name` (`v2.yaml`, …) in one rename, as
    /// an operator's deploy does; a watching server reloads it.
    pub(super) fn switch_to(&self, name: &str) {
        let bytes = fs_err::read(self.path(name)).expect("descriptor");
        let staged = self.tmp.path().join("skillfold.yaml.new");
        fs_err::write(&staged, bytes).expect("write");
        fs_err::rename(&staged, &self.config).expect("replace");
    }
}

#[test]
fn python_sdk_sees_hot_reloads_and_failed_reloads_keep_serving() {
    let world = ReloadWorld::new();
    let config = world.config.display().to_string();
    let server = [
        BIN,
        "serve",
        "-c",
        &config,
        "--watch",
        "--poll-interval",
        "0.2",
    ];
    let (v2, broken, v1) = (
        world.path("v2.yaml"),
        world.path("broken.yaml"),
        world.path("v1.yaml"),
    );
    let report = scenario(&["reload", &config, &v2, &broken, &v1], &server, &[]);
    let r = &report.json;
    let log = &report.stderr;

    assert_eq!(r["start"], json!(["alpha"]), "{log}");
    assert_eq!(r["start_enum"], json!(["alpha"]));
    // An edit re-prepares (fetching the new pinned commit) and swaps the catalogue.
    assert_eq!(r["next"], json!(["alpha", "beta"]), "{log}");
    assert_eq!(r["next_enum"], json!(["alpha", "beta"]));
    assert_ne!(r["next_call"]["isError"], true);
    assert!(r["next_seconds"].as_f64().unwrap() < 15.0);
    // A broken descriptor: the previous catalogue keeps serving; the failure is logged and
    // retried with a doubling delay, from twice the poll interval.
    assert_eq!(r["broken"], json!(["alpha", "beta"]), "{log}");
    assert_ne!(r["broken_call"]["isError"], true);
    assert!(log.contains("reload failed [descriptor_syntax]"), "{log}");
    assert!(
        log.contains("still serving the previous catalogue (2 skill(s)); retrying in 0.4 s"),
        "{log}"
    );
    assert!(log.contains("retrying in 0.8 s"), "{log}");
    // SIGHUP asks for a reload at once and resets the delay.
    assert_eq!(r["server_pids"], 1);
    assert!(log.contains("(SIGHUP)"), "{log}");
    let after_hup = &log[log.find("(SIGHUP)").unwrap()..];
    assert!(after_hup.contains("retrying in 0.4 s"), "{log}");
    assert_eq!(r["after_sighup"], json!(["alpha", "beta"]));
    // A good edit clears the error.
    assert_eq!(r["last"], json!(["alpha"]), "{log}");
    assert!(log.contains("reloaded: serving 1 skill(s)"), "{log}");
    // The session was told about each change.
    let notes = r["notifications"].as_array().unwrap();
    assert!(
        notes.contains(&json!("notifications/tools/list_changed")),
        "{notes:?}"
    );
    assert!(
        notes.contains(&json!("notifications/resources/list_changed")),
        "{notes:?}"
    );
}

#[test]
fn python_sdk_sees_hot_reloads_over_streamable_http() {
    let world = ReloadWorld::new();
    let tokens = world.tmp.path().join("tokens.json");
    fs_err::write(
        &tokens,
        json!([{"agent": null, "sha256": sha256(b"reload-token")}]).to_string(),
    )
    .expect("write");
    let server = Listening::start(
        &world.config,
        &[
            "--watch",
            "--poll-interval",
            "0.2",
            "--tokens",
            tokens.to_str().expect("utf8"),
        ],
        &[],
    );
    let config = world.config.display().to_string();
    let (v2, broken, v1) = (
        world.path("v2.yaml"),
        world.path("broken.yaml"),
        world.path("v1.yaml"),
    );
    let pid = server.pid().to_string();
    let report = scenario(
        &["reload", &config, &v2, &broken, &v1],
        &[&server.url("/mcp")],
        &[
            ("MCP_SERVER_PID", &pid),
            ("MCP_BEARER_TOKEN", "reload-token"),
        ],
    );
    let r = &report.json;
    let log = server.log();
    assert_eq!(r["start"], json!(["alpha"]), "{log}");
    assert_eq!(r["next"], json!(["alpha", "beta"]), "{log}");
    assert_ne!(r["next_call"]["isError"], true);
    assert_eq!(r["broken"], json!(["alpha", "beta"]), "{log}");
    assert!(log.contains("reload failed [descriptor_syntax]"), "{log}");
    assert!(log.contains("(SIGHUP)"), "{log}");
    assert_eq!(r["last"], json!(["alpha"]), "{log}");
    let notes = r["notifications"].as_array().unwrap();
    assert!(
        notes.contains(&json!("notifications/tools/list_changed")),
        "{notes:?}"
    );
}

#[test]
fn typescript_sdk_session_over_streamable_http_sees_a_reload() {
    let world = ReloadWorld::new();
    let tokens = world.tmp.path().join("tokens.json");
    fs_err::write(
        &tokens,
        json!([{"agent": null, "sha256": sha256(b"ts-token")}]).to_string(),
    )
    .expect("write");
    let server = Listening::start(
        &world.config,
        &[
            "--watch",
            "--poll-interval",
            "0.2",
            "--tokens",
            tokens.to_str().expect("utf8"),
        ],
        &[],
    );
    let (node, stderr_lines, seen) =
        super::mcp_client::typescript_session(&server.url("/mcp"), "ts-token");
    // The descriptor moves to v2 (alpha and beta); the watcher reloads and tells the session.
    world.switch_to("v2.yaml");
    let out = node.wait_with_output().expect("client");
    let rest: Vec<String> = stderr_lines.map_while(Result::ok).collect();
    assert!(
        out.status.success(),
        "client failed: {seen}{}\n{}",
        rest.join("\n"),
        server.log()
    );
    let r: Value = serde_json::from_slice(&out.stdout).expect("JSON report");
    assert_eq!(r["server"]["name"], "skillfold");
    assert!(
        r["tools"]
            .as_array()
            .unwrap()
            .contains(&json!("load_skill"))
    );
    assert_eq!(r["skills"], json!(["alpha"]));
    assert_ne!(r["body"]["isError"], true, "{r}");
    assert!(
        r["body"]["structuredContent"]["content"]
            .as_str()
            .unwrap()
            .contains("# alpha")
    );
    assert_ne!(r["reference"]["isError"], true, "{r}");
    assert!(
        r["resource"]["contents"][0]["text"]
            .as_str()
            .unwrap()
            .contains("name: alpha"),
        "{r}"
    );
    assert_eq!(r["list_changed"], true, "{}", server.log());
    assert_eq!(r["skills_after"], json!(["alpha", "beta"]));
}

#[test]
fn serve_refuses_a_bad_descriptor_or_agent_and_ends_when_the_client_leaves() {
    let world = ReloadWorld::new();
    let run = |args: &[&str]| {
        Command::new(BIN)
            .args(args)
            .current_dir(world.tmp.path())
            .stdin(Stdio::null())
            .output()
            .expect("run")
    };
    let out = run(&["serve", "-c", "broken.yaml"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("[descriptor_syntax]"),
        "{}",
        stderr(&out)
    );
    let out = run(&["serve", "-c", "skillfold.yaml", "--agent", "nobody"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("[unknown_agent]"), "{}", stderr(&out));
    // stdin closed before any message: nothing to serve, a clean exit.
    let out = run(&["serve", "-c", "skillfold.yaml"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(out.stdout.is_empty());
}
