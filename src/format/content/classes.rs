//! The code points of the content rules, by class, and what is known of their neighbours: which
//! code points are hidden ([`HiddenClass`]), where one is not a finding (an emoji sequence, a
//! joining script), and their Unicode names.
//!
//! The sets come from the Unicode Character Database (Unicode 17.0 for `Extended_Pictographic`,
//! names as in `UnicodeData.txt` and, for controls, the `control` aliases of `NameAliases.txt`),
//! following the Trojan Source guidance (CVE-2021-42574) and UTS #39's default-ignorable
//! characters; docs/content.md lists them.
//!
//! - **tag** — U+E0000–U+E007F, the tag characters.
//! - **bidi** — U+202A–U+202E and U+2066–U+2069, the embeddings, overrides and isolates (the set
//!   rustc's `text_direction_codepoint_in_literal` lint names).
//! - **control** — C0 controls other than TAB, LF and CR (NUL has its own rule, `nul_byte`), DEL,
//!   and the C1 controls U+0080–U+009F.
//! - **invisible** — the other default-ignorable code points: U+00AD, U+034F, U+061C,
//!   U+115F–U+1160, U+17B4–U+17B5, U+180B–U+180F, U+200B–U+200F, U+2060–U+2065,
//!   U+206A–U+206F, U+3164, U+FE00–U+FE0F, U+FEFF, U+FFA0, U+FFF0–U+FFF8, U+1BCA0–U+1BCA3,
//!   U+1D173–U+1D17A, U+E0080–U+E0FFF; and the interlinear annotation controls U+FFF9–U+FFFB.
//!
//! Not a finding, by context ([`judge`]): U+FEFF as a file's first character (a byte-order
//! mark); U+FE0E or U+FE0F right after an emoji (an `Extended_Pictographic` code point) or a
//! keycap base (`0`–`9`, `#`, `*`); U+200D right after an emoji, an emoji modifier or U+FE0F and
//! right before an emoji (an emoji ZWJ sequence); U+200C or U+200D between two characters of a
//! script that joins with them (Arabic, Syriac, Thaana, N'Ko, the Indic scripts, Myanmar, Khmer,
//! Mongolian); a Mongolian variation selector after a Mongolian letter; and the tag characters
//! of the three emoji flags of UK subdivisions (England, Scotland, Wales), the only tag
//! sequences emoji define.

use std::borrow::Cow;

/// The class of a hidden character, as the findings name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum HiddenClass {
    /// A tag character, U+E0000–U+E007F.
    Tag,
    /// A bidi embedding, override or isolate.
    Bidi,
    /// A C0 control other than TAB, LF, CR and NUL; DEL; a C1 control.
    Control,
    /// A zero-width or other invisible formatting character.
    Invisible,
}

impl HiddenClass {
    /// The class as findings and the docs spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            HiddenClass::Tag => "tag",
            HiddenClass::Bidi => "bidi",
            HiddenClass::Control => "control",
            HiddenClass::Invisible => "invisible",
        }
    }

    /// What a character of the class is, for a message.
    pub(super) fn described(self) -> &'static str {
        match self {
            HiddenClass::Tag => "a tag character",
            HiddenClass::Bidi => "a bidi control",
            HiddenClass::Control => "a control character",
            HiddenClass::Invisible => "an invisible character",
        }
    }
}

/// The class of `c` alone, its neighbours not considered.
pub fn class_of(c: char) -> Option<HiddenClass> {
    Some(match c as u32 {
        0x01..=0x08 | 0x0B | 0x0C | 0x0E..=0x1F | 0x7F..=0x9F => HiddenClass::Control,
        0x202A..=0x202E | 0x2066..=0x2069 => HiddenClass::Bidi,
        0xE0000..=0xE007F => HiddenClass::Tag,
        0xAD
        | 0x34F
        | 0x61C
        | 0x115F
        | 0x1160
        | 0x17B4
        | 0x17B5
        | 0x180B..=0x180F
        | 0x200B..=0x200F
        | 0x2060..=0x2065
        | 0x206A..=0x206F
        | 0x3164
        | 0xFE00..=0xFE0F
        | 0xFEFF
        | 0xFFA0
        | 0xFFF0..=0xFFFB
        | 0x1BCA0..=0x1BCA3
        | 0x1D173..=0x1D17A
        | 0xE0080..=0xE0FFF => HiddenClass::Invisible,
        _ => return None,
    })
}

/// The class of `c`, found at byte `at` of `text`, once its neighbours are considered: `None`
/// when it is not hidden or its context makes it ordinary text (see the module doc).
pub fn judge(text: &str, at: usize, c: char) -> Option<HiddenClass> {
    let class = class_of(c)?;
    let before = || text[..at].chars().next_back();
    let after = || text[at + c.len_utf8()..].chars().next();
    let ordinary = match c {
        '\u{FEFF}' => at == 0,
        '\u{FE0E}' | '\u{FE0F}' => before().is_some_and(|b| is_emoji(b) || is_keycap_base(b)),
        '\u{200D}' => {
            (before().is_some_and(|b| is_emoji(b) || is_emoji_modifier(b) || b == '\u{FE0F}')
                && after().is_some_and(is_emoji))
                || joins(before(), after())
        }
        '\u{200C}' => joins(before(), after()),
        '\u{180B}'..='\u{180F}' => before().is_some_and(|b| ('\u{1820}'..='\u{18AA}').contains(&b)),
        _ => false,
    };
    (!ordinary).then_some(class)
}

/// The emoji flags of UK subdivisions: U+1F3F4, these tag letters, U+E007F (CANCEL TAG).
const SUBDIVISION_FLAGS: [&[u8]; 3] = [b"gbeng", b"gbsct", b"gbwls"];

/// The end of the tag characters of a subdivision flag starting at byte `at` of `text`, just
/// after its U+1F3F4 (WAVING BLACK FLAG); `None` when they are not one.
pub fn flag_tags(text: &str, at: usize) -> Option<usize> {
    let mut letters = Vec::with_capacity(6);
    let mut end = at;
    for c in text[at..].chars().take(6) {
        end += c.len_utf8();
        match c as u32 {
            0xE007F => {
                return SUBDIVISION_FLAGS
                    .contains(&letters.as_slice())
                    .then_some(end);
            }
            cp @ 0xE0061..=0xE007A => letters.push((cp - 0xE0000) as u8),
            _ => return None,
        }
    }
    None
}

/// `U+E0041`.
pub fn code_point(c: char) -> String {
    format!("U+{:04X}", c as u32)
}

/// The Unicode name of a hidden character (a control's alias), or `<reserved-XXXX>` for one
/// that has none.
pub fn name(c: char) -> Cow<'static, str> {
    let cp = c as u32;
    match cp {
        0xE0020..=0xE007E => format!("TAG {}", ASCII_NAMES[(cp - 0xE0020) as usize]).into(),
        0xFE00..=0xFE0F => format!("VARIATION SELECTOR-{}", cp - 0xFE00 + 1).into(),
        0xE0100..=0xE01EF => format!("VARIATION SELECTOR-{}", cp - 0xE0100 + 17).into(),
        _ => match NAMES.binary_search_by_key(&cp, |(c, _)| *c) {
            Ok(i) => NAMES[i].1.into(),
            Err(_) => format!("<reserved-{cp:04X}>").into(),
        },
    }
}

/// What a tag character stands for: its ASCII character, `?` for the others.
pub fn tag_ascii(c: char) -> char {
    match c as u32 {
        cp @ 0xE0020..=0xE007E => char::from((cp - 0xE0000) as u8),
        _ => '?',
    }
}

fn is_emoji(c: char) -> bool {
    let cp = c as u32;
    cp >= 0xA9
        && EXTENDED_PICTOGRAPHIC
            .binary_search_by(|&(lo, hi)| {
                if hi < cp {
                    std::cmp::Ordering::Less
                } else if lo > cp {
                    std::cmp::Ordering::Greater
                } else {
                    std::cmp::Ordering::Equal
                }
            })
            .is_ok()
}

fn is_emoji_modifier(c: char) -> bool {
    ('\u{1F3FB}'..='\u{1F3FF}').contains(&c)
}

fn is_keycap_base(c: char) -> bool {
    c.is_ascii_digit() || c == '#' || c == '*'
}

/// Whether both neighbours belong to a script that shapes with ZWJ and ZWNJ.
fn joins(before: Option<char>, after: Option<char>) -> bool {
    let joining = |c: char| {
        matches!(c as u32,
            0x0600..=0x07FF      // Arabic, Syriac, Arabic Supplement, Thaana, N'Ko
            | 0x0860..=0x08FF    // Syriac Supplement, Arabic Extended-B and -A
            | 0x0900..=0x0DFF    // Devanagari to Sinhala
            | 0x1000..=0x109F    // Myanmar
            | 0x1780..=0x18AF    // Khmer, Mongolian
            | 0xA8E0..=0xA8FF    // Devanagari Extended
            | 0xFB50..=0xFDFF    // Arabic Presentation Forms-A
            | 0xFE70..=0xFEFC) // Arabic Presentation Forms-B
            && class_of(c).is_none()
    };
    before.is_some_and(joining) && after.is_some_and(joining)
}

/// `Extended_Pictographic` (emoji-data.txt, Unicode 17.0), as inclusive ranges.
const EXTENDED_PICTOGRAPHIC: [(u32, u32); 156] = [
    (0xA9, 0xA9),
    (0xAE, 0xAE),
    (0x203C, 0x203C),
    (0x2049, 0x2049),
    (0x2122, 0x2122),
    (0x2139, 0x2139),
    (0x2194, 0x2199),
    (0x21A9, 0x21AA),
    (0x231A, 0x231B),
    (0x2328, 0x2328),
    (0x23CF, 0x23CF),
    (0x23E9, 0x23F3),
    (0x23F8, 0x23FA),
    (0x24C2, 0x24C2),
    (0x25AA, 0x25AB),
    (0x25B6, 0x25B6),
    (0x25C0, 0x25C0),
    (0x25FB, 0x25FE),
    (0x2600, 0x2604),
    (0x260E, 0x260E),
    (0x2611, 0x2611),
    (0x2614, 0x2615),
    (0x2618, 0x2618),
    (0x261D, 0x261D),
    (0x2620, 0x2620),
    (0x2622, 0x2623),
    (0x2626, 0x2626),
    (0x262A, 0x262A),
    (0x262E, 0x262F),
    (0x2638, 0x263A),
    (0x2640, 0x2640),
    (0x2642, 0x2642),
    (0x2648, 0x2653),
    (0x265F, 0x2660),
    (0x2663, 0x2663),
    (0x2665, 0x2666),
    (0x2668, 0x2668),
    (0x267B, 0x267B),
    (0x267E, 0x267F),
    (0x2692, 0x2697),
    (0x2699, 0x2699),
    (0x269B, 0x269C),
    (0x26A0, 0x26A1),
    (0x26A7, 0x26A7),
    (0x26AA, 0x26AB),
    (0x26B0, 0x26B1),
    (0x26BD, 0x26BE),
    (0x26C4, 0x26C5),
    (0x26C8, 0x26C8),
    (0x26CE, 0x26CF),
    (0x26D1, 0x26D1),
    (0x26D3, 0x26D4),
    (0x26E9, 0x26EA),
    (0x26F0, 0x26F5),
    (0x26F7, 0x26FA),
    (0x26FD, 0x26FD),
    (0x2702, 0x2702),
    (0x2705, 0x2705),
    (0x2708, 0x270D),
    (0x270F, 0x270F),
    (0x2712, 0x2712),
    (0x2714, 0x2714),
    (0x2716, 0x2716),
    (0x271D, 0x271D),
    (0x2721, 0x2721),
    (0x2728, 0x2728),
    (0x2733, 0x2734),
    (0x2744, 0x2744),
    (0x2747, 0x2747),
    (0x274C, 0x274C),
    (0x274E, 0x274E),
    (0x2753, 0x2755),
    (0x2757, 0x2757),
    (0x2763, 0x2764),
    (0x2795, 0x2797),
    (0x27A1, 0x27A1),
    (0x27B0, 0x27B0),
    (0x27BF, 0x27BF),
    (0x2934, 0x2935),
    (0x2B05, 0x2B07),
    (0x2B1B, 0x2B1C),
    (0x2B50, 0x2B50),
    (0x2B55, 0x2B55),
    (0x3030, 0x3030),
    (0x303D, 0x303D),
    (0x3297, 0x3297),
    (0x3299, 0x3299),
    (0x1F004, 0x1F004),
    (0x1F02C, 0x1F02F),
    (0x1F094, 0x1F09F),
    (0x1F0AF, 0x1F0B0),
    (0x1F0C0, 0x1F0C0),
    (0x1F0CF, 0x1F0D0),
    (0x1F0F6, 0x1F0FF),
    (0x1F170, 0x1F171),
    (0x1F17E, 0x1F17F),
    (0x1F18E, 0x1F18E),
    (0x1F191, 0x1F19A),
    (0x1F1AE, 0x1F1E5),
    (0x1F201, 0x1F20F),
    (0x1F21A, 0x1F21A),
    (0x1F22F, 0x1F22F),
    (0x1F232, 0x1F23A),
    (0x1F23C, 0x1F23F),
    (0x1F249, 0x1F25F),
    (0x1F266, 0x1F321),
    (0x1F324, 0x1F393),
    (0x1F396, 0x1F397),
    (0x1F399, 0x1F39B),
    (0x1F39E, 0x1F3F0),
    (0x1F3F3, 0x1F3F5),
    (0x1F3F7, 0x1F3FA),
    (0x1F400, 0x1F4FD),
    (0x1F4FF, 0x1F53D),
    (0x1F549, 0x1F54E),
    (0x1F550, 0x1F567),
    (0x1F56F, 0x1F570),
    (0x1F573, 0x1F57A),
    (0x1F587, 0x1F587),
    (0x1F58A, 0x1F58D),
    (0x1F590, 0x1F590),
    (0x1F595, 0x1F596),
    (0x1F5A4, 0x1F5A5),
    (0x1F5A8, 0x1F5A8),
    (0x1F5B1, 0x1F5B2),
    (0x1F5BC, 0x1F5BC),
    (0x1F5C2, 0x1F5C4),
    (0x1F5D1, 0x1F5D3),
    (0x1F5DC, 0x1F5DE),
    (0x1F5E1, 0x1F5E1),
    (0x1F5E3, 0x1F5E3),
    (0x1F5E8, 0x1F5E8),
    (0x1F5EF, 0x1F5EF),
    (0x1F5F3, 0x1F5F3),
    (0x1F5FA, 0x1F64F),
    (0x1F680, 0x1F6C5),
    (0x1F6CB, 0x1F6D2),
    (0x1F6D5, 0x1F6E5),
    (0x1F6E9, 0x1F6E9),
    (0x1F6EB, 0x1F6F0),
    (0x1F6F3, 0x1F6FF),
    (0x1F7DA, 0x1F7FF),
    (0x1F80C, 0x1F80F),
    (0x1F848, 0x1F84F),
    (0x1F85A, 0x1F85F),
    (0x1F888, 0x1F88F),
    (0x1F8AE, 0x1F8AF),
    (0x1F8BC, 0x1F8BF),
    (0x1F8C2, 0x1F8CF),
    (0x1F8D9, 0x1F8FF),
    (0x1F90C, 0x1F93A),
    (0x1F93C, 0x1F945),
    (0x1F947, 0x1F9FF),
    (0x1FA58, 0x1FA5F),
    (0x1FA6E, 0x1FAFF),
    (0x1FC00, 0x1FFFD),
];

/// The names of U+0020–U+007E, for the tag characters (`TAG ` and the name).
const ASCII_NAMES: [&str; 95] = [
    "SPACE",
    "EXCLAMATION MARK",
    "QUOTATION MARK",
    "NUMBER SIGN",
    "DOLLAR SIGN",
    "PERCENT SIGN",
    "AMPERSAND",
    "APOSTROPHE",
    "LEFT PARENTHESIS",
    "RIGHT PARENTHESIS",
    "ASTERISK",
    "PLUS SIGN",
    "COMMA",
    "HYPHEN-MINUS",
    "FULL STOP",
    "SOLIDUS",
    "DIGIT ZERO",
    "DIGIT ONE",
    "DIGIT TWO",
    "DIGIT THREE",
    "DIGIT FOUR",
    "DIGIT FIVE",
    "DIGIT SIX",
    "DIGIT SEVEN",
    "DIGIT EIGHT",
    "DIGIT NINE",
    "COLON",
    "SEMICOLON",
    "LESS-THAN SIGN",
    "EQUALS SIGN",
    "GREATER-THAN SIGN",
    "QUESTION MARK",
    "COMMERCIAL AT",
    "LATIN CAPITAL LETTER A",
    "LATIN CAPITAL LETTER B",
    "LATIN CAPITAL LETTER C",
    "LATIN CAPITAL LETTER D",
    "LATIN CAPITAL LETTER E",
    "LATIN CAPITAL LETTER F",
    "LATIN CAPITAL LETTER G",
    "LATIN CAPITAL LETTER H",
    "LATIN CAPITAL LETTER I",
    "LATIN CAPITAL LETTER J",
    "LATIN CAPITAL LETTER K",
    "LATIN CAPITAL LETTER L",
    "LATIN CAPITAL LETTER M",
    "LATIN CAPITAL LETTER N",
    "LATIN CAPITAL LETTER O",
    "LATIN CAPITAL LETTER P",
    "LATIN CAPITAL LETTER Q",
    "LATIN CAPITAL LETTER R",
    "LATIN CAPITAL LETTER S",
    "LATIN CAPITAL LETTER T",
    "LATIN CAPITAL LETTER U",
    "LATIN CAPITAL LETTER V",
    "LATIN CAPITAL LETTER W",
    "LATIN CAPITAL LETTER X",
    "LATIN CAPITAL LETTER Y",
    "LATIN CAPITAL LETTER Z",
    "LEFT SQUARE BRACKET",
    "REVERSE SOLIDUS",
    "RIGHT SQUARE BRACKET",
    "CIRCUMFLEX ACCENT",
    "LOW LINE",
    "GRAVE ACCENT",
    "LATIN SMALL LETTER A",
    "LATIN SMALL LETTER B",
    "LATIN SMALL LETTER C",
    "LATIN SMALL LETTER D",
    "LATIN SMALL LETTER E",
    "LATIN SMALL LETTER F",
    "LATIN SMALL LETTER G",
    "LATIN SMALL LETTER H",
    "LATIN SMALL LETTER I",
    "LATIN SMALL LETTER J",
    "LATIN SMALL LETTER K",
    "LATIN SMALL LETTER L",
    "LATIN SMALL LETTER M",
    "LATIN SMALL LETTER N",
    "LATIN SMALL LETTER O",
    "LATIN SMALL LETTER P",
    "LATIN SMALL LETTER Q",
    "LATIN SMALL LETTER R",
    "LATIN SMALL LETTER S",
    "LATIN SMALL LETTER T",
    "LATIN SMALL LETTER U",
    "LATIN SMALL LETTER V",
    "LATIN SMALL LETTER W",
    "LATIN SMALL LETTER X",
    "LATIN SMALL LETTER Y",
    "LATIN SMALL LETTER Z",
    "LEFT CURLY BRACKET",
    "VERTICAL LINE",
    "RIGHT CURLY BRACKET",
    "TILDE",
];

/// Names of the hidden characters other than tags and variation selectors, by code point (controls
/// by their `control` alias).
const NAMES: [(u32, &str); 118] = [
    (0x1, "START OF HEADING"),
    (0x2, "START OF TEXT"),
    (0x3, "END OF TEXT"),
    (0x4, "END OF TRANSMISSION"),
    (0x5, "ENQUIRY"),
    (0x6, "ACKNOWLEDGE"),
    (0x7, "ALERT"),
    (0x8, "BACKSPACE"),
    (0xB, "LINE TABULATION"),
    (0xC, "FORM FEED"),
    (0xE, "SHIFT OUT"),
    (0xF, "SHIFT IN"),
    (0x10, "DATA LINK ESCAPE"),
    (0x11, "DEVICE CONTROL ONE"),
    (0x12, "DEVICE CONTROL TWO"),
    (0x13, "DEVICE CONTROL THREE"),
    (0x14, "DEVICE CONTROL FOUR"),
    (0x15, "NEGATIVE ACKNOWLEDGE"),
    (0x16, "SYNCHRONOUS IDLE"),
    (0x17, "END OF TRANSMISSION BLOCK"),
    (0x18, "CANCEL"),
    (0x19, "END OF MEDIUM"),
    (0x1A, "SUBSTITUTE"),
    (0x1B, "ESCAPE"),
    (0x1C, "INFORMATION SEPARATOR FOUR"),
    (0x1D, "INFORMATION SEPARATOR THREE"),
    (0x1E, "INFORMATION SEPARATOR TWO"),
    (0x1F, "INFORMATION SEPARATOR ONE"),
    (0x7F, "DELETE"),
    (0x80, "PADDING CHARACTER"),
    (0x81, "HIGH OCTET PRESET"),
    (0x82, "BREAK PERMITTED HERE"),
    (0x83, "NO BREAK HERE"),
    (0x84, "INDEX"),
    (0x85, "NEXT LINE"),
    (0x86, "START OF SELECTED AREA"),
    (0x87, "END OF SELECTED AREA"),
    (0x88, "CHARACTER TABULATION SET"),
    (0x89, "CHARACTER TABULATION WITH JUSTIFICATION"),
    (0x8A, "LINE TABULATION SET"),
    (0x8B, "PARTIAL LINE FORWARD"),
    (0x8C, "PARTIAL LINE BACKWARD"),
    (0x8D, "REVERSE LINE FEED"),
    (0x8E, "SINGLE SHIFT TWO"),
    (0x8F, "SINGLE SHIFT THREE"),
    (0x90, "DEVICE CONTROL STRING"),
    (0x91, "PRIVATE USE ONE"),
    (0x92, "PRIVATE USE TWO"),
    (0x93, "SET TRANSMIT STATE"),
    (0x94, "CANCEL CHARACTER"),
    (0x95, "MESSAGE WAITING"),
    (0x96, "START OF GUARDED AREA"),
    (0x97, "END OF GUARDED AREA"),
    (0x98, "START OF STRING"),
    (0x99, "SINGLE GRAPHIC CHARACTER INTRODUCER"),
    (0x9A, "SINGLE CHARACTER INTRODUCER"),
    (0x9B, "CONTROL SEQUENCE INTRODUCER"),
    (0x9C, "STRING TERMINATOR"),
    (0x9D, "OPERATING SYSTEM COMMAND"),
    (0x9E, "PRIVACY MESSAGE"),
    (0x9F, "APPLICATION PROGRAM COMMAND"),
    (0xAD, "SOFT HYPHEN"),
    (0x34F, "COMBINING GRAPHEME JOINER"),
    (0x61C, "ARABIC LETTER MARK"),
    (0x115F, "HANGUL CHOSEONG FILLER"),
    (0x1160, "HANGUL JUNGSEONG FILLER"),
    (0x17B4, "KHMER VOWEL INHERENT AQ"),
    (0x17B5, "KHMER VOWEL INHERENT AA"),
    (0x180B, "MONGOLIAN FREE VARIATION SELECTOR ONE"),
    (0x180C, "MONGOLIAN FREE VARIATION SELECTOR TWO"),
    (0x180D, "MONGOLIAN FREE VARIATION SELECTOR THREE"),
    (0x180E, "MONGOLIAN VOWEL SEPARATOR"),
    (0x180F, "MONGOLIAN FREE VARIATION SELECTOR FOUR"),
    (0x200B, "ZERO WIDTH SPACE"),
    (0x200C, "ZERO WIDTH NON-JOINER"),
    (0x200D, "ZERO WIDTH JOINER"),
    (0x200E, "LEFT-TO-RIGHT MARK"),
    (0x200F, "RIGHT-TO-LEFT MARK"),
    (0x202A, "LEFT-TO-RIGHT EMBEDDING"),
    (0x202B, "RIGHT-TO-LEFT EMBEDDING"),
    (0x202C, "POP DIRECTIONAL FORMATTING"),
    (0x202D, "LEFT-TO-RIGHT OVERRIDE"),
    (0x202E, "RIGHT-TO-LEFT OVERRIDE"),
    (0x2060, "WORD JOINER"),
    (0x2061, "FUNCTION APPLICATION"),
    (0x2062, "INVISIBLE TIMES"),
    (0x2063, "INVISIBLE SEPARATOR"),
    (0x2064, "INVISIBLE PLUS"),
    (0x2066, "LEFT-TO-RIGHT ISOLATE"),
    (0x2067, "RIGHT-TO-LEFT ISOLATE"),
    (0x2068, "FIRST STRONG ISOLATE"),
    (0x2069, "POP DIRECTIONAL ISOLATE"),
    (0x206A, "INHIBIT SYMMETRIC SWAPPING"),
    (0x206B, "ACTIVATE SYMMETRIC SWAPPING"),
    (0x206C, "INHIBIT ARABIC FORM SHAPING"),
    (0x206D, "ACTIVATE ARABIC FORM SHAPING"),
    (0x206E, "NATIONAL DIGIT SHAPES"),
    (0x206F, "NOMINAL DIGIT SHAPES"),
    (0x3164, "HANGUL FILLER"),
    (0xFEFF, "ZERO WIDTH NO-BREAK SPACE"),
    (0xFFA0, "HALFWIDTH HANGUL FILLER"),
    (0xFFF9, "INTERLINEAR ANNOTATION ANCHOR"),
    (0xFFFA, "INTERLINEAR ANNOTATION SEPARATOR"),
    (0xFFFB, "INTERLINEAR ANNOTATION TERMINATOR"),
    (0x1BCA0, "SHORTHAND FORMAT LETTER OVERLAP"),
    (0x1BCA1, "SHORTHAND FORMAT CONTINUING OVERLAP"),
    (0x1BCA2, "SHORTHAND FORMAT DOWN STEP"),
    (0x1BCA3, "SHORTHAND FORMAT UP STEP"),
    (0x1D173, "MUSICAL SYMBOL BEGIN BEAM"),
    (0x1D174, "MUSICAL SYMBOL END BEAM"),
    (0x1D175, "MUSICAL SYMBOL BEGIN TIE"),
    (0x1D176, "MUSICAL SYMBOL END TIE"),
    (0x1D177, "MUSICAL SYMBOL BEGIN SLUR"),
    (0x1D178, "MUSICAL SYMBOL END SLUR"),
    (0x1D179, "MUSICAL SYMBOL BEGIN PHRASE"),
    (0x1D17A, "MUSICAL SYMBOL END PHRASE"),
    (0xE0001, "LANGUAGE TAG"),
    (0xE007F, "CANCEL TAG"),
];
