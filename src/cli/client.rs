//! No command: the desktop client, with the run's packs and profile.

#[cfg(feature = "client")]
use std::path::Path;
use std::process::ExitCode;

use super::context::Context;

/// No command: the desktop client.
#[cfg(feature = "client")]
pub fn open(ctx: &Context) -> anyhow::Result<ExitCode> {
    let set = match ctx.selection() {
        crate::packs::Selection::Set(set) => set.clone(),
        crate::packs::Selection::All => ctx
            .profile_dir()
            .map_or_else(crate::packs::PackSet::default, crate::packs::PackSet::open),
    };
    let packs = crate::app::mods::Packs {
        folders: ctx.pack_folders().clone(),
        set,
        profile: ctx.profile_dir().map(Path::to_path_buf),
    };
    crate::app::run(
        ctx.play_options(),
        packs,
        ctx.given_profile().map(Path::to_path_buf),
    )?;
    Ok(ExitCode::SUCCESS)
}

/// No command, in a build without the desktop client: say so and how to get it.
#[cfg(not(feature = "client"))]
pub fn open(_ctx: &Context) -> anyhow::Result<ExitCode> {
    eprintln!(
        "this tokensmith was built without the desktop client (cargo feature `client`);\n\
         run a command (see `tokensmith --help`), or build with `cargo build --features client`"
    );
    Ok(ExitCode::from(2))
}
