// The set-up the library's doctests share, included as one hidden line:
//
//     # let (skills, built, catalogue) = include!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/doctest/example.rs"));
//
// An expression, not a module: the example skills folder, a runtime built in code from its
// `commit-message` bundle (pinned to its digest), and that runtime's default catalogue.
{
    let skills = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/skills");
    let built = skillfold::Runtime::builder()
        .local(
            "commit-message",
            "1.0.0",
            skills.join("commit-message"),
            "b83e94b7c3e63e32663143c05ad2bd91f1ef552dd3d76b881bd2a1d90463088e",
        )
        .build()
        .unwrap();
    let catalogue = built.runtime.catalogue(None).unwrap();
    (skills, built, catalogue)
}
