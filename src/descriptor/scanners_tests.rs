use super::*;
use crate::descriptor::parse;
use crate::descriptor::plan::resolve_scanners;
use std::path::Path;
use std::time::Duration;

const H: &str = "8a531fcd108297bda8aa470d42f427779daad537bb2a31addef29087b5ab9f9e";
const D: &str = "sha256:0000000000000000000000000000000000000000000000000000000000000001";

fn codes(yaml: &str) -> Vec<(String, String)> {
    let d = parse(yaml).unwrap_or_else(|e| panic!("{e}\n{yaml}"));
    match crate::descriptor::check(&d, Path::new("/base")) {
        Ok(_) => vec![],
        Err(p) => p
            .into_iter()
            .map(|p| (p.code.as_str().to_owned(), p.location))
            .collect(),
    }
}

fn local(scans: &str, require: &str) -> String {
    format!(
        "scanners:\n  audit: {{ command: [audit, --offline], timeout: 30 }}\n\
         skills:\n  - local:\n      name: a\n      version: '1'\n      directory: /l/a\n      \
         hash: {H}\n      require_scan: [{require}]\n      scans: [{scans}]\n"
    )
}

fn scan(verdict: &str, hash: &str) -> String {
    format!(
        "{{ scanner: audit, digest: '{D}', verdict: {verdict}, hash: {hash}, at: \
         '2026-12-07T23:00:00Z', summary: '0 findings' }}"
    )
}

#[test]
fn a_pass_for_the_current_hash_satisfies_the_policy_and_nothing_else_does() {
    assert_eq!(codes(&local(&scan("pass", H), "audit")), vec![]);
    let missing = vec![("scan_missing".to_owned(), "skills[0].local".to_owned())];
    assert_eq!(codes(&local("", "audit")), missing);
    assert_eq!(codes(&local(&scan("findings", H), "audit")), missing);
    let other = H.replace('8', "9");
    assert_eq!(codes(&local(&scan("pass", &other), "audit")), missing);
    // Without the policy, a verdict is a record: a findings verdict alone is no refusal.
    assert_eq!(codes(&local(&scan("findings", H), "")), vec![]);
}

#[test]
fn an_agent_s_policy_covers_the_defaults_it_gets() {
    let yaml = format!(
        "{}agents:\n  sec:\n    require_scan: [audit]\n    skills: []\n",
        local("", "")
    );
    assert_eq!(
        codes(&yaml),
        vec![("scan_missing".to_owned(), "skills[0].local".to_owned())]
    );
    let d = parse(&yaml).unwrap();
    let problems = crate::descriptor::check(&d, Path::new("/base")).unwrap_err();
    assert!(
        problems[0].message.contains("`agents.sec.require_scan`")
            && problems[0].message.contains("`audit`")
            && problems[0].message.contains("`a`"),
        "{}",
        problems[0].message
    );
}

#[test]
fn malformed_scanners_requirements_and_verdicts_are_refused() {
    let undeclared = local("", "nobody");
    assert!(
        codes(&undeclared)
            .iter()
            .any(|(c, l)| c == "invalid_scanner" && l == "skills[0].local.require_scan[0]")
    );
    let bad_scan = local(
        &scan("pass", H)
            .replace(D, "sha256:xyz")
            .replace("2026-12-07T23:00:00Z", "yesterday"),
        "",
    );
    let got = codes(&bad_scan);
    for key in ["digest", "at"] {
        assert!(
            got.contains(&(
                "invalid_scan".to_owned(),
                format!("skills[0].local.scans[0].{key}")
            )),
            "{key}: {got:?}"
        );
    }
    let long = local(&scan("pass", H).replace("0 findings", &"x".repeat(201)), "");
    assert_eq!(codes(&long)[0].0, "invalid_scan");
    let twice = local(&format!("{}, {}", scan("pass", H), scan("pass", H)), "");
    assert_eq!(codes(&twice)[0].0, "invalid_scan");
    for scanners in [
        "scanners:\n  Bad: { command: [x] }\n",
        "scanners:\n  s: { command: [] }\n",
        "scanners:\n  s: { command: [x], timeout: 0 }\n",
        "scanners:\n  s: { command: [x], timeout: 3601 }\n",
        "scanners:\n  s: { command: [x, ''] }\n",
    ] {
        let got = codes(scanners);
        assert_eq!(got.len(), 1, "{scanners}: {got:?}");
        assert_eq!(got[0].0, "invalid_scanner", "{scanners}");
    }
    // Strict shapes: unknown keys and verdicts are syntax errors, with their line.
    for yaml in [
        "scanners:\n  s: { command: [x], shell: true }\n".to_owned(),
        local(&scan("maybe", H), ""),
        local(&scan("pass", H).replace("summary", "note"), ""),
    ] {
        assert!(parse(&yaml).is_err(), "{yaml}");
    }
}

#[test]
fn a_scanner_resolves_relative_paths_against_the_descriptor() {
    let d =
        parse("scanners:\n  a: { command: [bin/scan, -q] }\n  b: { command: [scan] }\n").unwrap();
    let s = resolve_scanners(&d.scanners, Path::new("/base")).unwrap();
    assert_eq!(s["a"].program, Path::new("/base/bin/scan"));
    assert_eq!(s["a"].args, ["-q"]);
    assert_eq!(s["a"].timeout, Duration::from_secs(120));
    assert_eq!(s["b"].program, Path::new("scan"));
}

#[test]
fn dates_are_rfc_3339_utc() {
    assert!(is_utc_date_time("2026-12-07T23:00:00Z"));
    for bad in [
        "2026-12-07 23:00:00Z",
        "2026-13-07T23:00:00Z",
        "2026-12-07T24:00:00Z",
        "2026-12-07T23:00:00+01:00",
        "2026-1a-07T23:00:00Z",
    ] {
        assert!(!is_utc_date_time(bad), "{bad}");
    }
}
