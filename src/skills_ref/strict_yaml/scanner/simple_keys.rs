//! The scanner's bookkeeping of possible simple keys (a scalar or flow collection that may turn
//! out to be a mapping key once its `:` is found, on the same line and within 1024 characters)
//! and of block indentation (the `BlockEnd` tokens an unindent emits), as ruamel keeps them.

use super::{Scanner, SimpleKey, Token, TokenKind};
use crate::skills_ref::strict_yaml::errors::{YamlResult, err};

impl Scanner {
    pub(super) fn next_possible_simple_key(&self) -> Option<usize> {
        self.possible_simple_keys
            .iter()
            .map(|(_, k)| k.token_number)
            .min()
    }

    pub(super) fn stale_possible_simple_keys(&mut self) -> YamlResult<()> {
        let mut i = 0;
        while i < self.possible_simple_keys.len() {
            let key = self.possible_simple_keys[i].1;
            if key.line != self.reader.line || self.reader.pointer - key.index > 1024 {
                if key.required {
                    return self.key_without_value(key);
                }
                self.possible_simple_keys.remove(i);
            } else {
                i += 1;
            }
        }
        Ok(())
    }

    pub(super) fn save_possible_simple_key(&mut self) -> YamlResult<()> {
        let required = self.flow_level() == 0 && self.indent == self.reader.column as i64;
        if self.allow_simple_key {
            self.remove_possible_simple_key()?;
            let key = SimpleKey {
                token_number: self.tokens_taken + self.tokens.len(),
                required,
                index: self.reader.pointer,
                line: self.reader.line,
                column: self.reader.column,
                mark: self.mark(),
            };
            self.possible_simple_keys.push((self.flow_level(), key));
        }
        Ok(())
    }

    pub(super) fn remove_possible_simple_key(&mut self) -> YamlResult<()> {
        let level = self.flow_level();
        if let Some(i) = self
            .possible_simple_keys
            .iter()
            .position(|(l, _)| *l == level)
        {
            let key = self.possible_simple_keys[i].1;
            if key.required {
                return self.key_without_value(key);
            }
            self.possible_simple_keys.remove(i);
        }
        Ok(())
    }

    /// The refusal of a required simple key whose `:` did not come in time.
    fn key_without_value(&self, key: SimpleKey) -> YamlResult<()> {
        err(
            Some("while scanning a simple key"),
            Some(key.mark),
            "could not find expected ':'".into(),
            self.mark(),
        )
    }

    pub(super) fn unwind_indent(&mut self, column: i64) {
        if self.flow_level() > 0 {
            return;
        }
        while self.indent > column {
            let mark = self.mark();
            self.indent = self.indents.pop().unwrap_or(-1);
            self.tokens
                .push_back(Token::new(TokenKind::BlockEnd, mark, mark));
        }
    }

    pub(super) fn add_indent(&mut self, column: usize) -> bool {
        let column = column as i64;
        if self.indent < column {
            self.indents.push(self.indent);
            self.indent = column;
            return true;
        }
        false
    }
}
