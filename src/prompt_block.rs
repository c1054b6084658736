//! The `<available_skills>` block, in the exact format of skills-ref `to-prompt`: no indentation,
//! every tag and value on its own line, name and description HTML-escaped (`& < > " '`), the
//! location as is.

/// One skill of the block.
#[derive(Debug, Clone)]
pub struct Entry<'a> {
    /// The skill name.
    pub name: &'a str,
    /// Its description.
    pub description: &'a str,
    /// The path of its `SKILL.md`.
    pub location: std::borrow::Cow<'a, str>,
}

/// The block (without a trailing newline).
pub fn render(entries: &[Entry<'_>]) -> String {
    let mut lines: Vec<String> = vec!["<available_skills>".into()];
    for e in entries {
        lines.extend([
            "<skill>".into(),
            "<name>".into(),
            html_escape(e.name),
            "</name>".into(),
            "<description>".into(),
            html_escape(e.description),
            "</description>".into(),
            "<location>".into(),
            e.location.to_string(),
            "</location>".into(),
            "</skill>".into(),
        ]);
    }
    lines.push("</available_skills>".into());
    lines.join("\n")
}

/// Python's `html.escape(s, quote=True)`.
pub fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#x27;"),
            c => out.push(c),
        }
    }
    out
}
