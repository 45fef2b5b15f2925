//! The board: fixed-size cell storage, so that cloning a game state is one `memcpy`.
//!
//! Cells are stored as parallel arrays (value, type, card, seat) plus a bitset of the
//! occupied cells. Walking the tokens visits only tokens, "is the board full" is a
//! population count, and income is a branch-free pass over the values.
//!
//! Every change of a cell keeps the board's caches current: each seat's base income (the sum
//! of `token_income(value, 0, multiplier)`, the same function both income passes use), and
//! bitsets of each seat's tokens and of the tokens with an aura, a turret, a script or an
//! income multiplier. After the catalog a game is played with is swapped, `rebind` makes
//! them again.

use super::catalog::Catalog;
pub(crate) use super::ids::WORDS;
use super::ids::{Bounds, CardId, Cell, MAX_CELLS, Seat, TokenTypeId};
use super::never::never;

/// A token on the board.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Token {
    /// Its value (income before auras and multiplier).
    pub value: i32,
    /// Its type.
    pub kind: TokenTypeId,
    /// The card that placed it, if a card did.
    pub card: Option<CardId>,
    /// Its owner.
    pub seat: Seat,
}

/// The stored card of a token no card placed.
const NO_CARD: u16 = u16::MAX;

/// A rectangular board of at most [`MAX_CELLS`] cells.
///
/// Invariants: a cell is occupied exactly when its bit is set; an empty cell has value 0
/// and seat 0, and storage past `width × height` is never written. `base` is each seat's
/// `Σ value × multiplier` and `auras` the cells whose token type has an aura, both kept up
/// to date by every change (which is why the mutators take the catalog) and rebuilt by
/// [`Board::rebind`] when the catalog changes.
#[derive(PartialEq, Eq, Hash)]
pub struct Board {
    width: u8,
    height: u8,
    occupied: [u64; WORDS],
    auras: [u64; WORDS],
    turrets: [u64; WORDS],
    scripted: [u64; WORDS],
    /// Each seat's tokens (seat 1, seat 2).
    seats: [[u64; WORDS]; 2],
    /// Tokens whose type's income multiplier is not 1.
    scaled: [u64; WORDS],
    base: [i64; 2],
    value: [i32; MAX_CELLS],
    kind: [u16; MAX_CELLS],
    card: [u16; MAX_CELLS],
    seat: [u8; MAX_CELLS],
}

/// The set bits of an occupancy bitset, lowest first.
#[derive(Clone)]
struct Bits {
    words: [u64; WORDS],
    word: usize,
}

impl Iterator for Bits {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        while self.word < WORDS {
            let w = &mut self.words[self.word];
            if *w != 0 {
                let bit = w.trailing_zeros() as usize;
                *w &= *w - 1;
                return Some(self.word * 64 + bit);
            }
            self.word += 1;
        }
        None
    }
}

impl Clone for Board {
    fn clone(&self) -> Board {
        Board {
            width: self.width,
            height: self.height,
            occupied: self.occupied,
            auras: self.auras,
            turrets: self.turrets,
            scripted: self.scripted,
            seats: self.seats,
            scaled: self.scaled,
            base: self.base,
            value: self.value,
            kind: self.kind,
            card: self.card,
            seat: self.seat,
        }
    }

    /// Copies only the cells in use: what the AI does hundreds of thousands of times a
    /// second into a reused scratch board.
    fn clone_from(&mut self, source: &Board) {
        let n = self.len().max(source.len());
        self.width = source.width;
        self.height = source.height;
        self.occupied = source.occupied;
        self.auras = source.auras;
        self.turrets = source.turrets;
        self.scripted = source.scripted;
        self.seats = source.seats;
        self.scaled = source.scaled;
        self.base = source.base;
        self.value[..n].copy_from_slice(&source.value[..n]);
        self.kind[..n].copy_from_slice(&source.kind[..n]);
        self.card[..n].copy_from_slice(&source.card[..n]);
        self.seat[..n].copy_from_slice(&source.seat[..n]);
    }
}

impl std::fmt::Debug for Board {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Board")
            .field("width", &self.width)
            .field("height", &self.height)
            .field("tokens", &self.tokens().collect::<Vec<_>>())
            .finish()
    }
}

impl Board {
    /// An empty board. The caller (the loader) keeps `width × height ≤ MAX_CELLS`;
    /// a larger request is clamped.
    #[must_use]
    pub fn new(width: u8, height: u8) -> Board {
        let bounds = Bounds::clamped(width, height);
        // `clamped` keeps both sides within 1..=MAX_CELLS, which fits a u8.
        let side = |v: i32| u8::try_from(v).unwrap_or_else(|_| never!(1, "board side {v}"));
        Board {
            width: side(bounds.width),
            height: side(bounds.height),
            occupied: [0; WORDS],
            auras: [0; WORDS],
            turrets: [0; WORDS],
            scripted: [0; WORDS],
            seats: [[0; WORDS]; 2],
            scaled: [0; WORDS],
            base: [0; 2],
            value: [0; MAX_CELLS],
            kind: [0; MAX_CELLS],
            card: [NO_CARD; MAX_CELLS],
            seat: [0; MAX_CELLS],
        }
    }

    /// Width in cells.
    #[must_use]
    pub fn width(&self) -> i32 {
        i32::from(self.width)
    }

    /// Height in cells.
    #[must_use]
    pub fn height(&self) -> i32 {
        i32::from(self.height)
    }

    /// Number of cells.
    #[must_use]
    pub fn len(&self) -> usize {
        usize::from(self.width) * usize::from(self.height)
    }

    /// Whether the board has no cells (never true for a real board).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether `cell` is on the board.
    #[must_use]
    pub fn contains(&self, cell: Cell) -> bool {
        self.bounds().contains(cell)
    }

    /// The board's size, as a value that does not borrow the board.
    #[inline]
    #[must_use]
    pub fn bounds(&self) -> Bounds {
        Bounds {
            width: self.width(),
            height: self.height(),
        }
    }

    /// The storage index of `cell`, if it is on the board.
    #[inline]
    #[must_use]
    pub fn index(&self, cell: Cell) -> Option<usize> {
        self.bounds().index(cell)
    }

    /// The cell at storage index `index`.
    #[must_use]
    pub fn cell(&self, index: usize) -> Cell {
        self.bounds().cell(index)
    }

    /// Whether a token stands at storage index `index`.
    #[inline]
    pub(crate) fn is_occupied(&self, index: usize) -> bool {
        index < MAX_CELLS && self.occupied[index / 64] & (1 << (index % 64)) != 0
    }

    /// The token on `cell`, if any (none off the board).
    #[must_use]
    pub fn get(&self, cell: Cell) -> Option<Token> {
        self.index(cell).and_then(|i| self.at(i))
    }

    /// The token at storage index `index`.
    #[inline]
    #[must_use]
    pub fn at(&self, index: usize) -> Option<Token> {
        if !self.is_occupied(index) {
            return None;
        }
        let seat = if self.seat[index] == 2 {
            Seat::Two
        } else {
            Seat::One
        };
        let card = self.card[index];
        Some(Token {
            value: self.value[index],
            kind: TokenTypeId(self.kind[index]),
            card: (card != NO_CARD).then_some(CardId(card)),
            seat,
        })
    }

    /// Add (`sign` 1) or remove (`sign` -1) the token at `index` from the cached sums.
    fn account(&mut self, index: usize, sign: i64, catalog: &Catalog) {
        let kind = catalog.kind(TokenTypeId(self.kind[index]));
        let income = sign * token_income(self.value[index], 0, kind.multiplier);
        match self.seat[index] {
            1 => self.base[0] += income,
            2 => self.base[1] += income,
            _ => {}
        }
        let (word, mask) = (index / 64, 1u64 << (index % 64));
        let [one, two] = &mut self.seats;
        for (set, has) in [
            (&mut self.auras, kind.aura),
            (&mut self.turrets, kind.turret),
            (&mut self.scripted, kind.script),
            (&mut self.scaled, kind.multiplier != 1),
            (one, self.seat[index] == 1),
            (two, self.seat[index] == 2),
        ] {
            if sign > 0 && has {
                set[word] |= mask;
            } else {
                set[word] &= !mask;
            }
        }
    }

    /// Set the value of the token at `index` (no-op on an empty cell).
    pub(crate) fn set_value(&mut self, index: usize, value: i32, catalog: &Catalog) {
        if self.is_occupied(index) {
            let multiplier = catalog.kind(TokenTypeId(self.kind[index])).multiplier;
            let change =
                token_income(value, 0, multiplier) - token_income(self.value[index], 0, multiplier);
            match self.seat[index] {
                1 => self.base[0] += change,
                2 => self.base[1] += change,
                _ => {}
            }
            self.value[index] = value;
        }
    }

    /// Set the type of the token at `index` (no-op on an empty cell).
    pub(crate) fn set_kind(&mut self, index: usize, kind: TokenTypeId, catalog: &Catalog) {
        if self.is_occupied(index) {
            self.account(index, -1, catalog);
            self.kind[index] = kind.0;
            self.account(index, 1, catalog);
        }
    }

    pub(crate) fn put(&mut self, index: usize, token: Option<Token>, catalog: &Catalog) {
        if index >= MAX_CELLS {
            return;
        }
        if self.is_occupied(index) {
            self.account(index, -1, catalog);
        }
        let mask = 1u64 << (index % 64);
        let word = &mut self.occupied[index / 64];
        match token {
            Some(t) => {
                *word |= mask;
                self.value[index] = t.value;
                self.kind[index] = t.kind.0;
                self.card[index] = t.card.map_or(NO_CARD, |c| c.0);
                self.seat[index] = t.seat.number();
                self.account(index, 1, catalog);
            }
            None => {
                *word &= !mask;
                self.value[index] = 0;
                self.kind[index] = 0;
                self.card[index] = NO_CARD;
                self.seat[index] = 0;
            }
        }
    }

    pub(crate) fn take(&mut self, index: usize, catalog: &Catalog) -> Option<Token> {
        let token = self.at(index);
        if token.is_some() {
            self.put(index, None, catalog);
        }
        token
    }

    /// Recompute the cached income sums and aura cells for `catalog` (after the catalog
    /// a game is played with has changed, e.g. on a live reload).
    pub fn rebind(&mut self, catalog: &Catalog) {
        self.base = [0; 2];
        self.auras = [0; WORDS];
        self.turrets = [0; WORDS];
        self.scripted = [0; WORDS];
        self.seats = [[0; WORDS]; 2];
        self.scaled = [0; WORDS];
        for index in self.occupied() {
            self.account(index, 1, catalog);
        }
    }

    /// Each seat's `Σ value × multiplier`: income before auras and hooks.
    #[must_use]
    pub fn base_income(&self) -> [i64; 2] {
        self.base
    }

    /// The cells of `seat`'s tokens, as a bitset of storage indices.
    pub(crate) fn seat_bits(&self, seat: Seat) -> &[u64; WORDS] {
        &self.seats[seat.index()]
    }

    /// The cells of tokens whose income multiplier is not 1, as a bitset.
    pub(crate) fn scaled_bits(&self) -> &[u64; WORDS] {
        &self.scaled
    }

    /// The storage indices of tokens whose type has an aura.
    pub(crate) fn aura_cells(&self) -> impl Iterator<Item = usize> + use<> {
        Bits {
            words: self.auras,
            word: 0,
        }
    }

    /// The storage indices of tokens whose type fires between turns.
    pub(crate) fn turret_cells(&self) -> impl Iterator<Item = usize> + use<> {
        Bits {
            words: self.turrets,
            word: 0,
        }
    }

    /// Whether a token whose type has a script stands on the board.
    #[inline]
    pub(crate) fn has_scripted(&self) -> bool {
        self.scripted.iter().any(|&w| w != 0)
    }

    /// The storage indices of tokens whose type has a script.
    pub(crate) fn scripted_cells(&self) -> impl Iterator<Item = usize> + use<> {
        Bits {
            words: self.scripted,
            word: 0,
        }
    }

    /// Every token with its cell, row by row from the top left.
    pub fn tokens(&self) -> impl Iterator<Item = (Cell, Token)> + '_ {
        self.indexed().map(|(i, t)| (self.cell(i), t))
    }

    /// Every token with its storage index, row by row.
    pub fn indexed(&self) -> impl Iterator<Item = (usize, Token)> + '_ {
        Bits {
            words: self.occupied,
            word: 0,
        }
        .filter_map(|i| self.at(i).map(|t| (i, t)))
    }

    /// The storage indices of the occupied cells, in order.
    pub(crate) fn occupied(&self) -> impl Iterator<Item = usize> + use<> {
        Bits {
            words: self.occupied,
            word: 0,
        }
    }

    /// The raw type and seat number of the token at an occupied `index`.
    #[inline]
    pub(crate) fn kind_seat(&self, index: usize) -> (u16, u8) {
        (self.kind[index], self.seat[index])
    }

    /// The type and seat of the token at `index`, without building the whole token (the
    /// income pass reads only these).
    #[inline]
    pub(crate) fn occupant(&self, index: usize) -> Option<(TokenTypeId, Seat)> {
        let seat = match self.seat[index] {
            1 => Seat::One,
            2 => Seat::Two,
            _ => return None,
        };
        Some((TokenTypeId(self.kind[index]), seat))
    }

    /// Number of tokens on the board.
    #[must_use]
    pub fn token_count(&self) -> usize {
        self.occupied.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Every empty cell, row by row.
    pub fn empty_cells(&self) -> impl Iterator<Item = Cell> + '_ {
        let len = self.len();
        let mut words = [0u64; WORDS];
        for (i, w) in words.iter_mut().enumerate() {
            let start = i * 64;
            let valid = match len.saturating_sub(start) {
                0 => 0,
                n if n >= 64 => u64::MAX,
                n => (1u64 << n) - 1,
            };
            *w = !self.occupied[i] & valid;
        }
        Bits { words, word: 0 }.map(|i| self.cell(i))
    }

    /// Number of empty cells.
    #[must_use]
    pub fn empty_count(&self) -> usize {
        self.len() - self.token_count()
    }

    /// Whether no cell is empty.
    #[must_use]
    pub fn is_full(&self) -> bool {
        self.token_count() == self.len()
    }
}

/// One token's income before its hook: `(value + aura bonus) × its type's multiplier`.
/// Content bounds every factor (values fit in `i32`, bonuses are at most the board's cells
/// × 1,000,000, multipliers within ±100), so the product and any board's sum of them stay
/// far below [`MAX_SCORE`](super::effects::MAX_SCORE): only a hook's answer can reach the
/// clamp in the engine's sums.
pub(crate) fn token_income(value: i32, bonus: i64, multiplier: i32) -> i64 {
    (i64::from(value) + bonus) * i64::from(multiplier)
}

/// The set bits of a bitset of storage indices, lowest first.
pub(crate) fn bits(words: [u64; WORDS]) -> impl Iterator<Item = usize> {
    Bits { words, word: 0 }
}
