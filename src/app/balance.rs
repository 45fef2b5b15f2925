//! The Balance screen: pick a card, then judge it (a sequential paired test: is it too
//! strong?), tune one of its whole-number fields (what value makes it fair?) or race a
//! file of variants (which is nearest to fair?), on a
//! worker thread with a progress line, a live chart of the effect against the value, and
//! Stop; a found value opens in the sandbox as a patch of the content
//! (`ai::balance`, `ai::tune`; docs/ai.md, "Judging one card").
//!
//! Must not: run a game or load a patch on the frame thread (the worker does both), or
//! keep a stopped run's thread tied to the screen (Stop detaches it; it ends at the end
//! of its round).
//!
//! The three runs are `ai::balance::run_sequential_until`, `ai::tune::tune_watched` and
//! `ai::race::race_until`; each value's point is sent to the screen's live chart
//! (egui_plot) as it is judged; Stop is an `AtomicBool` checked between rounds.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, mpsc};
use std::time::Instant;

use egui::{RichText, Ui};

use crate::ai::balance::{self, BalanceError, BalanceReport, Test, Verdict};
use crate::ai::sequential::Design;
use crate::ai::simulate::DeckChoice;
use crate::ai::tune::{self, Point, TuneError, TuneReport};
use crate::ai::{Budget, Level, Options};
use crate::content::LoadOptions;
use crate::rules::{CardId, Catalog};

use super::theme;

/// What the Balance screen asks of the app.
pub enum BalanceAction {
    /// Stay.
    Stay,
    /// Back to the main menu.
    Menu,
    /// Open the sandbox with this content (the card patched to the value found) and say
    /// so there.
    Sandbox(Arc<Catalog>, String),
}

/// Judge the card, or tune a field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Judge,
    Tune,
    Race,
}

/// What a finished run gave.
enum Outcome {
    Judged(BalanceReport),
    /// The tuning, and the content with the card at its fair value (when there is one).
    Tuned(TuneReport, Option<(i64, Arc<Catalog>)>),
    Raced(crate::ai::race::RaceReport),
}

/// What the worker tells the screen.
enum Message {
    /// A value judged (tuning): the level and the point.
    Point(String, Point),
    /// The run ended.
    Done(Result<Outcome, String>),
}

/// A run on its worker.
struct Running {
    stop: Arc<AtomicBool>,
    games: Arc<AtomicU64>,
    /// The most games it can play (judging); `None` when not known (tuning).
    most: Option<u64>,
    from: mpsc::Receiver<Message>,
    started: Instant,
    what: String,
}

/// The Balance screen.
pub struct BalanceScreen {
    search: String,
    card: Option<CardId>,
    mode: Mode,
    field: String,
    range: Option<[i64; 2]>,
    level: Level,
    games: u32,
    effect: f64,
    seed: u64,
    /// The variants file a race reads.
    variants: String,
    running: Option<Running>,
    /// The curve so far (tuning): the level and each point.
    points: Vec<(String, Point)>,
    outcome: Option<Result<Outcome, String>>,
}

impl Default for BalanceScreen {
    fn default() -> Self {
        BalanceScreen {
            search: String::new(),
            card: None,
            mode: Mode::Judge,
            field: "value".into(),
            range: None,
            level: Level::Greedy,
            games: 200,
            effect: 5.0,
            seed: 1,
            variants: String::new(),
            running: None,
            points: Vec::new(),
            outcome: None,
        }
    }
}

/// The levels a test can run at, fastest first.
const LEVELS: [Level; 4] = [Level::Easy, Level::Greedy, Level::Normal, Level::Hard];

/// The fields offered for tuning (any `ability.KEY` or `token.KEY` can be typed).
const FIELDS: [&str; 3] = ["value", "ability.amount", "token.income_multiplier"];

impl Drop for BalanceScreen {
    fn drop(&mut self) {
        // A run left behind ends at the end of its round.
        if let Some(r) = &self.running {
            r.stop.store(true, Ordering::Relaxed);
        }
    }
}

impl BalanceScreen {
    /// Draw the screen; `catalog` is the content loaded now, `options` how it was loaded
    /// (a tuning loads it again with each value's patch).
    pub fn show(
        &mut self,
        ui: &mut Ui,
        catalog: &Arc<Catalog>,
        options: &LoadOptions,
    ) -> BalanceAction {
        let mut action = BalanceAction::Stay;
        self.poll();
        if self.running.is_some() {
            ui.ctx()
                .request_repaint_after(std::time::Duration::from_millis(100));
        }
        ui.horizontal(|ui| {
            if ui.button("← Menu").clicked() {
                action = BalanceAction::Menu;
            }
            ui.heading("Balance");
        });
        ui.weak("Is a card too strong, and what value makes it fair? Paired AI games with the card and with a plain card of its value in its slot, in every deck of the loaded packs, both seats.");
        ui.separator();
        egui::Panel::left("balance cards")
            .resizable(false)
            .default_size(240.0)
            .show(ui, |ui| self.picker(ui, catalog));
        egui::CentralPanel::default_margins().show(ui, |ui| {
            egui::ScrollArea::vertical().show(ui, |ui| {
                if let Some(a) = self.body(ui, catalog, options) {
                    action = a;
                }
            });
        });
        action
    }

    fn picker(&mut self, ui: &mut Ui, catalog: &Catalog) {
        ui.label(RichText::new("Card").strong());
        let search = ui.add(
            egui::TextEdit::singleline(&mut self.search)
                .hint_text("search")
                .desired_width(f32::INFINITY),
        );
        search
            .widget_info(|| egui::WidgetInfo::labeled(egui::Role::TextInput, true, "search cards"));
        let needle = self.search.to_lowercase();
        egui::ScrollArea::vertical().show(ui, |ui| {
            for id in catalog.card_ids() {
                let c = catalog.card(id);
                if !needle.is_empty()
                    && !c.meta.name.to_lowercase().contains(&needle)
                    && !c.meta.id.to_lowercase().contains(&needle)
                {
                    continue;
                }
                let text = format!("{} ({})", c.meta.name, c.value);
                if ui
                    .selectable_label(self.card == Some(id), text)
                    .on_hover_text(format!("{}:{}", c.meta.origin.pack, c.meta.id))
                    .clicked()
                    && self.running.is_none()
                {
                    self.card = Some(id);
                    self.range = None;
                    self.points.clear();
                    self.outcome = None;
                }
            }
        });
    }

    fn body(
        &mut self,
        ui: &mut Ui,
        catalog: &Arc<Catalog>,
        options: &LoadOptions,
    ) -> Option<BalanceAction> {
        let Some(card) = self
            .card
            .filter(|c| usize::from(c.0) < catalog.cards().len())
        else {
            ui.label("Pick a card on the left.");
            return None;
        };
        let c = catalog.card(card);
        ui.label(RichText::new(format!("{} — value {}", c.meta.name, c.value)).heading());
        let idle = self.running.is_none();
        ui.add_enabled_ui(idle, |ui| self.settings(ui, catalog, card));
        ui.horizontal(|ui| {
            if idle {
                let label = match self.mode {
                    Mode::Judge => "Judge",
                    Mode::Tune => "Tune",
                    Mode::Race => "Race",
                };
                if ui.button(label).clicked() {
                    self.start(catalog, options, card);
                }
            } else if ui.button("Stop").clicked()
                && let Some(r) = self.running.take()
            {
                r.stop.store(true, Ordering::Relaxed);
                self.outcome = Some(Err(format!(
                    "Stopped after {} games.",
                    r.games.load(Ordering::Relaxed)
                )));
            }
            if let Some(r) = &self.running {
                ui.spinner();
                let games = r.games.load(Ordering::Relaxed);
                let text = format!(
                    "{}: {games} games in {:.0} s",
                    r.what,
                    r.started.elapsed().as_secs_f64()
                );
                match r.most {
                    #[allow(clippy::cast_precision_loss, reason = "a progress fraction")]
                    Some(most) if most > 0 => {
                        ui.add(
                            egui::ProgressBar::new(games as f32 / most as f32)
                                .text(format!("{text} (at most {most}; it stops once decided)"))
                                .desired_width(420.0),
                        );
                    }
                    _ => {
                        ui.label(text);
                    }
                }
            }
        });
        if !self.points.is_empty() {
            self.chart(ui);
        }
        let mut action = None;
        match &self.outcome {
            Some(Ok(Outcome::Judged(r))) => judged(ui, r),
            Some(Ok(Outcome::Tuned(r, fair))) => {
                tuned(ui, r);
                if let Some((v, content)) = fair
                    && ui
                        .button(format!("Try {} = {v} in the sandbox", r.field))
                        .on_hover_text("A sandbox game with the content loaded now and the card patched to this value")
                        .clicked()
                {
                    action = Some(BalanceAction::Sandbox(
                        Arc::clone(content),
                        format!("{}: {} = {v} (a patch from the Balance screen; the packs are unchanged)", r.card, r.field),
                    ));
                }
            }
            Some(Ok(Outcome::Raced(r))) => raced(ui, r),
            Some(Err(e)) => {
                ui.colored_label(theme::DANGER, e);
            }
            None => {}
        }
        action
    }

    fn settings(&mut self, ui: &mut Ui, catalog: &Catalog, card: CardId) {
        ui.horizontal(|ui| {
            ui.radio_value(&mut self.mode, Mode::Judge, "Judge: is it too strong?");
            ui.radio_value(&mut self.mode, Mode::Tune, "Tune: what value is fair?");
            ui.radio_value(
                &mut self.mode,
                Mode::Race,
                "Race: which variant is fairest?",
            );
        });
        egui::Grid::new("balance settings")
            .num_columns(2)
            .spacing([12.0, 6.0])
            .show(ui, |ui| {
                let label = ui.label("AI");
                egui::ComboBox::from_id_salt("balance level")
                    .selected_text(self.level.name())
                    .show_ui(ui, |ui| {
                        for l in LEVELS {
                            ui.selectable_value(&mut self.level, l, l.name());
                        }
                    })
                    .response
                    .labelled_by(label.id);
                ui.end_row();
                let label = ui.label("Games a deck, at most");
                ui.add(egui::DragValue::new(&mut self.games).range(10..=5000))
                    .labelled_by(label.id);
                ui.end_row();
                let label = ui.label("Smallest effect worth finding (points)");
                ui.add(
                    egui::DragValue::new(&mut self.effect)
                        .range(1.0..=50.0)
                        .speed(0.5),
                )
                .labelled_by(label.id);
                ui.end_row();
                let label = ui.label("Seed");
                ui.add(egui::DragValue::new(&mut self.seed))
                    .labelled_by(label.id);
                ui.end_row();
                if self.mode == Mode::Race {
                    let label = ui.label("Variants file");
                    ui.add(
                        egui::TextEdit::singleline(&mut self.variants)
                            .hint_text("path/to/variants.yaml")
                            .desired_width(360.0),
                    )
                    .labelled_by(label.id)
                    .on_hover_text("Named sets of patches, written as a pack writes them (docs/ai.md, \"Racing variants\")");
                    ui.end_row();
                }
                if self.mode == Mode::Tune {
                    let label = ui.label("Field");
                    ui.horizontal(|ui| {
                        let before = self.field.clone();
                        egui::ComboBox::from_id_salt("balance field")
                            .selected_text(self.field.clone())
                            .show_ui(ui, |ui| {
                                for f in FIELDS {
                                    ui.selectable_value(&mut self.field, f.to_string(), f);
                                }
                            })
                            .response
                            .labelled_by(label.id);
                        let typed = ui
                            .add(egui::TextEdit::singleline(&mut self.field).desired_width(160.0));
                        typed.widget_info(|| {
                            egui::WidgetInfo::labeled(egui::Role::TextInput, true, "field")
                        });
                        if self.field != before {
                            self.range = None;
                        }
                    });
                    ui.end_row();
                    let parsed = tune::Field::parse(self.field.trim());
                    let checked = parsed.as_ref().map_err(ToString::to_string).and_then(|f| {
                        f.check(catalog, card)
                            .map(|()| f)
                            .map_err(|e| e.to_string())
                    });
                    match checked {
                        Ok(f) => {
                            let range = self.range.get_or_insert_with(|| {
                                f.current(catalog, card)
                                    .map_or([0, 10], |v| f.default_range(v))
                            });
                            let label = ui.label("Values");
                            ui.horizontal(|ui| {
                                ui.add(egui::DragValue::new(&mut range[0]).range(-10_000..=10_000))
                                    .labelled_by(label.id);
                                let to = ui.label("to");
                                ui.add(egui::DragValue::new(&mut range[1]).range(-10_000..=10_000))
                                    .labelled_by(to.id);
                                if let Some(now) = f.current(catalog, card) {
                                    ui.weak(format!("(now {now})"));
                                }
                            });
                            ui.end_row();
                        }
                        Err(e) => {
                            ui.label("");
                            ui.colored_label(theme::DANGER, e.replace("--tune ", ""));
                            ui.end_row();
                        }
                    }
                }
            });
    }

    /// Start the run the settings describe on a worker thread.
    fn start(&mut self, catalog: &Arc<Catalog>, options: &LoadOptions, card: CardId) {
        self.points.clear();
        self.outcome = None;
        let design = match Design::new(0.05, 0.05, self.effect / 100.0) {
            Ok(d) => d,
            Err(e) => {
                self.outcome = Some(Err(e.to_string()));
                return;
            }
        };
        let decks: Vec<DeckChoice> = catalog
            .decks()
            .iter()
            .map(|d| DeckChoice {
                id: d.meta.id.clone(),
                stacks: d.stacks.clone(),
                per_game: false,
            })
            .collect();
        if decks.is_empty() {
            self.outcome = Some(Err(
                "The loaded packs have no decks to try the card in: enable a pack with decks."
                    .into(),
            ));
            return;
        }
        let test = Test {
            card,
            control: None,
            decks: decks.clone(),
            opponents: decks.clone(),
            games: self.games.max(1),
            level: self.level,
            seed: self.seed,
            threads: 0,
            options: Options {
                budget: Budget::Iterations(300),
                omniscient: false,
                scripts: crate::ai::ScriptLimits::DEFAULT,
            },
        };
        let field = match self.mode {
            Mode::Judge | Mode::Race => None,
            Mode::Tune => match tune::Field::parse(self.field.trim()) {
                Ok(f) => Some(f),
                Err(e) => {
                    self.outcome = Some(Err(e.to_string()));
                    return;
                }
            },
        };
        let range = self.range.unwrap_or([0, 10]);
        if field.is_some() && range[0] >= range[1] {
            self.outcome = Some(Err("Give the lowest value first, then a higher one.".into()));
            return;
        }
        let stop = Arc::new(AtomicBool::new(false));
        let games = Arc::new(AtomicU64::new(0));
        let (to, from) = mpsc::channel();
        let (catalog, options) = (Arc::clone(catalog), options.clone());
        let (worker_stop, worker_games) = (Arc::clone(&stop), Arc::clone(&games));
        let name = catalog.card(card).meta.id.clone();
        let variants =
            (self.mode == Mode::Race).then(|| std::path::PathBuf::from(self.variants.trim()));
        if variants.as_ref().is_some_and(|p| p.as_os_str().is_empty()) {
            self.outcome = Some(Err(
                "Give the variants file to race (a YAML file of named patches).".into(),
            ));
            return;
        }
        let what = match (&field, &variants) {
            (Some(f), _) => format!("tuning {name} {}", f.name()),
            (None, Some(_)) => format!("racing variants of {name}"),
            (None, None) => format!("judging {name}"),
        };
        let most = (field.is_none() && variants.is_none())
            .then(|| u64::from(test.games) * 2 * decks.len() as u64);
        let spawned = crate::script::threads::spawn("balance", move || {
            let tick = || {
                worker_games.fetch_add(1, Ordering::Relaxed);
            };
            let result = match field {
                None if variants.is_some() => {
                    let file = variants.unwrap_or_default();
                    race_run(
                        &catalog,
                        &options,
                        &file,
                        &test,
                        &design,
                        &tick,
                        &worker_stop,
                    )
                }
                None => judge(&catalog, &test, &design, &tick, &worker_stop),
                Some(field) => {
                    let level = test.level;
                    let points = to.clone();
                    let point = move |level: &str, p: &Point| {
                        let _ = points.send(Message::Point(level.to_string(), p.clone()));
                    };
                    let job = tune::Job {
                        test,
                        field,
                        range,
                        design,
                        levels: vec![level],
                    };
                    tune_run(&catalog, &options, card, &job, &tick, &point, &worker_stop)
                }
            };
            let _ = to.send(Message::Done(result));
        });
        match spawned {
            Ok(_) => {
                self.running = Some(Running {
                    stop,
                    games,
                    most,
                    from,
                    started: Instant::now(),
                    what,
                });
            }
            Err(e) => self.outcome = Some(Err(format!("cannot start the run: {e}"))),
        }
    }

    /// Take what the worker said.
    fn poll(&mut self) {
        let Some(r) = &self.running else { return };
        loop {
            match r.from.try_recv() {
                Ok(Message::Point(level, p)) => self.points.push((level, p)),
                Ok(Message::Done(result)) => {
                    self.outcome = Some(result);
                    self.running = None;
                    return;
                }
                Err(mpsc::TryRecvError::Empty) => return,
                Err(mpsc::TryRecvError::Disconnected) => {
                    self.outcome = Some(Err("the run ended without a result".into()));
                    self.running = None;
                    return;
                }
            }
        }
    }

    /// The curve so far: each value's effect with its 95 % interval, and zero.
    fn chart(&self, ui: &mut Ui) {
        use egui_plot::{HLine, Line, Plot, Points};
        let mut sorted: Vec<&Point> = self.points.iter().map(|(_, p)| p).collect();
        sorted.sort_by_key(|p| p.value);
        #[allow(clippy::cast_precision_loss, reason = "field values are small")]
        let xy = |p: &Point, y: f64| [p.value as f64, 100.0 * y];
        let response = Plot::new("balance curve")
            .height(260.0)
            .x_axis_label("value")
            .y_axis_label("effect (win-rate points)")
            .include_y(0.0)
            .allow_scroll(false)
            .show(ui, |plot| {
                plot.hline(HLine::new("fair", 0.0).color(egui::Color32::GRAY));
                for p in &sorted {
                    plot.line(
                        Line::new("95% interval", vec![xy(p, p.ci95[0]), xy(p, p.ci95[1])])
                            .color(verdict_color(p.verdict))
                            .width(2.0),
                    );
                }
                plot.line(
                    Line::new(
                        "effect",
                        sorted.iter().map(|p| xy(p, p.effect)).collect::<Vec<_>>(),
                    )
                    .color(theme::SEAT_ONE),
                );
                plot.points(
                    Points::new(
                        "values tried",
                        sorted.iter().map(|p| xy(p, p.effect)).collect::<Vec<_>>(),
                    )
                    .radius(4.0)
                    .color(theme::SEAT_ONE),
                );
            });
        response.response.widget_info(|| {
            egui::WidgetInfo::labeled(
                egui::Role::Image,
                true,
                format!("chart of effect against value: {} values", sorted.len()),
            )
        });
    }
}

fn verdict_color(v: Verdict) -> egui::Color32 {
    match v {
        Verdict::Strong => theme::DANGER,
        Verdict::Weak => theme::GOLD,
        Verdict::WithinNoise => theme::GOOD,
    }
}

/// A sequential test of `test`, stopped by `stop`.
fn judge(
    catalog: &Catalog,
    test: &Test,
    design: &Design,
    tick: &(dyn Fn() + Sync),
    stop: &AtomicBool,
) -> Result<Outcome, String> {
    balance::run_sequential_until(catalog, test, design, tick, stop)
        .map(Outcome::Judged)
        .map_err(|e| match e {
            BalanceError::Stopped => "Stopped.".to_string(),
            e => e.to_string(),
        })
}

/// A tuning of `job`, each value a patch of the content loaded with `options`; and the
/// content at the fair value found, for the sandbox.
fn tune_run(
    catalog: &Catalog,
    options: &LoadOptions,
    card: CardId,
    job: &tune::Job,
    tick: &(dyn Fn() + Sync),
    point: &dyn Fn(&str, &Point),
    stop: &AtomicBool,
) -> Result<Outcome, String> {
    let make = |v: i64| tune::patched(options, catalog, card, &job.field, v);
    let watch = tune::Watch { tick, point, stop };
    let report = tune::tune_watched(catalog, job, &make, &watch).map_err(|e| match e {
        TuneError::Balance(BalanceError::Stopped) => "Stopped.".to_string(),
        e => e.to_string(),
    })?;
    let fair = match report.levels.first().and_then(|t| t.value) {
        Some(v) => Some((v, Arc::new(make(v).map_err(|e| e.to_string())?))),
        None => None,
    };
    Ok(Outcome::Tuned(report, fair))
}

/// A race of the variants in `file`, each a patch of the content loaded with `options`.
fn race_run(
    catalog: &Catalog,
    options: &LoadOptions,
    file: &std::path::Path,
    test: &Test,
    design: &Design,
    tick: &(dyn Fn() + Sync),
    stop: &AtomicBool,
) -> Result<Outcome, String> {
    use crate::ai::{race, variants};
    let read = variants::read(file).map_err(|e| e.to_string())?;
    let entrants = read
        .iter()
        .map(|v| {
            Ok(race::Entrant {
                name: v.name.clone(),
                changes: v.changes(),
                content: variants::patched(options, catalog, file, v)?,
            })
        })
        .collect::<Result<Vec<_>, variants::VariantsError>>()
        .map_err(|e| e.to_string())?;
    race::race_until(catalog, test, design, &entrants, tick, stop)
        .map(Outcome::Raced)
        .map_err(|e| match e {
            BalanceError::Stopped => "Stopped.".to_string(),
            e => e.to_string(),
        })
}

fn raced(ui: &mut Ui, r: &crate::ai::race::RaceReport) {
    ui.label(
        RichText::new(format!(
            "{}: {} variants raced against {}; {} after {} games ({:.1} s)",
            r.card,
            r.variants.len(),
            r.control,
            r.stopped.words(),
            r.games,
            r.seconds
        ))
        .strong(),
    );
    egui::Grid::new("balance race")
        .striped(true)
        .show(ui, |ui| {
            for h in [
                "rank",
                "variant",
                "effect",
                "95% interval",
                "verdict",
                "pairs",
                "",
            ] {
                ui.label(RichText::new(h).strong());
            }
            ui.end_row();
            for s in &r.variants {
                ui.label(s.rank.to_string());
                ui.label(&s.name).on_hover_text(s.changes.join("\n"));
                ui.label(pct(s.effect));
                ui.label(format!("{} to {}", pct(s.ci95[0]), pct(s.ci95[1])));
                ui.colored_label(verdict_color(s.verdict), s.verdict.words());
                ui.label(s.pairs.to_string());
                match &s.dropped {
                    Some(d) => ui.weak(format!("dropped in round {} (by {})", d.round, d.by)),
                    None => ui.label(""),
                };
                ui.end_row();
            }
        });
}

fn pct(x: f64) -> String {
    format!("{:+.1}", 100.0 * x)
}

fn judged(ui: &mut Ui, r: &BalanceReport) {
    let verdict = RichText::new(r.verdict.words())
        .strong()
        .color(verdict_color(r.verdict));
    ui.horizontal(|ui| {
        ui.label(format!("{}:", r.card));
        ui.label(verdict);
    });
    ui.label(format!(
        "Effect {} points (95% interval {} to {}) over {} pairs: win rate {:.1}% with the card, {:.1}% with the control.",
        pct(r.effect),
        pct(r.ci95[0]),
        pct(r.ci95[1]),
        r.pairs,
        100.0 * r.win_rate_with,
        100.0 * r.win_rate_control
    ));
    if let Some(s) = &r.sequential {
        ui.weak(if s.decided {
            format!(
                "Decided after {} pairs; a fixed-size test at the same error rates needs about {} ({:.0}% saved).",
                r.pairs,
                s.fixed_pairs,
                100.0 * s.saved
            )
        } else {
            format!(
                "Not decided within {} pairs: the verdict is the interval's; raise the games to decide.",
                r.pairs
            )
        });
    }
    egui::Grid::new("balance decks")
        .striped(true)
        .show(ui, |ui| {
            for h in ["deck", "control", "with", "control"] {
                ui.label(RichText::new(h).strong());
            }
            ui.end_row();
            for d in &r.decks {
                ui.label(&d.deck);
                ui.label(&d.control);
                ui.label(format!("{:.1}%", 100.0 * d.win_rate_with));
                ui.label(format!("{:.1}%", 100.0 * d.win_rate_control));
                ui.end_row();
            }
        });
}

fn tuned(ui: &mut Ui, r: &TuneReport) {
    for t in &r.levels {
        let games = 2 * t.pairs;
        match (t.value, t.interval) {
            (Some(v), Some([a, b])) => {
                ui.label(
                    RichText::new(format!(
                        "{} {}: fair at {v} (fair from {a} to {b}), at {}",
                        r.card, r.field, t.level
                    ))
                    .strong()
                    .color(theme::GOOD),
                );
            }
            _ => {
                ui.label(
                    RichText::new(format!(
                        "{} {}: no fair value at {}: {}",
                        r.card,
                        r.field,
                        t.level,
                        t.no_fair_value.as_deref().unwrap_or("none found")
                    ))
                    .strong()
                    .color(theme::DANGER),
                );
            }
        }
        ui.weak(format!(
            "{games} games in {:.1} s, against {}{}",
            t.seconds,
            r.control,
            r.current.map(|v| format!("; now {v}")).unwrap_or_default()
        ));
    }
}
