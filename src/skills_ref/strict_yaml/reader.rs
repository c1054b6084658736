//! The reader: the input as code points, with ruamel's line and column rules (`\r\n` is one
//! break, a BOM takes no column). It hands the scanner one character at a time, lookahead
//! and [`Mark`]s, the positions every later stage and every error message uses.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Mark {
    pub(super) pointer: usize,
    pub(super) line: usize,
    pub(super) column: usize,
}

pub(super) struct Reader {
    pub(super) buf: Vec<char>,
    pub(super) pointer: usize,
    pub(super) line: usize,
    pub(super) column: usize,
}

impl Reader {
    pub(super) fn new(buf: Vec<char>) -> Reader {
        Reader {
            buf,
            pointer: 0,
            line: 0,
            column: 0,
        }
    }

    pub(super) fn peek(&self, i: usize) -> char {
        self.buf.get(self.pointer + i).copied().unwrap_or('\0')
    }

    pub(super) fn prefix(&self, n: usize) -> String {
        let end = (self.pointer + n).min(self.buf.len());
        self.buf[self.pointer.min(end)..end].iter().collect()
    }

    pub(super) fn forward(&mut self, n: usize) {
        for _ in 0..n {
            let Some(&ch) = self.buf.get(self.pointer) else {
                return;
            };
            self.pointer += 1;
            if ch == '\n' || (ch == '\r' && self.peek(0) != '\n') {
                self.line += 1;
                self.column = 0;
            } else if ch != '\u{feff}' {
                self.column += 1;
            }
        }
    }

    pub(super) fn mark(&self) -> Mark {
        Mark {
            pointer: self.pointer,
            line: self.line,
            column: self.column,
        }
    }
}
