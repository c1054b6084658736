//! `skillfold token`: a new token printed once, its hash appended to the tokens file (the mode
//! kept, 0600 for a new file), a file or an agent the server would refuse refused before
//! anything is written, and the server accepting the token at its agent's endpoint only.

use std::os::unix::fs::PermissionsExt as _;

use super::http_raw::{INITIALIZE, post};
use super::mcp_client::Listening;
use super::serve_http::tokens_world;
use super::support::bin::{skillfold_in, stderr, stdout};

fn mode(path: &std::path::Path) -> u32 {
    fs_err::metadata(path).expect("stat").permissions().mode() & 0o7777
}

#[test]
fn a_token_is_shown_once_its_hash_appended_and_the_server_accepts_it() {
    let world = tokens_world();
    let dir = world.tmp.path();
    let file = world.path("new-tokens.json");

    let out = skillfold_in(
        dir,
        &["token", "--agent", "writer", "--tokens", "new-tokens.json"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let writer = stdout(&out).trim().to_owned();
    assert!(writer.starts_with("sft_") && writer.len() == 68, "{writer}");
    assert_eq!(mode(&file), 0o600, "a new tokens file is the owner's alone");
    let text = fs_err::read_to_string(&file).expect("read");
    assert!(!text.contains(&writer), "the token itself is never written");
    assert!(
        text.contains(&format!(
            "{{\"agent\": \"writer\", \"sha256\": \"{}\"}}",
            super::support::world::sha256(writer.as_bytes())
        )),
        "{text}"
    );

    // A second token: appended, the entries before it byte for byte, the mode kept.
    fs_err::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).expect("chmod");
    let out = skillfold_in(dir, &["token", "--defaults", "--tokens", "new-tokens.json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let default = stdout(&out).trim().to_owned();
    assert_ne!(default, writer);
    let second = fs_err::read_to_string(&file).expect("read");
    assert!(second.starts_with(text.trim_end().trim_end_matches(']').trim_end()));
    assert_eq!(mode(&file), 0o640);
    assert!(stderr(&out).contains("(2 token(s))"), "{}", stderr(&out));

    // An agent the descriptor does not name: refused as the server refuses it; nothing written.
    let out = skillfold_in(
        dir,
        &["token", "--agent", "nobody", "--tokens", "new-tokens.json"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("[invalid_tokens]"),
        "{}",
        stderr(&out)
    );
    assert!(stdout(&out).is_empty(), "no token for nothing");
    assert_eq!(fs_err::read_to_string(&file).expect("read"), second);
    // A link at the path is refused, not followed.
    std::os::unix::fs::symlink(&file, world.path("link.json")).expect("link");
    let out = skillfold_in(dir, &["token", "--defaults", "--tokens", "link.json"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(fs_err::read_to_string(&file).expect("read"), second);

    // The server reads the file: each token opens its own endpoint only.
    let server = Listening::start(
        &world.path("skillfold.yaml"),
        &["--tokens", file.to_str().expect("utf8")],
        &[],
    );
    let answer = post(
        server.port,
        "/agents/writer/mcp",
        Some(&writer),
        &[],
        INITIALIZE,
    );
    assert_eq!(answer.status, 200, "{}", answer.body);
    let answer = post(server.port, "/mcp", Some(&default), &[], INITIALIZE);
    assert_eq!(answer.status, 200, "{}", answer.body);
    let answer = post(server.port, "/mcp", Some(&writer), &[], INITIALIZE);
    assert_eq!(answer.status, 403, "{}", answer.body);
}
