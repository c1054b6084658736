//! Writing data to stdout. A reader that goes away early (`skillfold load … | head`) is normal
//! for a command-line tool: a broken pipe ends the output quietly instead of panicking.

use std::io::Write as _;

/// Writes `text` to stdout and flushes; a broken pipe is not an error.
pub fn print(text: &str) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush())
        && e.kind() != std::io::ErrorKind::BrokenPipe
    {
        eprintln!("error: cannot write to stdout: {e}");
    }
}
