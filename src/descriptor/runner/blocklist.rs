//! The tool-name blocklist: helpers and arguments that name irreversible actions are refused
//! even when approved, as a second line of defence against a model steering a helper into
//! placing orders, moving money or deleting things.
//!
//! The helper's basename (without `.py`) and every identifier-like argument (with leading dashes
//! removed and anything from `=` on dropped) are normalised — lowercase, `-` as `_` — and
//! compared with the normalised list. The default list can be replaced in the descriptor
//! (`scripts.blocklist`).

/// The default list.
pub const DEFAULT: &[&str] = &[
    "place_order",
    "submit_order",
    "cancel_order",
    "execute_trade",
    "trade",
    "buy",
    "sell",
    "withdraw",
    "transfer",
    "transfer_funds",
    "send_payment",
    "pay",
    "refund",
    "delete",
    "delete_account",
    "drop_table",
    "truncate",
    "shutdown",
    "deploy",
    "send_email",
];

/// A compiled blocklist.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blocklist(Vec<String>);

impl Default for Blocklist {
    fn default() -> Self {
        Blocklist::new(DEFAULT.iter().copied())
    }
}

fn normalise(s: &str) -> String {
    s.to_ascii_lowercase().replace('-', "_")
}

impl Blocklist {
    /// A blocklist of `names`.
    pub fn new<'a>(names: impl IntoIterator<Item = &'a str>) -> Blocklist {
        Blocklist(names.into_iter().map(normalise).collect())
    }

    /// The blocked name that `script` (its basename) or one of `args` hits, if any.
    pub fn hit(&self, script: &str, args: &[String]) -> Option<String> {
        let base = script.rsplit('/').next().unwrap_or(script);
        let stem = base.strip_suffix(".py").unwrap_or(base);
        let mut candidates = vec![stem.to_owned()];
        for arg in args {
            let word = arg.trim_start_matches('-');
            let word = word.split('=').next().unwrap_or(word);
            let identifier = word
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && word
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            if identifier {
                candidates.push(word.to_owned());
            }
        }
        candidates
            .into_iter()
            .find(|c| self.0.contains(&normalise(c)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hits_basenames_and_identifier_arguments() {
        let b = Blocklist::default();
        let args = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            b.hit("scripts/place_order.py", &[]).as_deref(),
            Some("place_order")
        );
        assert_eq!(
            b.hit("scripts/Place-Order.py", &[]).as_deref(),
            Some("Place-Order")
        );
        assert_eq!(
            b.hit("scripts/quote.py", &args(&["--place-order"]))
                .as_deref(),
            Some("place-order")
        );
        assert_eq!(
            b.hit("scripts/quote.py", &args(&["withdraw"])).as_deref(),
            Some("withdraw")
        );
        assert_eq!(
            b.hit("scripts/quote.py", &args(&["--action=transfer"])),
            None
        );
        assert_eq!(
            b.hit("scripts/quote.py", &args(&["--transfer=5"]))
                .as_deref(),
            Some("transfer")
        );
        assert_eq!(
            b.hit(
                "scripts/quote.py",
                &args(&["AAPL", "--days", "5", "buy me"])
            ),
            None
        );
        assert_eq!(b.hit("scripts/quote.py", &args(&["price"])), None);
        let custom = Blocklist::new(["launch"]);
        assert_eq!(
            custom.hit("scripts/launch.py", &[]).as_deref(),
            Some("launch")
        );
        assert_eq!(custom.hit("scripts/place_order.py", &[]), None);
    }

    // Only identifier-like arguments are compared: one starting with a digit or holding other
    // characters never is, one starting with `_` is.
    #[test]
    fn only_identifier_like_arguments_are_compared() {
        let b = Blocklist::new(["_wipe", "9lives", "rm.rf"]);
        let hit = |arg: &str| b.hit("scripts/quote.py", &[arg.to_owned()]);
        assert_eq!(hit("_wipe").as_deref(), Some("_wipe"));
        assert_eq!(hit("9lives"), None);
        assert_eq!(hit("rm.rf"), None);
    }
}
