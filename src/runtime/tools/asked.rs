//! Which skill a tool call's arguments name, as the client wrote it: what an audit line shows
//! for a call that was refused, where no record of a served skill exists.

use serde_json::Value;

use super::{load_skill, read_reference, run_script};

/// The skill a call's arguments name, as the client wrote it (`name` for [`load_skill`], `skill`
/// for [`read_reference`] and [`run_script`]); `None` for another tool or an argument that is no
/// string. Client text: whoever shows it must bound and escape it.
pub fn skill<'a>(tool: &str, input: &'a Value) -> Option<&'a str> {
    let argument = match tool {
        load_skill::NAME => "name",
        read_reference::NAME | run_script::NAME => "skill",
        _ => return None,
    };
    input.get(argument).and_then(Value::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_tool_names_its_skill_in_its_own_argument() {
        let input = serde_json::json!({"name": "pdf", "skill": "docx"});
        assert_eq!(skill(load_skill::NAME, &input), Some("pdf"));
        assert_eq!(skill(read_reference::NAME, &input), Some("docx"));
        assert_eq!(skill(run_script::NAME, &input), Some("docx"));
        assert_eq!(skill("made_up", &input), None);
        assert_eq!(
            skill(load_skill::NAME, &serde_json::json!({"name": 7})),
            None
        );
    }
}
