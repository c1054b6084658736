//! Scans the node properties, anchors and tags, and aliases, into tokens for the parser
//! (strictyaml refuses them once the parser asks); the tag handle and URI scanners also
//! serve `%TAG` directives.

use super::{END_OR_SPACE, Scanner, THE_END_SPACE_TAB, Token, TokenKind, is_in};
use crate::skills_ref::strict_yaml::errors::{YamlResult, err};
use crate::skills_ref::strict_yaml::reader::Mark;

impl Scanner {
    pub(super) fn scan_anchor(&mut self, kind: TokenKind) -> YamlResult<Token> {
        let start = self.mark();
        let name = if self.reader.peek(0) == '*' {
            "alias"
        } else {
            "anchor"
        };
        self.reader.forward(1);
        let mut length = 0;
        let mut ch = self.reader.peek(0);
        while anchor_name_char(ch) {
            length += 1;
            ch = self.reader.peek(length);
        }
        let context = format!("while scanning an {name}");
        if length == 0 {
            let p = format!(
                "expected alphabetic or numeric character, but found {}",
                self.found(ch)
            );
            return err(Some(&context), Some(start), p, self.mark());
        }
        let value = self.reader.prefix(length);
        self.reader.forward(length);
        if !is_in(ch, "\0 \t\r\n\u{85}\u{2028}\u{2029}?:,[]{}%@`") {
            let p = format!(
                "expected alphabetic or numeric character, but found {}",
                self.found(ch)
            );
            return err(Some(&context), Some(start), p, self.mark());
        }
        let mut token = Token::new(kind, start, self.mark());
        token.value = value;
        Ok(token)
    }

    pub(super) fn scan_tag(&mut self) -> YamlResult<Token> {
        let start = self.mark();
        let ch = self.reader.peek(1);
        if ch == '<' {
            self.reader.forward(2);
            self.scan_tag_uri("tag", start)?;
            if self.reader.peek(0) != '>' {
                let p = format!(
                    "expected '>', but found {}",
                    self.found(self.reader.peek(0))
                );
                return err(Some("while parsing a tag"), Some(start), p, self.mark());
            }
            self.reader.forward(1);
        } else if is_in(ch, THE_END_SPACE_TAB) {
            self.reader.forward(1);
        } else {
            let mut length = 1;
            let mut use_handle = false;
            let mut ch = ch;
            while !is_in(ch, END_OR_SPACE) {
                if ch == '!' {
                    use_handle = true;
                    break;
                }
                length += 1;
                ch = self.reader.peek(length);
            }
            if use_handle {
                self.scan_tag_handle("tag", start)?;
            } else {
                self.reader.forward(1);
            }
            self.scan_tag_uri("tag", start)?;
        }
        let ch = self.reader.peek(0);
        if !is_in(ch, END_OR_SPACE) {
            let p = format!("expected ' ', but found {}", self.found(ch));
            return err(Some("while scanning a tag"), Some(start), p, self.mark());
        }
        Ok(Token::new(TokenKind::Tag, start, self.mark()))
    }

    pub(super) fn scan_tag_handle(&mut self, name: &str, start: Mark) -> YamlResult<String> {
        let context = format!("while scanning a {name}");
        let ch = self.reader.peek(0);
        if ch != '!' {
            let p = format!("expected '!', but found {}", self.found(ch));
            return err(Some(&context), Some(start), p, self.mark());
        }
        let mut length = 1;
        let mut ch = self.reader.peek(1);
        if ch != ' ' {
            while ch.is_ascii_alphanumeric() || is_in(ch, "-_") {
                length += 1;
                ch = self.reader.peek(length);
            }
            if ch != '!' {
                self.reader.forward(length);
                let p = format!("expected '!', but found {}", self.found(ch));
                return err(Some(&context), Some(start), p, self.mark());
            }
            length += 1;
        }
        let value = self.reader.prefix(length);
        self.reader.forward(length);
        Ok(value)
    }

    pub(super) fn scan_tag_uri(&mut self, name: &str, start: Mark) -> YamlResult<()> {
        let mut any = false;
        let mut length = 0;
        let mut ch = self.reader.peek(0);
        while ch.is_ascii_alphanumeric()
            || is_in(ch, "-;/?:@&=+$,_.!~*'()[]%")
            || (self.version() > (1, 1) && ch == '#')
        {
            if ch == '%' {
                self.reader.forward(length);
                length = 0;
                self.scan_uri_escapes(name, start)?;
                any = true;
            } else {
                length += 1;
            }
            ch = self.reader.peek(length);
        }
        if length != 0 {
            self.reader.forward(length);
            any = true;
        }
        if !any {
            let p = format!("expected URI, but found {}", self.found(ch));
            return err(
                Some(&format!("while parsing a {name}")),
                Some(start),
                p,
                self.mark(),
            );
        }
        Ok(())
    }

    fn scan_uri_escapes(&mut self, name: &str, start: Mark) -> YamlResult<()> {
        let context = format!("while scanning a {name}");
        let mut bytes = Vec::new();
        let mark = self.mark();
        while self.reader.peek(0) == '%' {
            self.reader.forward(1);
            for k in 0..2 {
                let c = self.reader.peek(k);
                if !c.is_ascii_hexdigit() {
                    let p = format!(
                        "expected URI escape sequence of 2 hexdecimal numbers, but found {}",
                        self.found(c)
                    );
                    return err(Some(&context), Some(start), p, self.mark());
                }
            }
            bytes.push(u8::from_str_radix(&self.reader.prefix(2), 16).unwrap_or(0));
            self.reader.forward(2);
        }
        if let Err(e) = std::str::from_utf8(&bytes) {
            let at = e.valid_up_to();
            let byte = bytes[at];
            let reason = match e.error_len() {
                None => "unexpected end of data",
                Some(_) if (0xc2..=0xf4).contains(&byte) => "invalid continuation byte",
                Some(_) => "invalid start byte",
            };
            let p =
                format!("'utf-8' codec can't decode byte 0x{byte:02x} in position {at}: {reason}");
            return err(Some(&context), Some(start), p, mark);
        }
        Ok(())
    }
}

fn anchor_name_char(c: char) -> bool {
    if is_in(c, ",[]{}") {
        return false;
    }
    matches!(c, '\u{21}'..='\u{7e}' | '\u{a0}'..='\u{d7ff}' | '\u{10000}'..)
        || (('\u{e000}'..='\u{fffd}').contains(&c) && c != '\u{feff}')
}
