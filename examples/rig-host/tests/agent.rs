//! A rig agent served by one skillfold agent's catalogue, driven by rig's scripted stand-in model
//! (`MockCompletionModel`, rig-core's `test-utils`): no provider, no network. The script plays
//! the model's side; the assertions read what the agent sent the model on each turn.

use std::path::Path;

use rig_agent::AgentBuilder;
use rig_core::completion::CompletionRequest;
use rig_core::message::{Message, ToolResultContent, UserContent};
use rig_core::test_utils::{MockCompletionModel, MockTurn};
use serde_json::{Value, json};
use skillfold::Catalogue;
use skillfold_rig_host::{Transcript, rig_tools, with_skills};

const ANALYST_PREAMBLE: &str = "You are a careful data analyst.";

/// The `analyst` agent's catalogue: `commit-message` (every agent's) and `csv-profiler` (its own),
/// local bundles from the repository's `examples/skills`, verified against their pins.
fn analyst_catalogue() -> Catalogue {
    let skills = Path::new(env!("CARGO_MANIFEST_DIR")).join("../skills");
    let built = skillfold::Runtime::builder()
        .local(
            "commit-message",
            "1.0.0",
            skills.join("commit-message"),
            "b83e94b7c3e63e32663143c05ad2bd91f1ef552dd3d76b881bd2a1d90463088e",
        )
        .agent("analyst", |a| {
            a.local(
                "csv-profiler",
                "1.0",
                skills.join("csv-profiler"),
                "f1c40afd786dd9e23190d4e875c2c62f193e1e6769d235644e17aa86083215e2",
            )
        })
        .build()
        .expect("valid");
    assert!(
        built.refused.is_empty(),
        "bundles not served: {:?}",
        built.refused
    );
    built.runtime.catalogue(Some("analyst")).expect("catalogue")
}

/// The body of a `SKILL.md`: everything after the line that closes its frontmatter.
fn skill_body(path: &Path) -> String {
    let text = fs_err::read_to_string(path).expect("SKILL.md is readable");
    let after_open = text
        .strip_prefix("---\n")
        .expect("SKILL.md opens frontmatter");
    let close = after_open
        .find("\n---\n")
        .expect("SKILL.md closes frontmatter");
    after_open[close + "\n---\n".len()..].to_owned()
}

/// An agent over `catalogue` whose model follows `script`; the model is returned too, since its
/// clones share the script and the requests it received.
fn scripted_agent(
    catalogue: Catalogue,
    transcript: &Transcript,
    script: Vec<MockTurn>,
) -> (rig_agent::Agent, MockCompletionModel) {
    let model = MockCompletionModel::from_turns(script);
    let agent = with_skills(
        AgentBuilder::new(model.clone()).preamble(ANALYST_PREAMBLE),
        catalogue,
        transcript,
    )
    .build();
    (agent, model)
}

/// The text of every tool result in a request's history, with the tool that produced it. Each
/// one must be an ordinary result: a skillfold refusal is an answer for the model, not a rig
/// tool failure.
fn tool_results(request: &CompletionRequest) -> Vec<(String, String)> {
    request
        .chat_history
        .iter()
        .filter_map(|message| match message {
            Message::User { content } => Some(content),
            Message::System { .. } | Message::Assistant(_) => None,
        })
        .flatten()
        .filter_map(|part| match part {
            UserContent::ToolResult(result) => Some(result),
            _ => None,
        })
        .map(|result| {
            assert!(!result.is_error, "{result:?}");
            let text = result
                .content
                .iter()
                .map(|block| match block {
                    ToolResultContent::Text(text) => text.text.clone(),
                    other => panic!("skillfold tools answer with text, got {other:?}"),
                })
                .collect::<String>();
            (result.name.to_string(), text)
        })
        .collect()
}

#[tokio::test(flavor = "current_thread")]
async fn loads_a_skill_through_a_rig_agent() {
    let catalogue = analyst_catalogue();
    let skillfold_tools = catalogue.tools();
    let prompt_block = catalogue.prompt().expect("the analyst has skills");
    let transcript = Transcript::new();
    let answer = "The file has 3 columns; I will profile it with csv-profiler's script.";
    let (agent, model) = scripted_agent(
        catalogue,
        &transcript,
        vec![
            MockTurn::tool_call(
                "call-1",
                "load_skill",
                json!({"name": "csv-profiler", "reference": null}),
            ),
            MockTurn::text(answer),
        ],
    );

    let response = agent
        .prompt("What is in sales.csv?")
        .max_turns(4)
        .await
        .expect("the run settles");
    assert_eq!(response.output(), answer);

    let requests = model.requests();
    assert_eq!(requests.len(), 2, "one tool round, then the answer");

    // The system prompt: the host's own instructions, then skillfold's block.
    let system = requests[0]
        .system_instructions()
        .expect("the agent sends a system prompt");
    assert!(system.starts_with(ANALYST_PREAMBLE), "{system}");
    assert!(system.contains(prompt_block.trim()), "{system}");

    // The tools: skillfold's definitions, name, description and schema unchanged.
    let sent = &requests[0].tools;
    assert_eq!(sent.len(), skillfold_tools.len());
    let load_skill = skillfold_tools
        .iter()
        .find(|tool| tool.name == "load_skill")
        .expect("skillfold offers load_skill");
    let offered = sent
        .iter()
        .find(|tool| tool.name.as_str() == "load_skill")
        .expect("the model is offered load_skill");
    assert_eq!(offered.parameters, load_skill.input_schema);
    assert_eq!(offered.description, load_skill.description);

    // The second request answers the call with the skill's instructions.
    assert!(tool_results(&requests[0]).is_empty());
    let results = tool_results(&requests[1]);
    assert_eq!(results.len(), 1, "{results:?}");
    let (tool, text) = &results[0];
    assert_eq!(tool, "load_skill");
    let output: Value = serde_json::from_str(text).expect("the tool result is JSON");
    let body =
        skill_body(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../skills/csv-profiler/SKILL.md"));
    assert_eq!(output["name"], "csv-profiler");
    assert_eq!(
        output["content"].as_str().expect("content is text").trim(),
        body.trim()
    );

    // The record went to the host, and nothing of it to the model.
    let records = transcript.records();
    assert_eq!(records.len(), 1, "{records:?}");
    let record = &records[0];
    assert_eq!(record.skill, "csv-profiler");
    assert_eq!(record.tool, "load_skill");
    assert_eq!(record.agent.as_deref(), Some("analyst"));
    assert_eq!(record.reference, None);
    assert_eq!(
        record.bytes,
        output["content"].as_str().unwrap().len() as u64
    );
    assert!(!text.contains(&record.sha256), "the record is not sent");
}

#[tokio::test(flavor = "current_thread")]
async fn a_hostile_reference_comes_back_as_a_tool_error() {
    let transcript = Transcript::new();
    let answer = "I cannot read that file.";
    let (agent, model) = scripted_agent(
        analyst_catalogue(),
        &transcript,
        vec![
            MockTurn::tool_call(
                "call-1",
                "load_skill",
                json!({"name": "csv-profiler", "reference": "../../etc/passwd"}),
            ),
            MockTurn::text(answer),
        ],
    );

    let response = agent
        .prompt("Show me /etc/passwd through the csv skill.")
        .max_turns(4)
        .await
        .expect("a refused call does not fail the run");
    assert_eq!(response.output(), answer);

    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    let results = tool_results(&requests[1]);
    assert_eq!(results.len(), 1, "{results:?}");
    let refusal: Value = serde_json::from_str(&results[0].1).expect("the refusal is JSON");
    assert_eq!(refusal["error"]["code"], "validation_error", "{refusal}");
    assert!(
        refusal["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()),
        "{refusal}"
    );
    let valid = refusal["error"]["valid"]
        .as_array()
        .expect("the refusal lists the valid references");
    assert!(
        valid
            .iter()
            .any(|r| r == "references/interpreting-profiles.md"),
        "{refusal}"
    );
    assert!(transcript.records().is_empty(), "nothing was served");
}

#[tokio::test(flavor = "current_thread")]
async fn tools_without_a_transcript_still_serve() {
    let catalogue = analyst_catalogue();
    let tools = rig_tools(catalogue.clone());
    let names: Vec<String> = tools.iter().map(|t| t.name().to_string()).collect();
    let expected: Vec<&str> = catalogue.tools().iter().map(|t| t.name).collect();
    assert_eq!(names, expected);

    let load_skill = tools
        .iter()
        .find(|t| t.name().as_str() == "load_skill")
        .expect("load_skill");
    let output = load_skill
        .execute(json!({"name": "commit-message", "reference": null}))
        .await
        .expect("a served call is a successful rig tool result");
    let text = output.as_text().expect("text output");
    let served: Value = serde_json::from_str(text).expect("JSON");
    assert_eq!(served["name"], "commit-message");

    let output = load_skill
        .execute(json!({"name": "no-such-skill", "reference": null}))
        .await
        .expect("a refusal is a successful rig tool result too");
    let refused: Value = serde_json::from_str(output.as_text().expect("text")).expect("JSON");
    assert!(refused["error"]["code"].is_string(), "{refused}");
}
