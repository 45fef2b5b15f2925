//! What one load may read in all: YAML parse work per pack and for all the packs loaded
//! together, and entries per section. Costs are charged as files are read, so a load
//! that would go past a total stops there, naming the pack and the file that went over;
//! nothing is read past it.
//!
//! Must not: decide what a file means (that is `mod.rs` and `registry.rs`).

use super::yaml::{self, Node, SyntaxError};

/// The parse work (see [`yaml::Metered::work`]) all the content files of one pack may
/// take together: some 150,000 entries of a dozen values, twice what one file may take
/// (so one large file is told about its own limit, not the pack's).
pub const PACK_PARSE_WORK: u64 = 2_000_000;
/// The parse work all the files of one load may take together, manifests included.
pub const SET_PARSE_WORK: u64 = 4_000_000;
/// The parse work one `pack.yaml` may take (a long `requires` list is a few thousand).
pub const MANIFEST_PARSE_WORK: u64 = 50_000;
/// The entries one section may hold, all packs together (ids are 16-bit, one kept free).
pub const MAX_SECTION_ENTRIES: usize = 65_534;

/// Which shared total a file went over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Over {
    /// The pack's.
    Pack,
    /// The load's (all packs together).
    Set,
}

/// The parse work left to a load and to the pack being read.
#[derive(Debug)]
pub(crate) struct ParseMeter {
    pack_limit: u64,
    set_limit: u64,
    pack_left: u64,
    set_left: u64,
    over: Option<Over>,
}

impl Default for ParseMeter {
    fn default() -> ParseMeter {
        ParseMeter::new(PACK_PARSE_WORK, SET_PARSE_WORK)
    }
}

impl ParseMeter {
    /// A meter with these totals per pack and per load.
    pub(crate) fn new(pack_limit: u64, set_limit: u64) -> ParseMeter {
        ParseMeter {
            pack_limit,
            set_limit,
            pack_left: pack_limit,
            set_left: set_limit,
            over: None,
        }
    }

    /// Start reading the next pack: it gets its whole total (what the load has left
    /// permitting).
    pub(crate) fn start_pack(&mut self) {
        self.pack_left = self.pack_limit;
        if self.over == Some(Over::Pack) {
            self.over = None;
        }
    }

    /// Whether another file of this pack may be read (neither total has run out).
    pub(crate) fn may_read(&self) -> bool {
        self.over.is_none()
    }

    /// Whether the load's total has run out: no file of any pack is read any more.
    pub(crate) fn set_over(&self) -> bool {
        self.over == Some(Over::Set)
    }

    /// Parse `text` with at most `file_limit` of work and no more than the pack and the
    /// load have left, and charge what it took. `Err(Some(over))` when a shared total
    /// ran out in this file (the error says where the parse stopped); from then on
    /// [`ParseMeter::may_read`] is false.
    pub(crate) fn parse(
        &mut self,
        text: &str,
        file_limit: u64,
        manifest: bool,
    ) -> Result<Node, (SyntaxError, Option<Over>)> {
        // The total that binds: the load's when it has no more left than the pack.
        let (shared, binding) = if manifest || self.set_left <= self.pack_left {
            (self.set_left, Over::Set)
        } else {
            (self.pack_left, Over::Pack)
        };
        let allowance = shared.min(file_limit);
        let metered = yaml::parse_metered(text, allowance);
        self.set_left = self.set_left.saturating_sub(metered.work);
        if !manifest {
            self.pack_left = self.pack_left.saturating_sub(metered.work);
        }
        match metered.result {
            Ok(node) => Ok(node),
            Err(e) if metered.over && allowance < file_limit => {
                self.over = Some(binding);
                Err((e, Some(binding)))
            }
            Err(e) => Err((e, None)),
        }
    }

    /// What to tell about `pack` going over `over` in a file, at the place the reader
    /// stopped.
    pub(crate) fn message(&self, over: Over, pack: &str) -> String {
        match over {
            Over::Pack => format!(
                "pack '{pack}' holds more YAML than one pack may read ({} reader events in \
                 all its files, each value an `*alias` repeats counted again); it ran out in \
                 this file, and the pack's remaining files are not read: write repeated \
                 entries out plainly instead of through `&anchor`/`*alias`, or split the pack",
                thousands(self.pack_limit)
            ),
            Over::Set => format!(
                "the packs loaded together hold more YAML than one load may read ({} reader \
                 events in all their files, each value an `*alias` repeats counted again); \
                 pack '{pack}' ran out in this file, and no file after it is read: load fewer \
                 or smaller packs",
                thousands(self.set_limit)
            ),
        }
    }
}

/// `2000000` as `2,000,000`.
pub(crate) fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The message for an entry past [`MAX_SECTION_ENTRIES`] in one section.
pub(crate) fn too_many_entries(kind: &str, pack: &str) -> String {
    format!(
        "more than {} {kind} entries in the packs loaded together: pack '{pack}' adds one \
         more here, so this entry and every file after it are not read (one load holds at \
         most {} entries per section): load fewer packs, or merge entries",
        thousands(MAX_SECTION_ENTRIES as u64),
        thousands(MAX_SECTION_ENTRIES as u64)
    )
}

#[cfg(test)]
mod tests {
    use super::{Over, ParseMeter, thousands};

    /// `n` plain entries of five values each.
    fn entries(n: usize) -> String {
        (0..n)
            .map(|i| format!("- {{ id: c{i}, value: 1 }}\n"))
            .collect()
    }

    #[test]
    fn the_pack_and_the_load_totals_are_shared_by_their_files() {
        // Each file of 20 entries is about 130 events.
        let file = entries(20);
        let mut meter = ParseMeter::new(400, 1_000);
        let mut read = Vec::new();
        let mut stopped = None;
        'packs: for pack in 0..10 {
            meter.start_pack();
            for f in 0..10 {
                if meter.set_over() {
                    break 'packs;
                }
                if !meter.may_read() {
                    break;
                }
                match meter.parse(&file, 1_000_000, false) {
                    Ok(_) => read.push((pack, f)),
                    Err((_, Some(over))) => stopped = Some((pack, f, over)),
                    Err((e, None)) => panic!("{e:?}"),
                }
            }
        }
        // Three files a pack fit in 400; the fourth runs out. The load's 1,000 run out
        // in the third pack.
        assert_eq!(read[..4], [(0, 0), (0, 1), (0, 2), (1, 0)]);
        assert_eq!(stopped, Some((2, 1, Over::Set)), "{read:?}");
        assert!(meter.set_over());
    }

    #[test]
    fn a_pack_going_over_stops_that_pack_only() {
        let file = entries(20);
        let mut meter = ParseMeter::new(300, 1_000_000);
        meter.start_pack();
        assert!(meter.parse(&file, 1_000_000, false).is_ok());
        assert!(meter.parse(&file, 1_000_000, false).is_ok());
        let Err((e, Some(Over::Pack))) = meter.parse(&file, 1_000_000, false) else {
            panic!("the third file runs out")
        };
        assert!(e.loc.line > 1, "{e:?}");
        assert!(!meter.may_read());
        meter.start_pack();
        assert!(meter.may_read());
        assert!(meter.parse(&file, 1_000_000, false).is_ok());
        assert!(
            meter
                .message(Over::Pack, "p")
                .contains("pack 'p' holds more YAML")
        );
    }

    #[test]
    fn a_file_over_its_own_limit_is_not_blamed_on_the_pack() {
        let mut meter = ParseMeter::new(1_000, 1_000);
        meter.start_pack();
        let Err((_, None)) = meter.parse(&entries(20), 50, false) else {
            panic!("over its own limit")
        };
        assert!(meter.may_read());
    }

    #[test]
    fn thousands_are_grouped() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(65_534), "65,534");
        assert_eq!(thousands(2_000_000), "2,000,000");
    }
}
