//! The game state: board, stacks, scores, turn, banked extra turns and bonuses, and the
//! seeded random generator. Small and `Clone`: the AI copies it for every simulated move.

use rand::SeedableRng;
use rand_pcg::Pcg32;

use super::board::{Board, Token};
use super::catalog::Catalog;
use super::defs::{MAX_STACK_CARDS, MAX_STACKS};
use super::ids::{CardId, Cell, Seat};
use super::never::never;

/// One stack of cards. The top card is in the hand; playing it sends it to the bottom.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Stack {
    cards: [CardId; MAX_STACK_CARDS],
    len: u8,
    top: u8,
}

impl Stack {
    /// A stack of these cards, top first (at most [`MAX_STACK_CARDS`] are kept).
    #[must_use]
    pub fn new(cards: &[CardId]) -> Stack {
        let mut stack = Stack {
            cards: [CardId(0); MAX_STACK_CARDS],
            len: 0,
            top: 0,
        };
        for (slot, &card) in stack.cards.iter_mut().zip(cards) {
            *slot = card;
            stack.len += 1;
        }
        stack
    }

    /// The top card (the one in the hand), if the stack has any card.
    #[must_use]
    pub fn top(&self) -> Option<CardId> {
        (self.len > 0).then(|| self.cards[usize::from(self.top)])
    }

    /// Number of cards.
    #[must_use]
    pub fn len(&self) -> usize {
        usize::from(self.len)
    }

    /// Whether the stack holds no card.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The cards in their current order, top first.
    pub fn cards(&self) -> impl Iterator<Item = CardId> + '_ {
        let len = usize::from(self.len);
        (0..len).map(move |i| self.cards[(usize::from(self.top) + i) % len])
    }

    /// Send the top card to the bottom.
    pub(crate) fn cycle(&mut self) {
        if self.len > 0 {
            self.top = (self.top + 1) % self.len;
        }
    }
}

/// What one seat has: its stacks, score, banked extra turns and next-token bonus.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SeatState {
    stacks: [Stack; MAX_STACKS],
    stack_count: u8,
    /// The seat's score.
    pub score: i64,
    /// Extra turns banked and not yet used.
    pub extra_turns: u8,
    /// Value added to the seat's next placed token.
    pub bonus: i32,
}

impl SeatState {
    pub(crate) fn new(stacks: &[Vec<CardId>]) -> SeatState {
        let mut seat = SeatState {
            stacks: [Stack::new(&[]); MAX_STACKS],
            stack_count: 0,
            score: 0,
            extra_turns: 0,
            bonus: 0,
        };
        for (slot, cards) in seat.stacks.iter_mut().zip(stacks) {
            *slot = Stack::new(cards);
            seat.stack_count += 1;
        }
        seat
    }

    /// Become a copy of `source`, copying only the stacks either seat state uses: the
    /// AI does this for every simulated move, and most decks use half the stack slots.
    #[inline]
    fn copy_from(&mut self, source: &SeatState) {
        let n = usize::from(self.stack_count.max(source.stack_count)).min(MAX_STACKS);
        for (to, from) in self.stacks[..n].iter_mut().zip(&source.stacks[..n]) {
            *to = *from;
        }
        self.stack_count = source.stack_count;
        self.score = source.score;
        self.extra_turns = source.extra_turns;
        self.bonus = source.bonus;
    }

    /// The seat's stacks.
    #[must_use]
    pub fn stacks(&self) -> &[Stack] {
        &self.stacks[..usize::from(self.stack_count)]
    }

    /// The seat's stacks as card lists, each top card first: what
    /// [`GameState::set_stacks`] takes.
    #[must_use]
    pub fn stack_cards(&self) -> Vec<Vec<CardId>> {
        self.stacks().iter().map(|s| s.cards().collect()).collect()
    }

    pub(crate) fn stack_mut(&mut self, index: usize) -> Option<&mut Stack> {
        self.stacks[..usize::from(self.stack_count)].get_mut(index)
    }

    /// The hand: the top card of each stack, by stack index.
    pub fn hand(&self) -> impl Iterator<Item = (u8, CardId)> + '_ {
        self.stacks()
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.top().map(|c| (stack_index(i), c)))
    }

    /// The stack whose top card is `card`, if the card is in the hand.
    #[must_use]
    pub fn stack_of(&self, card: CardId) -> Option<u8> {
        self.hand().find(|&(_, c)| c == card).map(|(i, _)| i)
    }
}

/// How a finished game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Outcome {
    /// The winner, or `None` for a draw.
    pub winner: Option<Seat>,
}

/// The whole state of one game. It does not hold the catalog: every operation takes it.
#[derive(Debug, PartialEq, Eq)]
pub struct GameState {
    pub(crate) board: Board,
    pub(crate) seats: [SeatState; 2],
    pub(crate) turn: Seat,
    pub(crate) last_placed: Option<u8>,
    pub(crate) prev_placed: Option<u8>,
    pub(crate) outcome: Option<Outcome>,
    pub(crate) moves: u32,
    pub(crate) rng: Pcg32,
}

impl Clone for GameState {
    fn clone(&self) -> GameState {
        GameState {
            board: self.board.clone(),
            seats: self.seats,
            turn: self.turn,
            last_placed: self.last_placed,
            prev_placed: self.prev_placed,
            outcome: self.outcome,
            moves: self.moves,
            rng: self.rng.clone(),
        }
    }

    /// Copies only the board cells in use (see `Board::clone_from`).
    fn clone_from(&mut self, source: &GameState) {
        self.board.clone_from(&source.board);
        for (to, from) in self.seats.iter_mut().zip(&source.seats) {
            to.copy_from(from);
        }
        self.turn = source.turn;
        self.last_placed = source.last_placed;
        self.prev_placed = source.prev_placed;
        self.outcome = source.outcome;
        self.moves = source.moves;
        self.rng.clone_from(&source.rng);
    }
}

impl GameState {
    pub(crate) fn new(catalog: &Catalog, decks: [&[Vec<CardId>]; 2], seed: u64) -> GameState {
        GameState {
            board: Board::new(catalog.rules().width, catalog.rules().height),
            seats: [SeatState::new(decks[0]), SeatState::new(decks[1])],
            turn: Seat::One,
            last_placed: None,
            prev_placed: None,
            outcome: None,
            moves: 0,
            rng: Pcg32::seed_from_u64(seed),
        }
    }

    /// The board.
    #[must_use]
    pub fn board(&self) -> &Board {
        &self.board
    }

    /// One seat's stacks, score, extra turns and bonus.
    #[must_use]
    pub fn seat(&self, seat: Seat) -> &SeatState {
        &self.seats[seat.index()]
    }

    /// The seat to move.
    #[must_use]
    pub fn turn(&self) -> Seat {
        self.turn
    }

    /// A seat's score.
    #[must_use]
    pub fn score(&self, seat: Seat) -> i64 {
        self.seats[seat.index()].score
    }

    /// How the game ended, once it has.
    #[must_use]
    pub fn outcome(&self) -> Option<Outcome> {
        self.outcome
    }

    /// Whether the game is over.
    #[must_use]
    pub fn is_over(&self) -> bool {
        self.outcome.is_some()
    }

    /// Moves played so far.
    #[must_use]
    pub fn moves_played(&self) -> u32 {
        self.moves
    }

    /// The cell of the last placed token, if it is still on the board.
    #[must_use]
    pub fn last_placed(&self) -> Option<Cell> {
        self.last_placed.map(|i| self.board.cell(usize::from(i)))
    }

    /// Setup (scenarios, the sandbox): put a token on a cell, replacing what was there.
    /// Returns false when the cell is off the board.
    pub fn set_token(&mut self, catalog: &Catalog, cell: Cell, token: Option<Token>) -> bool {
        match self.board.index(cell) {
            Some(i) => {
                self.board.put(i, token, catalog);
                true
            }
            None => false,
        }
    }

    /// Recompute what the board caches from the catalog, after the catalog this game is
    /// played with has changed (a live reload). Nothing else in the state depends on it.
    pub fn rebind(&mut self, catalog: &Catalog) {
        self.board.rebind(catalog);
    }

    /// Setup (and the AI's determinizations): replace a seat's stacks, each top card first.
    pub fn set_stacks(&mut self, seat: Seat, stacks: &[Vec<CardId>]) {
        let keep = self.seats[seat.index()];
        let mut fresh = SeatState::new(stacks);
        fresh.score = keep.score;
        fresh.extra_turns = keep.extra_turns;
        fresh.bonus = keep.bonus;
        self.seats[seat.index()] = fresh;
    }

    /// Give the game's random generator a new seed: an observer's copy must not foresee
    /// the real game's draws.
    pub fn reseed(&mut self, seed: u64) {
        self.rng = Pcg32::seed_from_u64(seed);
    }

    /// Setup: set a seat's score.
    pub fn set_score(&mut self, seat: Seat, score: i64) {
        self.seats[seat.index()].score = score;
    }

    /// Setup (the sandbox's position editor): set a seat's banked extra turns.
    pub fn set_extra_turns(&mut self, seat: Seat, banked: u8) {
        self.seats[seat.index()].extra_turns = banked;
    }

    /// Setup: set the seat to move.
    pub fn set_turn(&mut self, seat: Seat) {
        self.turn = seat;
    }

    /// A state rebuilt from its public parts — what a network game's client is shown —
    /// for display and for its own look-ahead: tokens off the board or on a taken cell
    /// are skipped. Its random generator is not the real game's.
    #[must_use]
    pub fn restored(catalog: &Catalog, parts: &Restored) -> GameState {
        let mut state = GameState::new(catalog, [&parts.stacks[0], &parts.stacks[1]], 0);
        for &(cell, token) in &parts.tokens {
            if let Some(i) = state.board.index(cell)
                && state.board.at(i).is_none()
            {
                state.board.put(i, Some(token), catalog);
            }
        }
        for seat in Seat::BOTH {
            let s = &mut state.seats[seat.index()];
            s.score = parts.scores[seat.index()];
            s.extra_turns = parts.extra_turns[seat.index()];
            s.bonus = parts.bonus[seat.index()];
        }
        state.turn = parts.turn;
        let index = |c: Option<Cell>| {
            c.and_then(|c| state.board.index(c))
                .and_then(|i| u8::try_from(i).ok())
        };
        state.last_placed = index(parts.last_placed);
        state.prev_placed = index(parts.prev_placed);
        state.moves = parts.moves;
        state.outcome = parts.outcome;
        state
    }

    /// The cell of the token placed before the last one, if it is still on the board.
    #[must_use]
    pub fn prev_placed(&self) -> Option<Cell> {
        self.prev_placed.map(|i| self.board.cell(usize::from(i)))
    }
}

/// The public parts of a game, from which [`GameState::restored`] rebuilds one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Restored {
    /// The tokens on the board.
    pub tokens: Vec<(Cell, Token)>,
    /// Each seat's stacks as known, each in its present order, top first (a hidden
    /// seat's are empty).
    pub stacks: [Vec<Vec<CardId>>; 2],
    /// Scores.
    pub scores: [i64; 2],
    /// Banked extra turns.
    pub extra_turns: [u8; 2],
    /// Next-token bonuses.
    pub bonus: [i32; 2],
    /// The seat to move.
    pub turn: Seat,
    /// The last placed token's cell.
    pub last_placed: Option<Cell>,
    /// The one placed before it.
    pub prev_placed: Option<Cell>,
    /// Moves played.
    pub moves: u32,
    /// How it ended, if it has.
    pub outcome: Option<Outcome>,
}

/// A read-only view of a game with its catalog: what income hooks and evaluators see.
#[derive(Clone, Copy, Debug)]
pub struct GameView<'a> {
    /// The game.
    pub state: &'a GameState,
    /// Its catalog.
    pub catalog: &'a Catalog,
}

/// A stack's index as the hand gives it: a seat has at most [`MAX_STACKS`] stacks.
fn stack_index(i: usize) -> u8 {
    u8::try_from(i).unwrap_or_else(|_| never!(u8::MAX, "stack {i} past {MAX_STACKS}"))
}
