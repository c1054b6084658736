//! A host that talks to a model API directly (no framework): `cargo run --example model_requests`.
//!
//! It turns one agent's catalogue into the request bodies of the OpenAI Chat Completions and
//! Anthropic Messages APIs (system prompt block plus `tools`), takes a tool call in each API's
//! response shape — here a scripted response, since this example sends nothing over the network —
//! serves it with [`Catalogue::call`], and builds the follow-up request carrying the tool result.
//! A refused call goes back to the model as an error result with its stable code, so the model can
//! correct itself; the record of what was served stays with the host.

#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "an example host shows its results on the terminal"
)]

use std::path::Path;

use serde_json::{Value, json};
use skillfold::ToolFormat;
use skillfold::{Catalogue, Runtime};

/// The agent's catalogue: two verified local bundles from `examples/skills/`.
fn catalogue() -> Result<Catalogue, Box<dyn std::error::Error>> {
    let skills = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/skills");
    let built = Runtime::builder()
        .local(
            "commit-message",
            "1.0.0",
            skills.join("commit-message"),
            "b83e94b7c3e63e32663143c05ad2bd91f1ef552dd3d76b881bd2a1d90463088e",
        )
        .local(
            "changelog-writer",
            "1.0",
            skills.join("changelog-writer"),
            "e7393af7bb7c7bf3f4269983c78a83617e020853a8405cdabe465e464f64c0ce",
        )
        .build()?;
    Ok(built.runtime.catalogue(None)?)
}

/// Serves one tool call; a refusal becomes the `{"error": …}` object the model should see.
fn serve(catalogue: &Catalogue, name: &str, arguments: &Value) -> (String, bool) {
    match catalogue.call(name, arguments) {
        Ok((output, record)) => {
            eprintln!(
                "served {} bytes of {} ({})",
                record.bytes, record.skill, record.sha256
            );
            (output.to_string(), false)
        }
        Err(refusal) => (json!({ "error": refusal }).to_string(), true),
    }
}

/// OpenAI Chat Completions: the request, a scripted assistant turn with a tool call, and the
/// follow-up request with the `tool` message.
fn openai(catalogue: &Catalogue, task: &str, call: &Value) -> Value {
    let mut messages = vec![
        json!({ "role": "system", "content": catalogue.prompt().unwrap_or_default() }),
        json!({ "role": "user", "content": task }),
    ];
    let request = json!({
        "model": "gpt-5",
        "messages": messages,
        "tools": ToolFormat::OpenAi.tools(&catalogue.tools()),
    });
    println!(
        "OpenAI request: {}",
        serde_json::to_string_pretty(&request).unwrap_or_default()
    );
    // What `choices[0].message` holds when the model calls a tool: arguments as a JSON string.
    let assistant = json!({
        "role": "assistant",
        "content": null,
        "tool_calls": [{
            "id": "call_1",
            "type": "function",
            "function": { "name": "load_skill", "arguments": call.to_string() },
        }],
    });
    messages.push(assistant.clone());
    for tool_call in assistant["tool_calls"].as_array().into_iter().flatten() {
        let name = tool_call["function"]["name"].as_str().unwrap_or_default();
        let arguments = serde_json::from_str(
            tool_call["function"]["arguments"]
                .as_str()
                .unwrap_or("null"),
        )
        .unwrap_or(Value::Null);
        let (content, _refused) = serve(catalogue, name, &arguments);
        messages
            .push(json!({ "role": "tool", "tool_call_id": tool_call["id"], "content": content }));
    }
    json!({ "model": request["model"], "messages": messages, "tools": request["tools"] })
}

/// Anthropic Messages: the request, a scripted assistant turn with a `tool_use` block, and the
/// follow-up request with the `tool_result` block.
fn anthropic(catalogue: &Catalogue, task: &str, call: &Value) -> Value {
    let request = json!({
        "model": "claude-sonnet-4-5",
        "max_tokens": 4096,
        "system": catalogue.prompt().unwrap_or_default(),
        "messages": [{ "role": "user", "content": task }],
        "tools": ToolFormat::Anthropic.tools(&catalogue.tools()),
    });
    println!(
        "Anthropic request: {}",
        serde_json::to_string_pretty(&request).unwrap_or_default()
    );
    // What the response's `content` holds when the model calls a tool: arguments as an object.
    let assistant =
        json!([{ "type": "tool_use", "id": "toolu_1", "name": "load_skill", "input": call }]);
    let mut results = Vec::new();
    for block in assistant.as_array().into_iter().flatten() {
        if block["type"] == "tool_use" {
            let name = block["name"].as_str().unwrap_or_default();
            let (content, refused) = serve(catalogue, name, &block["input"]);
            results.push(json!({
                "type": "tool_result",
                "tool_use_id": block["id"],
                "content": content,
                "is_error": refused,
            }));
        }
    }
    let mut follow_up = request.clone();
    follow_up["messages"] = json!([
        { "role": "user", "content": task },
        { "role": "assistant", "content": assistant },
        { "role": "user", "content": results },
    ]);
    follow_up
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let catalogue = catalogue()?;
    let task = "Write the commit message for the staged change.";
    let call = json!({ "name": "commit-message", "reference": null });
    let openai = openai(&catalogue, task, &call);
    println!(
        "OpenAI follow-up: {}",
        serde_json::to_string_pretty(&openai)?
    );
    let anthropic = anthropic(&catalogue, task, &call);
    println!(
        "Anthropic follow-up: {}",
        serde_json::to_string_pretty(&anthropic)?
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_apis_get_the_tools_and_the_served_body_comes_back_as_the_tool_result() {
        let catalogue = catalogue().expect("verified");
        let call = json!({ "name": "commit-message", "reference": null });
        let openai = openai(&catalogue, "task", &call);
        assert_eq!(openai["tools"][0]["function"]["name"], "load_skill");
        let messages = openai["messages"].as_array().expect("messages");
        assert_eq!(
            messages[0]["content"],
            catalogue.prompt().expect("a prompt block")
        );
        let result: Value =
            serde_json::from_str(messages[3]["content"].as_str().expect("text")).expect("JSON");
        assert_eq!(result["name"], "commit-message");
        assert!(result["content"].as_str().expect("body").contains("# "));

        let anthropic = anthropic(&catalogue, "task", &call);
        assert_eq!(anthropic["tools"][0]["name"], "load_skill");
        assert!(anthropic["tools"][0]["input_schema"].is_object());
        let block = &anthropic["messages"][2]["content"][0];
        assert_eq!(
            (block["type"].as_str(), block["is_error"].as_bool()),
            (Some("tool_result"), Some(false))
        );
    }

    #[test]
    fn a_refused_call_goes_back_as_an_error_result_with_its_code() {
        let catalogue = catalogue().expect("verified");
        let anthropic = anthropic(
            &catalogue,
            "task",
            &json!({ "name": "../etc", "reference": null }),
        );
        let block = &anthropic["messages"][2]["content"][0];
        assert_eq!(block["is_error"], true);
        let error: Value =
            serde_json::from_str(block["content"].as_str().expect("text")).expect("JSON");
        assert!(error["error"]["code"].is_string(), "{error}");
    }
}
