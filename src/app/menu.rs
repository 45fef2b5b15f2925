//! The main menu, with the loaded packs and their diagnostics.

use egui::{Align, Color32, Layout, RichText, Ui, vec2};

use super::{Library, theme};

/// A main-menu choice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MenuChoice {
    /// A game against the AI.
    PlayAi,
    /// Two people at one screen.
    Hotseat,
    /// Host or join a game on the local network.
    Lan,
    /// The sandbox.
    Sandbox,
    /// Saved games: watch or check them.
    Replays,
    /// The deck editor.
    Decks,
    /// The content browser.
    Cards,
    /// Judge and tune cards with AI games.
    Balance,
    /// The packs: on and off, order, install, conflicts.
    Mods,
    /// The settings window.
    Settings,
    /// Leave.
    Quit,
}

/// A seed from the clock, for games without one.
#[must_use]
pub fn fresh_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// What the main menu shows beside the buttons.
pub struct MenuInfo<'a> {
    /// Why the last thing asked for failed.
    pub error: Option<&'a str>,
    /// The live-reload state in words.
    pub live: Option<&'a str>,
    /// Why there is no profile (the deck editor then cannot open).
    pub no_profile: Option<&'a str>,
    /// What reading the profile did (files migrated or set aside).
    pub profile_notes: &'a [String],
    /// The number of steps of the sandbox game kept from the last visit, if one is kept.
    pub sandbox_kept: Option<usize>,
}

/// Draw the main menu; the choice made this frame.
pub fn main_menu(ui: &mut Ui, library: &Library, info: &MenuInfo<'_>) -> Option<MenuChoice> {
    let mut choice = None;
    egui::CentralPanel::default_margins().show(ui, |ui| {
        ui.with_layout(Layout::top_down(Align::Center), |ui| {
            ui.add_space(40.0);
            ui.label(RichText::new("Tokensmith").size(44.0).strong());
            ui.label(RichText::new("a token-placement duel").size(16.0).weak());
            ui.add_space(24.0);
            let ready = library.catalog.is_some();
            let why = "The packs have errors: fix them (listed below); with live reload on, saving the fix is enough.";
            let big = |text: &str| {
                egui::Button::new(RichText::new(text).size(20.0)).min_size(vec2(240.0, 40.0))
            };
            for (text, c, needs) in [
                ("Play vs AI", MenuChoice::PlayAi, true),
                ("Hotseat", MenuChoice::Hotseat, true),
                ("Play on LAN", MenuChoice::Lan, true),
                ("Sandbox", MenuChoice::Sandbox, true),
                ("Replays", MenuChoice::Replays, false),
                ("Decks", MenuChoice::Decks, true),
                ("Cards", MenuChoice::Cards, true),
                ("Balance", MenuChoice::Balance, true),
                ("Mods", MenuChoice::Mods, false),
                ("Settings", MenuChoice::Settings, false),
                ("Quit", MenuChoice::Quit, false),
            ] {
                let blocked = if needs && !ready {
                    Some(why)
                } else if matches!(c, MenuChoice::Decks | MenuChoice::Replays) {
                    info.no_profile
                } else {
                    None
                };
                let r = ui.add_enabled(blocked.is_none(), big(text));
                let r = match blocked {
                    None => r,
                    Some(why) => r.on_disabled_hover_text(why),
                };
                let r = match (c, info.sandbox_kept) {
                    (MenuChoice::Sandbox, Some(steps)) => r.on_hover_text(format!(
                        "Resume the sandbox game ({steps} step{} kept); its Reset starts over.",
                        if steps == 1 { "" } else { "s" }
                    )),
                    _ => r,
                };
                if r.clicked() {
                    choice = Some(c);
                }
                ui.add_space(6.0);
            }
            if let Some(e) = info.error {
                ui.colored_label(theme::DANGER, e);
            }
            if let Some(why) = info.no_profile {
                ui.colored_label(theme::PREVIEW, why);
            }
            for note in info.profile_notes {
                ui.colored_label(theme::PREVIEW, note);
            }
            ui.add_space(16.0);
            packs(ui, library);
            if let Some(live) = info.live {
                ui.add_space(6.0);
                ui.weak(live);
            }
        });
    });
    choice
}

/// The loaded packs and the diagnostics of the load.
fn packs(ui: &mut Ui, library: &Library) {
    let errors = library.errors();
    let warnings = library.diagnostics.len() - errors;
    let summary = format!(
        "{} pack(s) · {} error(s) · {} warning(s)",
        library.packs.len(),
        errors,
        warnings
    );
    let colour = if errors > 0 {
        theme::DANGER
    } else if warnings > 0 {
        theme::PREVIEW
    } else {
        Color32::from_rgb(120, 220, 120)
    };
    ui.label(RichText::new(summary).color(colour).strong());
    egui::Frame::new()
        .fill(Color32::from_gray(30))
        .corner_radius(6.0)
        .inner_margin(10.0)
        .show(ui, |ui| {
            ui.set_max_width(720.0);
            for p in &library.packs {
                ui.label(format!("{} {} — {}", p.id, p.version, p.name));
            }
            if !library.diagnostics.is_empty() {
                ui.separator();
                egui::ScrollArea::vertical()
                    .max_height(180.0)
                    .show(ui, |ui| {
                        for d in &library.diagnostics {
                            let c = if d.is_error() {
                                theme::DANGER
                            } else {
                                theme::PREVIEW
                            };
                            ui.label(RichText::new(d.to_string()).monospace().color(c));
                        }
                    });
            }
        });
}
