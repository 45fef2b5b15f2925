//! The hover preview, worked out on a worker thread: the frame asks for the preview of
//! a move on a state, the worker plays it with its own script host and the engine's
//! normal per-move limits, and the frame shows the answer once it has come. The frame
//! never waits: a preview whose hooks run to their time limit leaves the window drawing
//! and answering meanwhile.
//!
//! Only the newest question matters: while the pointer moves, the worker skips the
//! questions asked before the last one, and an answer to any but the last is dropped.
//! An answer depends only on the content, the state and the move ([`preview::preview`]),
//! so it is the same preview the frame would have worked out itself.
//!
//! The same worker reads both seats' incomes for the board shown (income hooks may take
//! up to a move's time limit too): the screen shows the last incomes read until those of
//! the new board come. It also works out the sandbox's AI hint ([`preview::hint`]: every
//! card on every empty cell through the look-ahead, each move's hooks within their
//! limits), shown once it has come for the board shown, never a stale one.
//!
//! Must not: draw (it only asks for frames while an answer is owed), or run a hook on
//! the calling thread.

use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, Sender, TryRecvError};
use std::time::{Duration, Instant};

use crate::ai::Rated;
use crate::rules::{CardId, Catalog, Engine, GameState, Move, Seat};

use super::preview::{self, Preview};
use super::session::SessionError;

/// What a preview is of: the content, the state it is played on and the move.
#[derive(Clone)]
struct Question {
    catalog: Arc<Catalog>,
    state: GameState,
    mv: Move,
}

impl Question {
    fn is(&self, catalog: &Arc<Catalog>, state: &GameState, mv: Move) -> bool {
        self.mv == mv && Arc::ptr_eq(&self.catalog, catalog) && self.state == *state
    }
}

/// What a hint is of: the content, the state (the seat to move put in), the seat, the
/// cards to rate and how many moves to give.
#[derive(Clone)]
struct HintQuestion {
    catalog: Arc<Catalog>,
    base: GameState,
    seat: Seat,
    cards: Vec<CardId>,
    k: usize,
}

impl HintQuestion {
    fn is(
        &self,
        catalog: &Arc<Catalog>,
        base: &GameState,
        seat: Seat,
        cards: &[CardId],
        k: usize,
    ) -> bool {
        Arc::ptr_eq(&self.catalog, catalog)
            && self.seat == seat
            && self.k == k
            && self.cards == cards
            && self.base == *base
    }
}

/// A job for the worker: a question with its number, or only "get the scripts of this
/// content ready" (so the first hover does not wait for a script host to start).
enum Job {
    Ask(u64, Box<Question>),
    Incomes(u64, Arc<Catalog>, Box<GameState>),
    Hint(u64, Box<HintQuestion>),
    Warm(Arc<Catalog>),
}

/// The worker's answer to a question, by its number.
enum Answer {
    Preview(u64, Box<Result<Preview, SessionError>>),
    Incomes(u64, [i64; 2]),
    Hint(u64, Vec<Rated>),
}

/// The line to the worker thread.
struct Worker {
    jobs: Sender<Job>,
    answers: Receiver<Answer>,
}

/// The hover previews of one screen (a game or the sandbox), from a worker thread of
/// its own that ends with it.
#[derive(Default)]
pub struct Previews {
    worker: Option<Worker>,
    /// The question last asked (its number, what, and when).
    asked: Option<(u64, Question, Instant)>,
    /// The answer to the question last asked, once it has come.
    answer: Option<Result<Preview, SessionError>>,
    /// The number of the last question asked.
    count: u64,
    /// The board whose incomes were last asked for (its number, content and state).
    incomes_asked: Option<(u64, Arc<Catalog>, GameState)>,
    /// The incomes last read, and whether they are those of the board last asked for.
    incomes: Option<([i64; 2], bool)>,
    /// The hint last asked for (its number, what, and when).
    hint_asked: Option<(u64, HintQuestion, Instant)>,
    /// The answer to the hint last asked for, once it has come.
    hint: Option<Vec<Rated>>,
}

impl Previews {
    /// Start the worker and its script host for `catalog` now, so the first hover is as
    /// quick as the others.
    pub fn warm(&mut self, catalog: &Arc<Catalog>) {
        self.send(Job::Warm(Arc::clone(catalog)));
    }

    /// Ask for the preview of `mv` on `state` under `catalog`, unless it is the question
    /// last asked. Never waits; the answer shows through [`Previews::shown`] once a later
    /// [`Previews::poll`] has taken it up.
    pub fn ask(&mut self, catalog: &Arc<Catalog>, state: &GameState, mv: Move) {
        if self
            .asked
            .as_ref()
            .is_some_and(|(_, q, _)| q.is(catalog, state, mv))
        {
            return;
        }
        self.count += 1;
        let question = Question {
            catalog: Arc::clone(catalog),
            state: state.clone(),
            mv,
        };
        let job = Job::Ask(self.count, Box::new(question.clone()));
        self.asked = Some((self.count, question, Instant::now()));
        self.answer = None;
        self.send(job);
    }

    /// Both seats' incomes on `state` under `catalog`: asked of the worker unless they are
    /// the ones last asked for; until its answer comes, the last incomes read (`None`
    /// before the first). Never waits.
    pub fn incomes(&mut self, catalog: &Arc<Catalog>, state: &GameState) -> Option<[i64; 2]> {
        let asked = self
            .incomes_asked
            .as_ref()
            .is_some_and(|(_, c, s)| Arc::ptr_eq(c, catalog) && s == state);
        if !asked {
            self.count += 1;
            self.incomes_asked = Some((self.count, Arc::clone(catalog), state.clone()));
            if let Some((_, fresh)) = &mut self.incomes {
                *fresh = false;
            }
            self.send(Job::Incomes(
                self.count,
                Arc::clone(catalog),
                Box::new(state.clone()),
            ));
        }
        self.incomes.map(|(i, _)| i)
    }

    /// The AI hint for `seat` with `cards` on `base` (see [`preview::hint`]): asked of
    /// the worker unless it is the one last asked for; `None` until its answer has come.
    /// Never waits.
    pub fn hint(
        &mut self,
        catalog: &Arc<Catalog>,
        base: &GameState,
        seat: Seat,
        cards: &[CardId],
        k: usize,
    ) -> Option<&[Rated]> {
        let asked = self
            .hint_asked
            .as_ref()
            .is_some_and(|(_, q, _)| q.is(catalog, base, seat, cards, k));
        if !asked {
            let question = HintQuestion {
                catalog: Arc::clone(catalog),
                base: base.clone(),
                seat,
                cards: cards.to_vec(),
                k,
            };
            self.count += 1;
            self.hint = None;
            let job = Job::Hint(self.count, Box::new(question.clone()));
            self.hint_asked = Some((self.count, question, Instant::now()));
            self.send(job);
        }
        self.hint.as_deref()
    }

    /// How long the worker has been on the hint last asked for, while it has not
    /// answered.
    #[must_use]
    pub fn hint_pending(&self) -> Option<Duration> {
        match (&self.hint_asked, &self.hint) {
            (Some((_, _, since)), None) => Some(since.elapsed()),
            _ => None,
        }
    }

    /// The hint is no longer shown: forget it (its answer is dropped when it comes).
    pub fn clear_hint(&mut self) {
        self.hint_asked = None;
        self.hint = None;
    }

    /// Whether the worker owes an answer (a preview, incomes or a hint).
    #[must_use]
    pub fn busy(&self) -> bool {
        self.pending().is_some()
            || self.hint_pending().is_some()
            || (self.incomes_asked.is_some() && !self.incomes.is_some_and(|(_, fresh)| fresh))
    }

    /// Keep frames coming while the worker owes an answer, so it shows as soon as it has
    /// come: at once for a preview (the pointer is on it), at the next ~60 Hz frame for
    /// incomes and a hint.
    pub fn keep_frames_coming(&self, ctx: &egui::Context) {
        if self.pending().is_some() {
            ctx.request_repaint();
        } else if self.busy() {
            ctx.request_repaint_after(Duration::from_millis(16));
        }
    }

    /// Nothing is hovered any more: forget the question (its answer is dropped when it
    /// comes).
    pub fn clear(&mut self) {
        self.asked = None;
        self.answer = None;
    }

    /// Take up the worker's answers: the one to the last question is kept, older ones
    /// are dropped. Never waits.
    pub fn poll(&mut self) {
        let Some(worker) = &self.worker else {
            return;
        };
        loop {
            match worker.answers.try_recv() {
                Ok(Answer::Preview(n, result)) => {
                    if self.asked.as_ref().is_some_and(|(asked, _, _)| *asked == n) {
                        self.answer = Some(*result);
                    }
                }
                Ok(Answer::Hint(n, rated)) => {
                    if self
                        .hint_asked
                        .as_ref()
                        .is_some_and(|(asked, _, _)| *asked == n)
                    {
                        self.hint = Some(rated);
                    }
                }
                Ok(Answer::Incomes(n, incomes)) => {
                    let last = self
                        .incomes_asked
                        .as_ref()
                        .is_some_and(|(asked, _, _)| *asked == n);
                    // An older board's incomes still beat none at all.
                    if last || self.incomes.is_none() {
                        self.incomes = Some((incomes, last));
                    }
                }
                Err(TryRecvError::Empty) => return,
                Err(TryRecvError::Disconnected) => {
                    // The worker is gone (it panicked): say so for the question waiting,
                    // and start a new one with the next question.
                    self.worker = None;
                    if self.asked.is_some() && self.answer.is_none() {
                        self.answer =
                            Some(Err(SessionError::PreviewStopped("its thread ended".into())));
                    }
                    // Asked again (by a new worker) with the next frame.
                    self.incomes_asked = None;
                    self.hint_asked = None;
                    return;
                }
            }
        }
    }

    /// The move last asked about and its preview (or why it is refused), once the
    /// worker has answered.
    #[must_use]
    pub fn shown(&self) -> Option<(Move, &Result<Preview, SessionError>)> {
        let (_, question, _) = self.asked.as_ref()?;
        Some((question.mv, self.answer.as_ref()?))
    }

    /// How long the worker has been on the question last asked, while it has not
    /// answered.
    #[must_use]
    pub fn pending(&self) -> Option<Duration> {
        match (&self.asked, &self.answer) {
            (Some((_, _, since)), None) => Some(since.elapsed()),
            _ => None,
        }
    }

    /// Send `job` to the worker, starting it first when there is none.
    fn send(&mut self, job: Job) {
        let job = match &self.worker {
            Some(worker) => match worker.jobs.send(job) {
                Ok(()) => return,
                // The worker is gone: a new one takes the job.
                Err(mpsc::SendError(job)) => job,
            },
            None => job,
        };
        let (jobs, inbox) = mpsc::channel();
        let (outbox, answers) = mpsc::channel();
        let started = crate::script::threads::spawn("tokensmith-preview", move || {
            work(&inbox, &outbox);
        });
        match started {
            Ok(_) => {
                // The receiver lives in the thread just started: the send cannot fail.
                let _ = jobs.send(job);
                self.worker = Some(Worker { jobs, answers });
            }
            Err(e) => {
                self.worker = None;
                match job {
                    Job::Ask(..) => {
                        self.answer = Some(Err(SessionError::PreviewStopped(format!(
                            "cannot start its thread: {e}"
                        ))));
                    }
                    // No hint to show, and none owed.
                    Job::Hint(..) => self.hint = Some(Vec::new()),
                    Job::Incomes(..) | Job::Warm(_) => {}
                }
            }
        }
    }
}

/// The worker: answer the newest question waiting, until the screen is gone.
fn work(inbox: &Receiver<Job>, outbox: &Sender<Answer>) {
    while let Ok(first) = inbox.recv() {
        // The pointer may have moved on meanwhile: only the newest question of each kind
        // matters (and a question warms its content's scripts too).
        let (mut ask, mut incomes, mut hint, mut warm) = (None, None, None, None);
        for job in std::iter::once(first).chain(inbox.try_iter()) {
            match job {
                Job::Ask(n, q) => ask = Some((n, q)),
                Job::Incomes(n, catalog, state) => incomes = Some((n, catalog, state)),
                Job::Hint(n, q) => hint = Some((n, q)),
                Job::Warm(catalog) => warm = Some(catalog),
            }
        }
        // The incomes first: the board shows them at once, a preview only when hovered.
        if let Some((n, catalog, state)) = incomes {
            let scripts = crate::ai::hooks_for(&catalog);
            let engine = Engine::new(&catalog, scripts.hooks());
            let answer = Answer::Incomes(n, engine.incomes(&state).unwrap_or([0, 0]));
            if outbox.send(answer).is_err() {
                // The screen is gone.
                return;
            }
        }
        if let Some((n, q)) = ask {
            let scripts = crate::ai::hooks_for(&q.catalog);
            let engine = Engine::new(&q.catalog, scripts.hooks());
            let answer = Answer::Preview(n, Box::new(preview::preview(&engine, &q.state, q.mv)));
            if outbox.send(answer).is_err() {
                return;
            }
        } else if let Some(catalog) = warm {
            // The script host stays in this thread's cache for the questions to come.
            let _ = crate::ai::hooks_for(&catalog);
        }
        // The hint last: it plays many moves, and the pointer's preview goes first.
        if let Some((n, q)) = hint {
            let scripts = crate::ai::hooks_for(&q.catalog);
            let brain = scripts.brain(&q.catalog);
            let rated = preview::hint(&brain, &q.base, q.seat, &q.cards, q.k);
            if outbox.send(Answer::Hint(n, rated)).is_err() {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{Cell, Play};

    fn game(catalog: &Catalog) -> GameState {
        let deck = &catalog.decks()[0].stacks;
        let engine = Engine::new(catalog, &crate::rules::NoHooks);
        engine
            .new_game([deck, deck], 3, &mut Vec::new())
            .unwrap_or_else(|e| panic!("{e}"))
    }

    fn answered(previews: &mut Previews) -> (Move, Result<Preview, String>) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            previews.poll();
            if let Some((mv, result)) = previews.shown() {
                return (mv, result.as_ref().cloned().map_err(ToString::to_string));
            }
            assert!(Instant::now() < deadline, "no answer");
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    fn at(state: &GameState, cell: Cell) -> Move {
        Move {
            seat: state.turn(),
            play: Play::Stack(0),
            cell,
        }
    }

    #[test]
    fn the_answer_is_the_preview_worked_out_here() {
        let catalog = Arc::new(crate::content::base_for_tests());
        let state = game(&catalog);
        let scripts = crate::ai::hooks_for(&catalog);
        let engine = Engine::new(&catalog, scripts.hooks());
        let mut previews = Previews::default();
        previews.warm(&catalog);
        for cell in state.board().empty_cells().take(6) {
            let mv = at(&state, cell);
            previews.ask(&catalog, &state, mv);
            let (asked, answer) = answered(&mut previews);
            assert_eq!(asked, mv);
            let here = preview::preview(&engine, &state, mv).map_err(|e| e.to_string());
            assert_eq!(answer, here);
        }
    }

    #[test]
    fn a_scripted_pack_s_previews_are_answered_exactly() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let loaded = crate::script::load(&crate::content::LoadOptions {
            only: Some(vec!["base".into(), "example_scripted".into()]),
            ..crate::content::LoadOptions::standard(&root.join("content"), &root.join("mods"))
        });
        let Some(catalog) = loaded.catalog.map(Arc::new) else {
            panic!("{:?}", loaded.diagnostics)
        };
        assert!(!catalog.scripts().is_empty(), "the pack has scripts");
        // The showcase deck: each stack's top card is scripted (an ability's hooks or its
        // token type's).
        let deck = catalog
            .decks()
            .iter()
            .find(|d| d.meta.name == "Scripted Showcase")
            .unwrap_or_else(|| panic!("the showcase deck"));
        let engine = Engine::new(&catalog, &crate::rules::NoHooks);
        let state = engine
            .new_game([&deck.stacks, &deck.stacks], 5, &mut Vec::new())
            .unwrap_or_else(|e| panic!("{e}"));
        let scripts = crate::ai::hooks_for(&catalog);
        let engine = Engine::new(&catalog, scripts.hooks());
        let mut previews = Previews::default();
        let cells: Vec<Cell> = state.board().empty_cells().step_by(5).take(4).collect();
        for stack in 0..deck.stacks.len() {
            for &cell in &cells {
                let mv = Move {
                    seat: state.turn(),
                    play: Play::Stack(u8::try_from(stack).unwrap_or_default()),
                    cell,
                };
                previews.ask(&catalog, &state, mv);
                let (_, answer) = answered(&mut previews);
                let here = preview::preview(&engine, &state, mv).map_err(|e| e.to_string());
                assert_eq!(answer, here, "{mv:?}");
            }
        }
    }

    #[test]
    fn the_hint_is_the_one_worked_out_here_and_only_the_last_asked_is_shown() {
        let catalog = Arc::new(crate::content::base_for_tests());
        let state = game(&catalog);
        let seat = state.turn();
        let cards: Vec<CardId> = state.seat(seat).hand().map(|(_, c)| c).collect();
        let scripts = crate::ai::hooks_for(&catalog);
        let brain = scripts.brain(&catalog);
        let here = preview::hint(&brain, &state, seat, &cards, 5);
        assert_eq!(here.len(), 5, "five moves ranked");
        let mut previews = Previews::default();
        // An older question first: only the last one's answer shows.
        previews.hint(&catalog, &state, seat, &cards[..1], 3);
        assert!(previews.hint(&catalog, &state, seat, &cards, 5).is_none());
        let deadline = Instant::now() + Duration::from_secs(30);
        while previews.hint_pending().is_some() {
            assert!(Instant::now() < deadline, "no hint");
            std::thread::sleep(Duration::from_millis(1));
            previews.poll();
        }
        let shown = previews
            .hint(&catalog, &state, seat, &cards, 5)
            .map(<[Rated]>::to_vec);
        assert_eq!(
            shown,
            Some(here),
            "the worker's hint is the one worked out here"
        );
        // Cleared: nothing shows, and the same question is asked anew.
        previews.clear_hint();
        assert!(previews.hint_pending().is_none());
        assert!(previews.hint(&catalog, &state, seat, &cards, 5).is_none());
        assert!(previews.hint_pending().is_some());
    }

    #[test]
    fn incomes_are_read_on_the_worker_and_the_last_read_shows_until_the_new_come() {
        let catalog = Arc::new(crate::content::base_for_tests());
        let first = game(&catalog);
        let engine = Engine::new(&catalog, &crate::rules::NoHooks);
        let mut second = first.clone();
        let cell = first.board().empty_cells().next().unwrap_or_default();
        engine
            .play(&mut second, at(&first, cell), &mut Vec::new())
            .unwrap_or_else(|e| panic!("{e}"));
        let want = |s: &GameState| engine.incomes(s).unwrap_or_else(|e| panic!("{e}"));
        let mut previews = Previews::default();
        let read = |previews: &mut Previews, state: &GameState| {
            let deadline = Instant::now() + Duration::from_secs(30);
            loop {
                let known = previews.incomes(&catalog, state);
                if !previews.busy() {
                    return known;
                }
                assert!(Instant::now() < deadline, "no incomes");
                std::thread::sleep(Duration::from_millis(1));
                previews.poll();
            }
        };
        assert_eq!(previews.incomes(&catalog, &first), None, "none read yet");
        assert_eq!(read(&mut previews, &first), Some(want(&first)));
        // A new board: the last incomes read show until its own come.
        assert_eq!(previews.incomes(&catalog, &second), Some(want(&first)));
        assert!(previews.busy());
        assert_eq!(read(&mut previews, &second), Some(want(&second)));
        assert_ne!(want(&first), want(&second), "the move changed the incomes");
    }

    #[test]
    fn only_the_last_question_is_answered_and_a_cleared_one_shows_nothing() {
        let catalog = Arc::new(crate::content::base_for_tests());
        let state = game(&catalog);
        let cells: Vec<Cell> = state.board().empty_cells().take(5).collect();
        let mut previews = Previews::default();
        for &cell in &cells {
            previews.ask(&catalog, &state, at(&state, cell));
        }
        let last = at(&state, cells[cells.len() - 1]);
        assert!(previews.pending().is_some());
        let (mv, answer) = answered(&mut previews);
        assert_eq!(mv, last, "the answer shown is the last question's");
        assert_eq!(answer.map(|p| p.mv).ok(), Some(last));
        // Asking the same again changes nothing; another state is a new question.
        previews.ask(&catalog, &state, last);
        assert!(previews.pending().is_none() && previews.shown().is_some());
        previews.clear();
        assert!(previews.shown().is_none() && previews.pending().is_none());
        // A question asked and cleared before its answer came: its answer is dropped.
        previews.ask(&catalog, &state, at(&state, cells[0]));
        previews.clear();
        std::thread::sleep(Duration::from_millis(50));
        previews.poll();
        assert!(previews.shown().is_none());
    }
}
