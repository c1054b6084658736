//! The grammar of a branch name written by hand (`track:` of a Git source): the rules of
//! `git check-ref-format --branch` that matter there ([`check_branch`]).

/// The rules of `git check-ref-format --branch` that matter for a name written by hand: the
/// reason when `name` breaks one.
pub fn check_branch(name: &str) -> Result<(), &'static str> {
    let bad = if name.is_empty() {
        "it is empty"
    } else if name.starts_with('-') || name.starts_with('/') || name.ends_with('/') {
        "it starts with `-` or `/`, or ends with `/`"
    } else if name.starts_with("refs/") {
        "write the branch name alone, without `refs/heads/`"
    } else if name.ends_with(".lock") || name.ends_with('.') {
        "it ends with `.lock` or `.`"
    } else if name.contains("..") || name.contains("//") || name.contains("@{") {
        "it holds `..`, `//` or `@{`"
    } else if name
        .chars()
        .any(|c| c.is_control() || c.is_whitespace() || "~^:?*[\\".contains(c))
    {
        "it holds a space, a control character or one of ~ ^ : ? * [ \\"
    } else if name.split('/').any(|segment| segment.starts_with('.')) {
        "a segment starts with `.`"
    } else {
        return Ok(());
    };
    Err(bad)
}
