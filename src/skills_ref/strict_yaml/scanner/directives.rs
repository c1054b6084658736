//! Scans `%YAML` and `%TAG` directives (and skips unknown ones) into a directive token for
//! the parser, which checks their values; records the `%YAML` version the scanner follows.

use super::{END_OR_SPACE, Scanner, THE_END, Token, TokenKind, is_in};
use crate::skills_ref::strict_yaml::errors::{YamlResult, err};
use crate::skills_ref::strict_yaml::reader::Mark;

impl Scanner {
    pub(super) fn scan_directive(&mut self) -> YamlResult<Token> {
        let start = self.mark();
        self.reader.forward(1);
        let name = self.scan_directive_name(start)?;
        let mut token = Token::new(TokenKind::Directive, start, start);
        let end;
        if name == "YAML" {
            token.version = Some(self.scan_yaml_directive_value(start)?);
            end = self.mark();
        } else if name == "TAG" {
            token.tag_handle = self.scan_tag_directive_value(start)?;
            end = self.mark();
        } else {
            end = self.mark();
            while !is_in(self.reader.peek(0), THE_END) {
                self.reader.forward(1);
            }
        }
        self.scan_directive_ignored_line(start)?;
        token.end = end;
        token.value = name;
        Ok(token)
    }

    fn directive_error<X>(&self, start: Mark, problem: String) -> YamlResult<X> {
        err(
            Some("while scanning a directive"),
            Some(start),
            problem,
            self.mark(),
        )
    }

    fn scan_directive_name(&mut self, start: Mark) -> YamlResult<String> {
        let mut length = 0;
        let mut ch = self.reader.peek(0);
        while ch.is_ascii_alphanumeric() || is_in(ch, "-_:.") {
            length += 1;
            ch = self.reader.peek(length);
        }
        if length == 0 {
            let p = format!(
                "expected alphabetic or numeric character, but found {}",
                self.found(ch)
            );
            return self.directive_error(start, p);
        }
        let value = self.reader.prefix(length);
        self.reader.forward(length);
        let ch = self.reader.peek(0);
        if !is_in(ch, END_OR_SPACE) {
            let p = format!(
                "expected alphabetic or numeric character, but found {}",
                self.found(ch)
            );
            return self.directive_error(start, p);
        }
        Ok(value)
    }

    fn scan_yaml_directive_value(&mut self, start: Mark) -> YamlResult<(u64, u64)> {
        while self.reader.peek(0) == ' ' {
            self.reader.forward(1);
        }
        let major = self.scan_yaml_directive_number(start)?;
        if self.reader.peek(0) != '.' {
            let p = format!(
                "expected a digit or '.', but found {}",
                self.found(self.reader.peek(0))
            );
            return self.directive_error(start, p);
        }
        self.reader.forward(1);
        let minor = self.scan_yaml_directive_number(start)?;
        if !is_in(self.reader.peek(0), END_OR_SPACE) {
            let p = format!(
                "expected a digit or ' ', but found {}",
                self.found(self.reader.peek(0))
            );
            return self.directive_error(start, p);
        }
        self.yaml_version = Some((major, minor));
        Ok((major, minor))
    }

    fn scan_yaml_directive_number(&mut self, start: Mark) -> YamlResult<u64> {
        let ch = self.reader.peek(0);
        if !ch.is_ascii_digit() {
            let p = format!("expected a digit, but found {}", self.found(ch));
            return self.directive_error(start, p);
        }
        let mut length = 0;
        while self.reader.peek(length).is_ascii_digit() {
            length += 1;
        }
        let value = self.reader.prefix(length).parse().unwrap_or(u64::MAX);
        self.reader.forward(length);
        Ok(value)
    }

    fn scan_tag_directive_value(&mut self, start: Mark) -> YamlResult<String> {
        while self.reader.peek(0) == ' ' {
            self.reader.forward(1);
        }
        let handle = self.scan_tag_handle("directive", start)?;
        if self.reader.peek(0) != ' ' {
            let p = format!(
                "expected ' ', but found {}",
                self.found(self.reader.peek(0))
            );
            return self.directive_error(start, p);
        }
        while self.reader.peek(0) == ' ' {
            self.reader.forward(1);
        }
        self.scan_tag_uri("directive", start)?;
        if !is_in(self.reader.peek(0), END_OR_SPACE) {
            let p = format!(
                "expected ' ', but found {}",
                self.found(self.reader.peek(0))
            );
            return self.directive_error(start, p);
        }
        Ok(handle)
    }

    fn scan_directive_ignored_line(&mut self, start: Mark) -> YamlResult<()> {
        while self.reader.peek(0) == ' ' {
            self.reader.forward(1);
        }
        if self.reader.peek(0) == '#' {
            while !is_in(self.reader.peek(0), THE_END) {
                self.reader.forward(1);
            }
        }
        let ch = self.reader.peek(0);
        if !is_in(ch, THE_END) {
            let p = format!(
                "expected a comment or a line break, but found {}",
                self.found(ch)
            );
            return self.directive_error(start, p);
        }
        self.scan_line_break(false);
        Ok(())
    }
}
