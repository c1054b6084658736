//! One verified skill, `big` 1.0, whose `SKILL.md` body the test chooses, with one supporting
//! file (`references/notes.md`): the runtime the body-serving tests of `load_skill`, the MCP
//! handler and the HTTP splice each load.

/// A runtime serving `big` (written under `dir`) with `body` as its `SKILL.md` body.
pub fn runtime(dir: &std::path::Path, body: &str) -> crate::runtime::Runtime {
    let bundle = dir.join("big");
    fs_err::create_dir_all(bundle.join("references")).expect("mkdir");
    fs_err::write(
        bundle.join("SKILL.md"),
        format!("---\nname: big\ndescription: A \"quoted\" skill.\n---\n{body}"),
    )
    .expect("write");
    fs_err::write(bundle.join("references/notes.md"), "notes\n").expect("write");
    let hash = crate::format::bundle::Bundle::read_dir(&bundle)
        .expect("bundle")
        .digest()
        .to_string();
    crate::runtime::Runtime::builder()
        .local("big", "1.0", &bundle, &hash)
        .build()
        .expect("runtime")
        .runtime
}
