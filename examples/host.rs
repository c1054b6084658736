//! A host registering per-agent skills through the library: `cargo run --example host`.
//!
//! It builds two agents' catalogues with the typed builder (local bundles from
//! `examples/skills/`, verified against their pins), adds a policy hook, prints what a host
//! puts in each agent's system prompt and tool list, and serves a `load_skill` call the way a
//! model would make it, keeping the record for the transcript.

#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "an example host shows its results on the terminal"
)]

use std::path::Path;

use serde_json::json;
use skillfold::Runtime;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let skills = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/skills");
    // Every agent gets `commit-message`; `writer` adds `changelog-writer`, `analyst` adds
    // `csv-profiler`. The hashes are the reviewed digests (`skillfold hash examples/skills/*`).
    // The builder applies the descriptor's checks, then reads every bundle with the safe reader
    // and verifies it against its pin; what does not verify is returned, never served.
    let built = Runtime::builder()
        .local(
            "commit-message",
            "1.0.0",
            skills.join("commit-message"),
            "b83e94b7c3e63e32663143c05ad2bd91f1ef552dd3d76b881bd2a1d90463088e",
        )
        .agent("writer", |a| {
            a.local(
                "changelog-writer",
                "1.0",
                skills.join("changelog-writer"),
                "e7393af7bb7c7bf3f4269983c78a83617e020853a8405cdabe465e464f64c0ce",
            )
        })
        .agent("analyst", |a| {
            a.local(
                "csv-profiler",
                "1.0",
                skills.join("csv-profiler"),
                "f1c40afd786dd9e23190d4e875c2c62f193e1e6769d235644e17aa86083215e2",
            )
        })
        .build()?;
    let runtime = built.runtime;
    for failure in &built.refused {
        eprintln!("not served: {failure}");
    }

    for agent in ["writer", "analyst"] {
        let catalogue = runtime.catalogue(Some(agent))?.with_policy(move |access| {
            // A host may refuse anything here; it sees exactly what would be served.
            eprintln!(
                "[policy] {agent} reads {} {}",
                access.skill.name(),
                access.reference.unwrap_or("(instructions)")
            );
            Ok(())
        });
        println!("=== agent `{agent}`: system prompt block ===");
        println!("{}", catalogue.prompt().unwrap_or_default());
        println!("=== agent `{agent}`: tools ===");
        println!("{}", serde_json::to_string_pretty(&catalogue.tools())?);

        // What a model's tool call looks like, and what the host keeps.
        let first = catalogue
            .skills()
            .last()
            .map(|s| s.pin().name.to_string())
            .unwrap_or_default();
        let (output, record) = catalogue
            .call("load_skill", &json!({ "name": first, "reference": null }))
            .map_err(|e| e.to_string())?;
        println!(
            "=== agent `{agent}`: load_skill({first}) returned {} bytes of instructions ===",
            output["content"].as_str().map_or(0, str::len)
        );
        println!(
            "record for the transcript: {}",
            serde_json::to_string(&record)?
        );
        println!();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    /// `cargo test --examples` (the README's test command) runs the host end to end.
    #[test]
    fn the_host_builds_both_agents_and_serves_a_call() {
        super::main().expect("the example host runs");
    }
}
