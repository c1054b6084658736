//! The bound on an effective selection (issue "Installs in a blink" §1): 16 unique skills by
//! default (`too_many_skills` on every surface), raised explicitly by the descriptor's
//! `selection: { max_skills: N }` (16 to 1,024) and then applied everywhere — `check`, `install`,
//! `prompt`, `serve`, the runtime a host opens or builds — to every agent's selection.

use skillfold::Runtime;

use super::mcp_framing::Server;
use super::support::bin::{stderr, stdout};
use super::support::world::{World, local_entry};

/// A world of `n` small local bundles, `s0` … `s{n-1}`: their descriptor entries, in order.
fn bundles(world: &World, n: usize) -> Vec<String> {
    (0..n)
        .map(|i| {
            let name = format!("s{i}");
            let hash = world.bundle(
                &name,
                &format!("---\nname: {name}\ndescription: Skill number {i}.\n---\n# {name}\n"),
                &[],
            );
            local_entry(&name, "'1'", &name, &hash)
        })
        .collect()
}

/// The descriptor: `defaults` entries for every agent, `selection` as written (or none).
fn descriptor(world: &World, defaults: &[String], selection: Option<&str>) {
    let selection = selection.map_or_else(String::new, |s| format!("selection: {s}\n"));
    world.descriptor(&format!("{selection}skills:\n{}", defaults.concat()));
}

/// The entries of an `<available_skills>` block: its `<skill>` lines.
fn block_entries(prompt: &str) -> usize {
    prompt.lines().filter(|l| *l == "<skill>").count()
}

fn code_of(out: &std::process::Output) -> (Option<i32>, String) {
    (out.status.code(), stderr(out))
}

#[test]
fn seventeen_skills_are_refused_by_default_on_every_surface() {
    let world = World::new();
    let entries = bundles(&world, 17);
    descriptor(&world, &entries, None);
    for args in [
        &["check", "-c", "skillfold.yaml"][..],
        &["prepare", "-c", "skillfold.yaml"],
        &[
            "install",
            "-c",
            "skillfold.yaml",
            "--into",
            ".claude/skills",
        ],
        &["prompt", "-c", "skillfold.yaml"],
    ] {
        let (code, err) = code_of(&world.run(args));
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(err.contains("too_many_skills"), "{args:?}: {err}");
    }
    assert!(!world.path(".claude/skills/s0").exists());
    let Err(skillfold::OpenError::Invalid(refused)) = Runtime::open(&world.config) else {
        panic!("17 skills must be refused");
    };
    assert_eq!(refused.code().to_string(), "too_many_skills");
    assert_eq!(refused.problems[0].location, "skills");
    assert!(
        refused.problems[0].message.contains("max_skills"),
        "the refusal says how to raise the bound: {}",
        refused.problems[0].message
    );
}

#[test]
fn max_skills_17_accepts_seventeen_on_check_prepare_install_prompt_serve_and_the_runtime() {
    let world = World::new();
    let entries = bundles(&world, 17);
    descriptor(&world, &entries, Some("{ max_skills: 17 }"));

    let check = world.run(&["check", "-c", "skillfold.yaml"]);
    assert!(check.status.success(), "{}", stderr(&check));
    assert!(
        stdout(&check).contains(
            "17 unique skill(s); agents: none (defaults only); at most 17 skills per selection"
        ),
        "check reports the raised bound: {}",
        stdout(&check)
    );

    let prepare = world.run(&["prepare", "-c", "skillfold.yaml"]);
    assert!(prepare.status.success(), "{}", stderr(&prepare));

    let install = world.run(&[
        "install",
        "-c",
        "skillfold.yaml",
        "--into",
        ".claude/skills",
    ]);
    assert!(install.status.success(), "{}", stderr(&install));
    for i in 0..17 {
        assert!(
            world
                .path(&format!(".claude/skills/s{i}/SKILL.md"))
                .is_file()
        );
    }
    let verify = world.run(&[
        "verify",
        "-c",
        "skillfold.yaml",
        "--installed",
        ".claude/skills",
    ]);
    assert!(verify.status.success(), "{}", stderr(&verify));

    let prompt = world.run(&["prompt", "-c", "skillfold.yaml"]);
    assert!(prompt.status.success(), "{}", stderr(&prompt));
    assert_eq!(block_entries(&stdout(&prompt)), 17);

    let catalogue = world.catalogue(None);
    assert_eq!(catalogue.skills().count(), 17);

    let mut server = Server::start(&world);
    let hello = server.initialize("2025-06-18");
    let instructions = hello["result"]["instructions"].as_str().unwrap_or_default();
    assert_eq!(block_entries(instructions), 17, "{hello}");
    let (status, _) = server.close();
    assert_eq!(status, Some(0));
}

#[test]
fn the_raised_bound_still_holds_every_agents_selection() {
    let world = World::new();
    let entries = bundles(&world, 18);
    world.descriptor(&format!(
        "selection: {{ max_skills: 17 }}\nskills:\n{}agents:\n  fits:\n    skills: []\n  over:\n    skills:\n  {}",
        entries[..17].concat(),
        entries[17],
    ));
    let (code, err) = code_of(&world.run(&["check", "-c", "skillfold.yaml"]));
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("agents.over: agent `over` would get 18 unique skills, over the bound of 17"),
        "{err}"
    );
    assert!(!err.contains("agents.fits"), "{err}");
}

#[test]
fn max_skills_outside_16_to_1024_is_refused_by_check_with_its_code() {
    let world = World::new();
    let entries = bundles(&world, 1);
    for (value, want) in [
        ("1025", Some("max_skills_over_ceiling")),
        ("15", Some("invalid_max_skills")),
        ("0", Some("invalid_max_skills")),
        ("1024", None),
        ("16", None),
    ] {
        descriptor(
            &world,
            &entries,
            Some(&format!("{{ max_skills: {value} }}")),
        );
        let out = world.run(&["check", "-c", "skillfold.yaml"]);
        match want {
            Some(code) => {
                let (status, err) = code_of(&out);
                assert_eq!(status, Some(2), "{value}: {err}");
                assert!(
                    err.contains(&format!("selection.max_skills: {value} is")),
                    "{value}: {err}"
                );
                assert!(err.contains(&format!("[{code}]")), "{value}: {err}");
            }
            None => assert!(out.status.success(), "{value}: {}", stderr(&out)),
        }
    }
    // Not a number, or an unknown key: the shape is wrong.
    for selection in ["{ max_skills: many }", "{ max_skill: 64 }"] {
        descriptor(&world, &entries, Some(selection));
        let (status, err) = code_of(&world.run(&["check", "-c", "skillfold.yaml"]));
        assert_eq!(status, Some(2), "{selection}: {err}");
        assert!(err.contains("descriptor_syntax"), "{selection}: {err}");
    }
}

#[test]
fn the_host_api_raises_the_bound_as_the_descriptor_does() {
    let world = World::new();
    let builder = || {
        (0..17).fold(Runtime::builder().base(world.tmp.path()), |b, i| {
            let name = format!("s{i}");
            let hash = world.bundle(
                &name,
                &format!("---\nname: {name}\ndescription: Skill {i}.\n---\n# {name}\n"),
                &[],
            );
            b.local(name.clone(), "1", name, hash)
        })
    };
    let refused = builder()
        .build()
        .expect_err("17 skills over the default bound");
    assert_eq!(refused.code().to_string(), "too_many_skills");
    let built = builder().max_skills(17).build().expect("the raised bound");
    let catalogue = built.runtime.catalogue(None).expect("catalogue");
    assert_eq!(catalogue.skills().count(), 17);
    let over = builder()
        .max_skills(1025)
        .build()
        .expect_err("over the ceiling");
    assert_eq!(over.code().to_string(), "max_skills_over_ceiling");
}
