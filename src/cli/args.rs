//! The arguments several commands share: the options every command takes (`--content`,
//! `--mods`, `--profile`, `--packs`, `--all-packs`) and the AI level as the command line
//! takes it. Each command's own arguments live with the command.

use std::path::PathBuf;

/// The options every command takes, before or after its name.
#[derive(Debug, clap::Args)]
pub struct Globals {
    /// Folder with the base content packs (default: `content` in the working folder when
    /// it has the base pack, as in a checkout of the source; else the base content shipped
    /// with the program).
    #[arg(long, global = true, value_name = "DIR")]
    pub content: Option<PathBuf>,
    /// Folder with mod packs (may be missing).
    #[arg(long, global = true, default_value = "mods", value_name = "DIR")]
    pub mods: PathBuf,
    /// The profile folder with saved decks, installed packs and the enabled set
    /// (default: the platform's data folder).
    #[arg(long, global = true, value_name = "DIR")]
    pub profile: Option<PathBuf>,
    /// For this run, play with the base content and exactly these packs (and what they
    /// require) instead of the profile's enabled set.
    #[arg(
        long,
        global = true,
        value_name = "ID,ID",
        value_delimiter = ',',
        conflicts_with = "all_packs"
    )]
    pub packs: Option<Vec<String>>,
    /// For this run, play with every pack found (base, mods and installed).
    #[arg(long, global = true)]
    pub all_packs: bool,
}

/// An AI level as the command line takes it (`--ai-a LEVEL` and the like): the
/// [`ai::Level`](crate::ai::Level)s, each with the help its value shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum LevelArg {
    /// A uniformly random legal move.
    Random,
    /// Greedy's ranking with a rank-weighted random pick.
    Easy,
    /// The best immediate income swing (the reference).
    Greedy,
    /// Looks at the opponent's best reply.
    Normal,
    /// Monte Carlo tree search.
    Hard,
}

impl From<LevelArg> for crate::ai::Level {
    fn from(arg: LevelArg) -> crate::ai::Level {
        use crate::ai::Level;
        match arg {
            LevelArg::Random => Level::Random,
            LevelArg::Easy => Level::Easy,
            LevelArg::Greedy => Level::Greedy,
            LevelArg::Normal => Level::Normal,
            LevelArg::Hard => Level::Hard,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::LevelArg;
    use crate::ai::Level;
    use clap::ValueEnum as _;

    /// The command line takes every level, by the level's own name.
    #[test]
    fn level_args_are_the_levels_by_name() {
        let levels: Vec<Level> = LevelArg::value_variants()
            .iter()
            .map(|&a| Level::from(a))
            .collect();
        assert_eq!(levels, Level::ALL);
        for &arg in LevelArg::value_variants() {
            let shown = arg.to_possible_value().map(|v| v.get_name().to_string());
            assert_eq!(shown.as_deref(), Some(Level::from(arg).name()));
        }
    }
}
