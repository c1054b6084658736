//! The descriptor's own bounds, each checked before the work it bounds: its size before the file
//! is read, the nesting of its collections before it is deserialised.
//!
//! The descriptor is read whole and handed to `serde_yaml`, whose parser slows down
//! quadratically with nested flow collections (100,000 `[` took tens of seconds). A descriptor
//! needs six levels; the bound is the bundle dialect's 64 ([`crate::format::yaml::MAX_NESTING`]). The
//! nesting is measured by one pass over `saphyr-parser`'s event stream that stops at the first
//! collection over the bound, so a hostile file is refused in the time it takes to read 64
//! brackets. Text that `saphyr-parser` cannot read is refused here too, with its message: what
//! has not been measured is not handed on.

use std::path::Path;

use saphyr_parser::{Event, Parser};

/// The largest descriptor, in bytes (1 MiB; a descriptor of a thousand sources is a tenth of
/// it). A larger file is refused before it is read: [`Runtime::open`](crate::Runtime::open) and
/// `skillfold check` answer `descriptor_too_large`. A host that writes or receives descriptors
/// can check their size against it.
pub const MAX_DESCRIPTOR_BYTES: u64 = 1024 * 1024;

/// Collections (mappings and sequences) nested deeper than this are refused before the text is
/// deserialised (`descriptor_too_deep`): the bundle dialect's bound.
pub const MAX_DESCRIPTOR_NESTING: usize = crate::format::yaml::MAX_NESTING;

/// What `saphyr-parser` says when more flow collections are open than its own limit (255).
const SCANNER_FLOW_LIMIT: &str = "recursion limit exceeded";

/// Why descriptor text was refused before deserialising.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BoundsRefusal {
    /// A collection opens deeper than [`MAX_DESCRIPTOR_NESTING`], at this 1-based line and
    /// column.
    TooDeep {
        /// 1-based line.
        line: usize,
        /// 1-based column, in characters.
        column: usize,
    },
    /// Not YAML: the parser's message, and where.
    Syntax {
        /// The parser's message.
        info: String,
        /// 1-based line.
        line: usize,
        /// 1-based column, in characters.
        column: usize,
    },
}

/// Checks that no collection of `text` is nested deeper than [`MAX_DESCRIPTOR_NESTING`].
pub fn check_nesting(text: &str) -> Result<(), BoundsRefusal> {
    let mut depth = 0usize;
    for item in Parser::new_from_str(text) {
        let (event, span) = item.map_err(|e| {
            let at = e.marker();
            // The scanner looks ahead for implicit keys and stops by itself at 255 open flow
            // collections: that is a nesting refusal too.
            if e.info() == SCANNER_FLOW_LIMIT {
                return BoundsRefusal::TooDeep {
                    line: at.line(),
                    column: at.col() + 1,
                };
            }
            BoundsRefusal::Syntax {
                info: e.info().to_owned(),
                line: at.line(),
                column: at.col() + 1,
            }
        })?;
        match event {
            Event::SequenceStart(..) | Event::MappingStart(..) => {
                depth += 1;
                if depth > MAX_DESCRIPTOR_NESTING {
                    return Err(BoundsRefusal::TooDeep {
                        line: span.start.line(),
                        column: span.start.col() + 1,
                    });
                }
            }
            Event::SequenceEnd | Event::MappingEnd => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

/// The bytes of the file at `path`, or `Err(Some(size))` when it holds more than
/// [`MAX_DESCRIPTOR_BYTES`] (at least `size`): the size is checked before reading, and the read
/// stops one byte past the bound whatever the file does (a file that grows). Anything that is not
/// a regular file (a FIFO, a device) is refused before it is opened
/// ([`crate::format::untrusted_fs::read_input`]).
pub fn read_bounded(path: &Path) -> std::io::Result<Result<Vec<u8>, u64>> {
    crate::format::untrusted_fs::read_input(path, MAX_DESCRIPTOR_BYTES)
        .map_err(crate::format::untrusted_fs::InputError::into_io)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nested(levels: usize) -> String {
        format!("skills:\n  - {}\n", "[".repeat(levels - 2))
    }

    #[test]
    fn sixty_four_levels_pass_sixty_five_are_refused_where_they_open() {
        let closed = |levels: usize| {
            format!(
                "skills:\n  - {}{}\n",
                "[".repeat(levels - 2),
                "]".repeat(levels - 2)
            )
        };
        assert_eq!(check_nesting(&closed(64)), Ok(()));
        assert_eq!(
            check_nesting(&closed(65)),
            Err(BoundsRefusal::TooDeep {
                line: 2,
                column: 5 + 62
            })
        );
    }

    #[test]
    fn a_hundred_thousand_brackets_are_refused_at_once() {
        let text = nested(100_000);
        assert!(
            matches!(
                check_nesting(&text),
                Err(BoundsRefusal::TooDeep { line: 2, .. })
            ),
            "{:?}",
            check_nesting(&text)
        );
        // Brackets on lines of their own: the scanner reads ahead for an implicit key until its
        // own limit of 255 open collections, which is refused as too deep as well.
        let lines = format!("skills:\n  - {}\n", "    [\n".repeat(100_000));
        assert!(matches!(
            check_nesting(&lines),
            Err(BoundsRefusal::TooDeep { line, column: 5 }) if line <= 257
        ));
    }

    #[test]
    fn block_nesting_counts_like_flow_nesting() {
        let mut text = String::new();
        for level in 0..70 {
            text.push_str(&format!("{}k{level}:\n", "  ".repeat(level)));
        }
        assert!(matches!(
            check_nesting(&text),
            Err(BoundsRefusal::TooDeep { line: 65, .. })
        ));
    }

    #[test]
    fn text_that_is_not_yaml_is_refused_with_its_position() {
        let Err(BoundsRefusal::Syntax { info, line, .. }) = check_nesting("skills: [a\nb: ]\n")
        else {
            panic!("expected a syntax refusal");
        };
        assert!(!info.is_empty() && line > 0, "{info}");
    }
}
